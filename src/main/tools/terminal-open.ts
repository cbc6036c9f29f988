/**
 * `terminal_open {type?, name?, cwd?, shell?, rows?, cols?, world?, record?}` → `{ sessionId, name?, type, shell,
 * world?, pid, status, containment, motd, hint? }`.
 */
import { z } from 'zod';
import { DIALECTS } from '../../shared/dialects.js';
import { MAX_TERMINAL_DIMENSION } from '../../shared/terminal-size.js';
import type { ReattachReport } from '../../shared/types.js';
import { DEFAULT_BACKEND_TYPE } from '../harness/plugins/pty-local.js';
import type { PtySpawnResult } from '../harness/pty-service.js';
import { hintField, plainLine, renderScreen, renderSession, sentenceLine, textOf } from './render.js';
import { capTail } from './result-cap.js';
import {
  containmentOutput,
  hintOutput,
  limitsOutput,
  sessionStatusOutput,
  shellOutput,
  statusOutput,
} from './schemas.js';
import { DEFAULT_MAX_RESULT_BYTES, defineTool } from './tool.js';

/** Longest accepted session name: a label, not a document. */
const MAX_NAME_LENGTH = 64;

/** An optional terminal dimension: a positive integer up to MAX_TERMINAL_DIMENSION. */
function terminalDimension(field: 'rows' | 'cols') {
  const rule = `must be a whole number from 1 to ${MAX_TERMINAL_DIMENSION}; omit ${field} for the default`;
  return z.number({ error: rule }).int(rule).min(1, rule).max(MAX_TERMINAL_DIMENSION, rule).optional();
}

/** Opens a persistent terminal session. */
export const terminalOpen = defineTool({
  name: 'terminal_open',
  title: 'Open terminal',
  description:
    'Open a persistent interactive terminal (a bash shell unless shell says otherwise) and get its sessionId. The shell keeps its ' +
    'state between calls (working directory, variables, running programs such as a python3 REPL), so ' +
    'open one and reuse it; open another only to run things side by side. It starts in the workspace ' +
    'root unless cwd is given, under the sandbox mode shown in the result. Output is what a person ' +
    'would see, as plain text: colors are stripped, progress bars show their final state, and ' +
    'full-screen programs (vim, nano, less, htop) come back as their rendered screen, driven with ' +
    'keys. Sandbox modes: read-only = nothing is writable but a private /tmp; workspace-write = the ' +
    'workspace too; danger-full-access = unconfined. Type into it with terminal_send; close it with ' +
    'terminal_close when done.',
  hints: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  input: z.strictObject({
    type: z
      .string({ error: 'must be a string; omit it to open a shell' })
      .min(1, 'must not be empty; omit it to open a shell')
      .optional()
      .describe(`Kind of terminal (default "${DEFAULT_BACKEND_TYPE}").`),
    name: z
      .string({ error: 'must be a string label' })
      .max(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`)
      .optional()
      .describe('Optional label shown by terminal_list, e.g. "dev-server".'),
    cwd: z
      .string({ error: 'must be a directory path string' })
      .min(1, 'must not be empty; omit it to start in the workspace root')
      .optional()
      .describe('Starting directory; relative paths resolve against the workspace root (default).'),
    shell: z
      .enum(DIALECTS, { error: `must be one of ${DIALECTS.join(', ')}; omit it for the server's default` })
      .optional()
      .describe(`Shell to run: ${DIALECTS.join(', ')} (default: the server's, usually bash).`),
    rows: terminalDimension('rows').describe("Terminal height in rows (default: the server's, usually 40)."),
    cols: terminalDimension('cols').describe(
      "Terminal width in columns (default: the server's, usually 160).",
    ),
    record: z
      .boolean({ error: 'must be true or false' })
      .optional()
      .describe(
        'Record this terminal as an asciicast file the user can replay (output only; default false).',
      ),
    world: z
      .string({ error: 'must be a world name string; omit it to use this machine' })
      .min(1, 'must not be empty; omit it to use this machine')
      .optional()
      .describe('Execution world to open the terminal in (default: this machine, "local").'),
  }),
  output: z.strictObject({
    sessionId: z.string(),
    name: z.string().optional(),
    type: z.string(),
    shell: shellOutput,
    world: z.string().optional(),
    pid: z.number().int(),
    status: sessionStatusOutput,
    containment: containmentOutput,
    limits: limitsOutput,
    motd: z.string(),
    reattached: z.literal(true).optional(),
    orphanedResult: z
      .strictObject({ output: z.string(), waitReason: z.string(), exitCode: z.number().int().optional() })
      .optional(),
    missedLines: z.number().int().optional(),
    hint: hintOutput,
  }),
  async run(args, ctx) {
    const opened = await ctx.pty.spawn(
      ctx.owner,
      {
        type: args.type ?? DEFAULT_BACKEND_TYPE,
        ...(args.name === undefined ? {} : { name: args.name }),
        ...(args.cwd === undefined ? {} : { cwd: args.cwd }),
        ...(args.shell === undefined ? {} : { shell: args.shell }),
        ...(args.world === undefined ? {} : { world: args.world }),
        ...(args.rows === undefined ? {} : { rows: args.rows }),
        ...(args.cols === undefined ? {} : { cols: args.cols }),
        ...(args.record === true ? { record: true } : {}),
        ...(ctx.maxSessions === undefined ? {} : { maxOwnerSessions: ctx.maxSessions }),
      },
      ctx.signal,
    );
    const where =
      opened.sandbox === undefined
        ? 'unconfined'
        : `sandbox ${opened.sandbox.mode}${opened.sandbox.mode === 'danger-full-access' ? ' (unconfined)' : ''}, workspace ${opened.sandbox.workspaceRoot}`;
    if (opened.reattached !== undefined) return reattachedResult(opened, where, ctx.maxResultBytes);
    const header = sentenceLine(
      `Opened terminal session ${opened.sessionId} (${opened.type}, ${opened.shell}${opened.world === undefined ? '' : ` in world ${opened.world}`}, pid ${opened.pid}, ${where}, containment ${opened.status.containment}). ` +
        `Use terminal_send with sessionId "${opened.sessionId}" to run commands.`,
    );
    const footer = plainLine(renderSession(opened.status));
    const budget =
      (ctx.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES) -
      Buffer.byteLength(`${header.text}\n\n${footer.text}`);
    const motd = capTail(opened.motd, budget).text;
    const lines = [header, ...(motd.trim() === '' ? [] : [plainLine(motd)]), footer];
    return {
      text: textOf(lines),
      json: {
        sessionId: opened.sessionId,
        ...(opened.name === undefined ? {} : { name: opened.name }),
        type: opened.type,
        shell: opened.shell,
        ...(opened.world === undefined ? {} : { world: opened.world }),
        pid: opened.pid,
        status: statusOutput(opened.status),
        containment: opened.status.containment,
        limits: opened.status.limits,
        motd,
        ...hintField(lines),
      },
    };
  },
});

/**
 * How many lines a reattach did not show, and of those how many `terminal_read` can still page back
 * to: the scrollback holds only its last lines (the shown ones among them), older ones are gone.
 */
function missedLinesText(report: ReattachReport, sessionId: string): string {
  const read = `terminal_read {"sessionId": "${sessionId}"}`;
  if (report.scrollbackLines === undefined) {
    return `${report.missedLines} earlier lines are not shown; page back with ${read}`;
  }
  const shown = report.lines === undefined || report.lines === '' ? 0 : report.lines.split('\n').length;
  const pageable = Math.min(report.missedLines, Math.max(0, report.scrollbackLines - shown));
  const gone = report.missedLines - pageable;
  return (
    `${report.missedLines} earlier lines are not shown; ${read} can page back through ${pageable} of them` +
    (gone > 0 ? `; the other ${gone} are gone (the scrollback holds ${report.scrollbackLines} lines)` : '')
  );
}

/**
 * The result of a `terminal_open` that took up an earlier connection's detached session (SPEC §12):
 * what it did meanwhile — the result of the send that was running when that connection went, then
 * the output since (or the screen) — and how many lines neither shows.
 */
function reattachedResult(opened: PtySpawnResult, where: string, maxResultBytes: number | undefined) {
  const report = opened.reattached!;
  const orphan = report.orphanedResult;
  const header = sentenceLine(
    `Reattached terminal session ${opened.sessionId} (${opened.name === undefined ? '' : `"${opened.name}", `}${opened.shell}, pid ${opened.pid}, ${where}): it kept running while no connection held it. ` +
      `Use terminal_send with sessionId "${opened.sessionId}" to go on.`,
  );
  const missed = report.missedLines > 0 ? [sentenceLine(missedLinesText(report, opened.sessionId))] : [];
  const orphanLines =
    orphan === undefined
      ? []
      : [
          plainLine(
            `[the send that was running when the previous connection closed settled: ${orphan.waitReason}${orphan.exitCode === undefined ? '' : `, exit ${orphan.exitCode}`}]`,
          ),
          ...(orphan.viewport === '' ? [] : [plainLine(orphan.viewport)]),
        ];
  const since =
    report.screen !== undefined ? renderScreen(report.screen) : report.lines ? [plainLine(report.lines)] : [];
  const footer = plainLine(renderSession(opened.status));
  const budget =
    (maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES) - Buffer.byteLength(`${header.text}\n\n${footer.text}`);
  const body = capTail(textOf([...orphanLines, ...since]), budget).text;
  const lines = [header, ...missed, ...(body.trim() === '' ? [] : [plainLine(body)]), footer];
  return {
    text: textOf(lines),
    json: {
      sessionId: opened.sessionId,
      ...(opened.name === undefined ? {} : { name: opened.name }),
      type: opened.type,
      shell: opened.shell,
      pid: opened.pid,
      status: statusOutput(opened.status),
      containment: opened.status.containment,
      limits: opened.status.limits,
      motd: capTail(
        report.screen !== undefined ? report.screen.lines.join('\n') : (report.lines ?? ''),
        budget,
      ).text,
      reattached: true as const,
      ...(orphan === undefined
        ? {}
        : {
            orphanedResult: {
              output: capTail(orphan.viewport, budget).text,
              waitReason: orphan.waitReason,
              ...(orphan.exitCode === undefined ? {} : { exitCode: orphan.exitCode }),
            },
          }),
      missedLines: report.missedLines,
      ...hintField(lines),
    },
  };
}
