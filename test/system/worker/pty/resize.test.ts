/**
 * Terminal size (SPEC §4.3 "Size"), against real bash, less and the tool layer: `session.resize()`
 * reaches the pty (the shell and programs see the new size), a full-screen program redraws into a
 * screen of the new size, bad sizes are refused with INVALID_ARGUMENT, and `rows`/`cols` at open
 * (engine and `terminal_open`) set the size the shell starts with. Also across an execution world.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLocalHost } from '../../../../dist/main/harness/local-host.js';
import { createRemoteEngine, type PtyEngine, type TerminalSession } from '../../../../dist/main/index.js';
import { runTerminalTool } from '../../../../dist/main/tools/catalog.js';
import { testEngine } from '../../../support/engine.js';

const BIN = new URL('../../../../dist/main/cli/bin.js', import.meta.url).pathname;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.allSettled(cleanups.splice(0).map((cleanup) => cleanup()));
});

/** Output lines of `command` run in `session`. */
async function linesOf(session: TerminalSession, command: string): Promise<string[]> {
  const result = await session.startSend({ text: command }).done;
  expect(result.exitCode).toBe(0);
  return result.viewport.split('\n');
}

describe('session.resize', () => {
  it('resizes the pty: stty size and tput cols report the new size', async () => {
    const engine = await testEngine();
    const session = await engine.spawn({ rows: 24, cols: 80 });
    expect(await linesOf(session, 'stty size')).toContain('24 80');
    await session.resize({ rows: 30, cols: 100 });
    expect(await linesOf(session, 'stty size')).toContain('30 100');
    expect(await linesOf(session, 'tput cols; tput lines')).toEqual(expect.arrayContaining(['100', '30']));
    await session.close();
  });

  it('a full-screen program redraws to the new size: the next screen has the new rows, filled', async () => {
    const engine = await testEngine();
    const session = await engine.spawn({ rows: 20, cols: 70 });
    const opened = await session.startSend({ text: 'seq 1000 2000 | less' }).done;
    expect(opened.screen?.lines).toHaveLength(20);
    expect(opened.screen?.lines[18]).toBe('1018');
    await session.resize({ rows: 30, cols: 100 });
    const redrawn = await session.startSend({}).done;
    expect(redrawn.screen?.lines).toHaveLength(30);
    // less repainted its page for 30 rows (29 lines and its prompt); without the SIGWINCH the rows
    // below the old screen would stay blank.
    expect(redrawn.screen?.lines[28]).toBe('1028');
    const quit = await session.startSend({ keys: ['q'] }).done;
    expect(quit.screen).toBeUndefined();
    expect(await linesOf(session, 'stty size')).toContain('30 100');
    await session.close();
  });

  it('shrinking keeps the shell usable and its output intact', async () => {
    const engine = await testEngine();
    const session = await engine.spawn({ rows: 40, cols: 160 });
    await session.resize({ rows: 10, cols: 40 });
    expect(await linesOf(session, 'stty size; echo ok-$((6*7))')).toEqual(
      expect.arrayContaining(['10 40', 'ok-42']),
    );
    const page = await session.read();
    expect(page.text.split('\n')).toContain('ok-42');
    await session.close();
  });

  for (const dialect of ['bash', 'zsh'] as const) {
    it(`${dialect}: a send right after a resize is answered by the command's prompt, not by the repaint of the old one`, async () => {
      // The line editor repaints its prompt (marker included) on SIGWINCH. The shell is stopped while
      // the resize and the send happen, so the repaint is always read after the write boundary; it
      // carries the old prompt's number and must not settle the send before the command ran (before the
      // number, an empty viewport with exit code 0 settled it now and then; readiness-races pins it).
      const engine = await testEngine();
      const session = await engine.spawn({ rows: 40, cols: 160, dialect });
      for (let round = 0; round < 6; round++) {
        const cols = 40 + round;
        process.kill(session.pid, 'SIGSTOP');
        await session.resize({ rows: 10, cols });
        const send = session.startSend({ text: 'stty size; echo ok-$((6*7))' });
        await new Promise((resolve) => setTimeout(resolve, 50));
        process.kill(session.pid, 'SIGCONT');
        const result = await send.done;
        expect(result.exitCode).toBe(0);
        expect(result.viewport.split('\n')).toEqual(expect.arrayContaining([`10 ${cols}`, 'ok-42']));
      }
      await session.close();
    });
  }

  it('the output model lays out cursor movement at the new width', async () => {
    const engine = await testEngine();
    const session = await engine.spawn({ rows: 24, cols: 160 });
    await session.resize({ rows: 24, cols: 40 });
    // 60 digits wrap onto a second row at 40 columns; one row up from the next line is that second
    // row, so XY lands on digits 41-42. At the old width it would overwrite the line's start.
    const result = await session.startSend({ text: "printf '%060d\\n\\e[AXY\\n' 0" }).done;
    expect(result.exitCode).toBe(0);
    const expected = `${'0'.repeat(40)}XY${'0'.repeat(18)}`;
    expect(result.viewport.split('\n')).toContain(expected);
    expect((await session.read()).text.split('\n')).toContain(expected);
    await session.close();
  });

  it('refuses sizes that are not positive integers up to the bound with INVALID_ARGUMENT', async () => {
    const engine = await testEngine();
    const session = await engine.spawn({ rows: 24, cols: 80 });
    const bad = [
      { rows: 0, cols: 80 },
      { rows: 24, cols: -1 },
      { rows: 2.5, cols: 80 },
      { rows: 24, cols: Number.NaN },
      { rows: 24, cols: 1_000_000 },
      { rows: 24 },
      null,
    ];
    for (const size of bad) {
      await expect(session.resize(size as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    // Nothing changed.
    expect(await linesOf(session, 'stty size')).toContain('24 80');
    await session.close();
    await expect(session.resize({ rows: 30, cols: 100 })).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
  });

  it('refuses an oversized spawn with INVALID_ARGUMENT', async () => {
    const engine = await testEngine();
    await expect(engine.spawn({ rows: 5000 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });

  it('is forwarded to a session in an execution world', async () => {
    const engine: PtyEngine = await createRemoteEngine({
      command: [process.execPath, BIN, 'serve', '--stdio'],
    });
    cleanups.push(() => engine.close());
    const session = await engine.spawn({ rows: 24, cols: 80 });
    expect(await linesOf(session, 'stty size')).toContain('24 80');
    await session.resize({ rows: 30, cols: 100 });
    expect(await linesOf(session, 'stty size')).toContain('30 100');
    await expect(session.resize({ rows: 0, cols: 100 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await session.close();
  });
});

describe('terminal_open rows/cols', () => {
  it('opens the shell at the given size and refuses a bad one', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'resize-tools-'));
    const host = await createLocalHost({ mode: 'workspace-write', workspaceRoot: workspace });
    cleanups.push(async () => {
      await host.dispose();
      rmSync(workspace, { recursive: true, force: true });
    });
    const ctx = { pty: host.service('pty'), owner: 'model' };
    const opened = await runTerminalTool('terminal_open', { rows: 25, cols: 90 }, ctx);
    expect(opened.isError).toBeFalsy();
    if (opened.isError) throw new Error(opened.text);
    const sessionId = opened.json.sessionId as string;
    const sent = await runTerminalTool('terminal_send', { sessionId, text: 'stty size' }, ctx);
    if (sent.isError) throw new Error(sent.text);
    expect((sent.json.output as string).split('\n')).toContain('25 90');
    for (const args of [{ rows: 0 }, { cols: 2.5 }, { rows: '30' }, { cols: 5000 }]) {
      const refused = await runTerminalTool('terminal_open', args, ctx);
      expect(refused.isError).toBe(true);
      expect(refused).toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
  });
});
