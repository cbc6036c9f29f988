/**
 * The behaviour every dialect owes (SPEC §4.1, §4.2, §4.4, §4.6, §8), run once per shell against the
 * real program: readiness (the verified prompt settles with exit code and cwd; a sleeping command does
 * not settle early; a REPL, `read x` and a continuation prompt are proven stdin waits), exit codes, the
 * cwd, cancel, the sandbox modes and teardown. The pwsh test double speaks no POSIX shell, so it runs
 * the part its tiny command language can express.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBubblewrapSandbox } from '../../../../dist/main/sandbox/bubblewrap.js';
import { bwrapIt } from '../../../support/bwrap.js';
import {
  type EngineOptions,
  isAlive,
  type SandboxMode,
  type TerminalSendResult,
  type TerminalSession,
  testEngine,
} from '../../../support/engine.js';
import { liveDescendants } from '../../../support/leaks.js';
import { until } from '../../../support/until.js';

const PWSH_DOUBLE = fileURLToPath(new URL('../../../fixtures/fake-pwsh.py', import.meta.url));

/** One shell under test, and how to say a few things in its language. */
interface ShellCase {
  /** Label of the describe block. */
  label: string;
  /** Engine options that select it. */
  engine: EngineOptions;
  /** Its process name (`comm`). */
  comm: string;
  /** It speaks POSIX sh: the whole suite runs. Otherwise only the commands below. */
  posix: boolean;
  /** A command that succeeds, and a whole line of its output that is not in the typed text. */
  succeed: { text: string; line: string };
  /** A command that fails with status 1. */
  fail: string;
  /** A command that runs for 100 s, and the status the shell reports when it is interrupted. */
  longRunning: { text: string; interruptedStatus: number };
}

const POSIX_COMMANDS = {
  posix: true,
  succeed: { text: 'echo ok-$((6*7))', line: 'ok-42' },
  fail: 'false',
  longRunning: { text: 'sleep 100', interruptedStatus: 130 },
} as const;

const SHELLS: ShellCase[] = [
  { label: 'bash', engine: { dialect: 'bash' }, comm: 'bash', ...POSIX_COMMANDS },
  { label: 'zsh', engine: { dialect: 'zsh' }, comm: 'zsh', ...POSIX_COMMANDS },
  {
    label: 'pwsh (test double)',
    engine: { dialect: 'pwsh', shellPath: 'python3', shellArgs: [PWSH_DOUBLE] },
    comm: 'python3',
    posix: false,
    succeed: { text: 'echo hi', line: 'hi' },
    fail: 'Get-Nothing',
    longRunning: { text: 'Start-Sleep 100', interruptedStatus: 1 },
  },
];

const itBwrap = bwrapIt('dialect sandbox');

const lines = (text: string) => text.split('\n');

/** Sends `text` and expects proven readiness. */
async function run(session: TerminalSession, text: string): Promise<TerminalSendResult> {
  const result = await session.startSend({ text }).done;
  expect(result.waitReason, result.viewport).toBe('stdin_read');
  return result;
}

describe.each(SHELLS)('$label', (shell) => {
  const itPosix = it.runIf(shell.posix);
  const spawn = async (options: EngineOptions = {}) =>
    (await testEngine({ ...shell.engine, ...options })).spawn();

  describe('readiness', () => {
    it('its verified prompt settles stdin_read with the exit code and the cwd', async () => {
      const session = await spawn();
      const result = await run(session, shell.succeed.text);
      expect(result).toMatchObject({ exitCode: 0, cwd: process.cwd() });
      expect(lines(result.viewport)).toContain(shell.succeed.line);
      expect(result.foreground?.command).toBe(shell.comm);
    });

    itPosix('Ctrl-L repaints the prompt, which is no new prompt; Enter on an empty line is one', async () => {
      const session = await spawn();
      expect((await run(session, 'false')).exitCode).toBe(1);
      // The repaint prints the marker again with the same prompt number: proven waiting (the line
      // editor), but the status of `false` is not reported a second time as if a command had run.
      const repaint = await session.startSend({ keys: ['C-l'] }).done;
      expect(repaint.waitReason).toBe('stdin_read');
      expect(repaint.exitCode).toBeUndefined();
      const empty = await session.startSend({ keys: ['Enter'] }).done;
      expect(empty).toMatchObject({ waitReason: 'stdin_read', exitCode: 1 }); // `$?` of an empty line
    });

    itPosix('`sleep 1; echo …` settles after the sleep, with its output', async () => {
      const session = await spawn();
      const result = await run(session, 'sleep 1; echo done-$((2+3))');
      expect(result.elapsedMs).toBeGreaterThanOrEqual(1_000);
      expect(result.exitCode).toBe(0);
      expect(lines(result.viewport)).toContain('done-5');
    });

    itPosix('a python3 REPL is a proven stdin wait at >>>; exit() is back at the prompt', async () => {
      const session = await spawn({ idleSilenceMs: 5_000 });
      const repl = await run(session, 'python3 -q');
      expect(repl.exitCode).toBeUndefined(); // not the shell's prompt: no marker status
      expect(repl.viewport.endsWith('>>> ')).toBe(true);
      expect(repl.elapsedMs).toBeLessThan(5_000);
      expect(lines((await run(session, '6*7')).viewport)).toContain('42');
      expect((await run(session, 'exit()')).exitCode).toBe(0);
    });

    itPosix('`read x` is a proven stdin wait, well before the silence bound', async () => {
      const session = await spawn({ idleSilenceMs: 5_000 });
      const waiting = await run(session, 'read x');
      expect(waiting.exitCode).toBeUndefined();
      expect(waiting.elapsedMs).toBeLessThan(1_000);
      expect((await run(session, 'hello')).exitCode).toBe(0);
      expect(lines((await run(session, 'echo "got=$x"')).viewport)).toContain('got=hello');
    });

    itPosix('a continuation prompt (an open quote) is a proven stdin wait, without exit code', async () => {
      const session = await spawn({ idleSilenceMs: 5_000 });
      const open = await run(session, 'echo "abc');
      expect(open.exitCode).toBeUndefined();
      expect(open.elapsedMs).toBeLessThan(1_000);
      expect(open.viewport.endsWith('> ')).toBe(true);
      const closed = await run(session, 'def"');
      expect(closed.exitCode).toBe(0);
      expect(lines(closed.viewport)).toEqual(expect.arrayContaining(['abc', 'def']));
    });
  });

  describe('exit codes and cwd', () => {
    it('a failing command reports status 1', async () => {
      const session = await spawn();
      expect((await run(session, shell.fail)).exitCode).toBe(1);
      expect((await run(session, shell.succeed.text)).exitCode).toBe(0);
    });

    itPosix('`(exit 7)` reports 7', async () => {
      const session = await spawn();
      expect((await run(session, '(exit 7)')).exitCode).toBe(7);
    });

    itPosix('`cd /tmp` moves the cwd the marker reports', async () => {
      const session = await spawn();
      expect(await run(session, 'cd /tmp')).toMatchObject({ exitCode: 0, cwd: '/tmp' });
      expect((await run(session, 'cd /')).cwd).toBe('/');
    });
  });

  describe('cancel', () => {
    it('interrupts a long command; the prompt comes back and the next command runs', async () => {
      const session = await spawn();
      const op = session.startSend({ text: shell.longRunning.text });
      await until('the command runs', () => liveDescendants(session.pid).length > 0 || !shell.posix);
      await new Promise((resolve) => setTimeout(resolve, shell.posix ? 0 : 150)); // the double has no child
      await op.cancel();
      expect(await op.done).toMatchObject({
        waitReason: 'stdin_read',
        exitCode: shell.longRunning.interruptedStatus,
      });
      const next = await run(session, shell.succeed.text);
      expect(next.exitCode).toBe(0);
      expect(lines(next.viewport)).toContain(shell.succeed.line);
    });
  });

  describe('cancel of a half-written line', () => {
    itPosix('leaves neither typed residue nor the signal for the next command', async () => {
      const session = await spawn();
      // While `sleep` runs nobody reads the terminal, so the payload stays queued in slices; the
      // cancel may leave part of a line typed at the prompt, which the shell's line editor must drop.
      const payload = 'x'.repeat(64).concat('\r').repeat(4096);
      const op = session.startSend({ text: `sleep 0.5\r${payload}` });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await op.cancel();
      const cancelled = await op.done;
      expect(cancelled.waitReason, cancelled.viewport.slice(-400)).toBe('stdin_read');
      const next = await run(session, 'sleep 0.3; echo clean-$((40+2))');
      expect(next.exitCode).toBe(0);
      expect(lines(next.viewport)).toContain('clean-42');
      expect(next.viewport).not.toContain('xxxxxxxx');
    });
  });

  describe('sandbox', () => {
    let root: string;
    let workspace: string;
    beforeEach(() => {
      root = mkdtempSync(path.join(tmpdir(), 'dialect-sandbox-'));
      workspace = path.join(root, 'workspace');
      mkdirSync(workspace);
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));

    const confined = async (mode: SandboxMode) =>
      (await testEngine({ ...shell.engine, sandbox: createBubblewrapSandbox(), disposeGraceMs: 300 })).spawn({
        sandbox: { mode, workspaceRoot: workspace },
      });

    const itPosixBwrap = shell.posix ? itBwrap : it.skip;

    itPosixBwrap('read-only denies writing the workspace; readiness and exit codes still work', async () => {
      const session = await confined('read-only');
      const denied = await run(session, 'echo x > written');
      expect(denied.exitCode).not.toBe(0);
      expect(existsSync(path.join(workspace, 'written'))).toBe(false);
      expect(await run(session, '(exit 7)')).toMatchObject({ exitCode: 7, cwd: workspace });
    });

    itPosixBwrap('workspace-write allows writing the workspace', async () => {
      const session = await confined('workspace-write');
      expect((await run(session, 'echo x > written')).exitCode).toBe(0);
      expect(existsSync(path.join(workspace, 'written'))).toBe(true);
    });
  });

  describe('teardown', () => {
    itPosix('close kills a background job and leaves nothing', async () => {
      const session = await spawn();
      const started = await run(session, 'sleep 1000 & echo "bg=$!"');
      const job = Number(/^bg=(\d+)\s*$/m.exec(started.viewport)?.[1]);
      expect(isAlive(job)).toBe(true);
      await session.close();
      expect(isAlive(job)).toBe(false);
      expect(isAlive(session.pid)).toBe(false);
    });

    it('close leaves no process of the session', async () => {
      const session = await spawn();
      await run(session, shell.succeed.text);
      await session.close();
      expect(liveDescendants(session.pid)).toEqual([]);
      expect(isAlive(session.pid)).toBe(false);
    });
  });
});
