/** `terminal_list {}` → `{ sessions: [snapshot…], hint? }`. */
import { z } from 'zod';
import type { PtySessionSnapshot } from '../harness/pty-service.js';
import { hintField, plainLine, renderSession, sentenceLine, textOf } from './render.js';
import { hintOutput, sessionSnapshotOutput, statusOutput } from './schemas.js';
import { defineTool } from './tool.js';

/** Lists the caller's sessions. */
export const terminalList = defineTool({
  name: 'terminal_list',
  title: 'List terminals',
  description:
    'List your open terminal sessions: sessionId, name, type, shell, pid, sandbox mode, and whether the shell ' +
    'is still running. Use it to find a sessionId again. With a daemon, terminals of earlier connections are listed too ' +
    "(attached: false): terminal_open with such a terminal's name takes it up again.",
  hints: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  input: z.strictObject({}),
  output: z.strictObject({ sessions: z.array(sessionSnapshotOutput), hint: hintOutput }),
  async run(_args, ctx) {
    const sessions = await ctx.pty.list(ctx.owner);
    const lines =
      sessions.length === 0
        ? [sentenceLine('No open terminal sessions. Start one with terminal_open.')]
        : sessions.map((session) => plainLine(renderSnapshot(session)));
    const json = sessions.map((session) => ({
      ...session,
      status: statusOutput(session.status),
      containment: session.status.containment,
    }));
    return { text: textOf(lines), json: { sessions: json, ...hintField(lines) } };
  },
});

function renderSnapshot(session: PtySessionSnapshot): string {
  const parts = [
    session.sessionId,
    ...(session.name === undefined ? [] : [`"${session.name}"`]),
    session.type,
    session.shell,
    ...(session.world === undefined ? [] : [`world ${session.world}`]),
    `pid ${session.pid}`,
    session.sandbox === undefined
      ? session.attached === undefined
        ? 'unconfined'
        : 'this connection’s sandbox'
      : `${session.sandbox.mode}${session.sandbox.mode === 'danger-full-access' ? ' (unconfined)' : ''}, workspace ${session.sandbox.workspaceRoot}`,
    `containment ${session.status.containment}`,
    renderSession(session.status),
    ...(session.closing ? ['(closing)'] : []),
    ...(session.attached === false
      ? [
          `(detached: reattach it with terminal_open {"name": ${JSON.stringify(session.name ?? session.sessionId)}})`,
        ]
      : session.elsewhere === true
        ? ['(held by another connection)']
        : []),
  ];
  return parts.join('  ');
}
