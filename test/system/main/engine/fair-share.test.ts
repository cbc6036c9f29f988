/**
 * Fair share (SPEC §4.8): no session's work holds its engine thread so long that the heartbeat takes
 * the thread for wedged, so other sessions keep answering and nothing is killed. Issue 22's
 * observations 3 and 5 as tests (2, `waitFor`, is in wait-pattern.test.ts): one MCP connection's
 * terminals are bounded in number and size and may all redraw a maximal screen while a neighbour
 * answers; `engine.close()` of 500 sessions on 2 threads resolves cleanly. Behaviour, not time
 * (bench/limits.mjs has the times).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Host } from '../../../../dist/main/harness/host.js';
import { createLocalHost } from '../../../../dist/main/harness/local-host.js';
import { runTerminalTool } from '../../../../dist/main/tools/catalog.js';
import type { TerminalToolContext } from '../../../../dist/main/tools/tool.js';
import { type TerminalSession, testEngine } from '../../../support/engine.js';

/** A python program that redraws a full 500 × 500 screen on the alternate screen `frames` times. */
function drawScreens(frames: number): string {
  const program = [
    'import sys',
    'w = sys.stdout.write',
    "w('\\x1b[?1049h')",
    `for f in range(${frames}):`,
    "    w('\\x1b[H' + '\\r\\n'.join(chr(97 + (f + r) % 26) * 500 for r in range(500)))",
    '    sys.stdout.flush()',
    "w('\\x1b[?1049l')",
  ].join('\n');
  return `python3 -c "$(printf '%s' '${Buffer.from(program).toString('base64')}' | base64 -d)"; echo drawn-$((6*7))`;
}

describe('one MCP connection: bounded terminals that may all redraw a maximal screen (observation 3)', () => {
  let workspace: string;
  let host: Host;
  let ctx: TerminalToolContext;

  beforeEach(async () => {
    workspace = mkdtempSync(join(tmpdir(), 'fair-share-'));
    host = await createLocalHost({
      mode: 'danger-full-access',
      workspaceRoot: workspace,
      ptyLocal: { threads: 1 },
    });
    ctx = { pty: host.service('pty'), owner: 'connection', maxSessions: 6 };
  });

  afterEach(async () => {
    await host.dispose();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('refuses 1000 × 1000 and a terminal beyond --max-sessions; the others draw while one answers', async () => {
    const huge = await runTerminalTool('terminal_open', { rows: 1000, cols: 1000 }, ctx);
    expect(huge.isError).toBe(true);
    expect(huge.text).toMatch(/1000000 cells; a terminal holds at most 250000/);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const opened = await runTerminalTool('terminal_open', { rows: 500, cols: 500 }, ctx);
      if (opened.isError) throw new Error(opened.text);
      ids.push(opened.json.sessionId as string);
    }
    const beyond = await runTerminalTool('terminal_open', {}, ctx);
    expect(beyond.isError).toBe(true);
    expect(beyond.text).toMatch(/--max-sessions/);
    const [neighbour, ...drawers] = ids;
    const drawing = drawers.map((sessionId) =>
      runTerminalTool('terminal_send', { sessionId, text: drawScreens(8), timeoutMs: 120_000 }, ctx),
    );
    for (let i = 0; i < 5; i++) {
      const answer = await runTerminalTool(
        'terminal_send',
        { sessionId: neighbour, text: 'echo ok-$((6*7))' },
        ctx,
      );
      if (answer.isError) throw new Error(answer.text);
      expect((answer.json.output as string).split('\n')).toContain('ok-42');
    }
    for (const drawn of await Promise.all(drawing)) {
      if (drawn.isError) throw new Error(drawn.text);
      expect((drawn.json.output as string).split('\n')).toContain('drawn-42');
    }
  }, 180_000);
});

describe('closing hundreds of sessions (observation 5)', () => {
  it('engine.close() of 500 sessions on 2 threads resolves cleanly', async () => {
    const engine = await testEngine({ threads: 2, maxSessions: 512 });
    const sessions: TerminalSession[] = [];
    while (sessions.length < 500) {
      sessions.push(...(await Promise.all(Array.from({ length: 25 }, () => engine.spawn()))));
    }
    const answer = await sessions[499]!.startSend({ text: 'echo ok-$((6*7))' }).done;
    expect(answer.viewport.split('\n')).toContain('ok-42');
    await expect(engine.close()).resolves.toBeUndefined();
    expect(engine.sessions()).toEqual([]);
  }, 400_000);
});
