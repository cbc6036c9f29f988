/**
 * `agent-pty attach NAME` (SPEC §13): a real terminal (a pty here) on a session through the same
 * keyboard hold as the watch page: it draws the session's screen at the session's own size without
 * resizing it, says both sizes, passes the person's keys in raw mode, and Ctrl-] hands back. Without a
 * terminal (stdin /dev/null) it refuses instead of holding the keyboard with nobody to type.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startWatchServer, type WatchServer } from '../../../../dist/main/watch/watch-server.js';
import { writeWatchUrlFile } from '../../../../dist/main/watch/watch-url-file.js';
import { ptyBinding } from '../../../../dist/worker/pty/pty-binding.js';
import { testEngine } from '../../../support/engine.js';
import { until } from '../../../support/until.js';

const BIN = new URL('../../../../dist/main/cli/bin.js', import.meta.url).pathname;
let dir: string;
let server: WatchServer | undefined;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'attach-'));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

it('types into a getpass prompt from a real terminal, never resizes the session, and hands back on Ctrl-]', async () => {
  const engine = await testEngine({ disposeGraceMs: 300 });
  const session = await engine.spawn({ name: 'work', rows: 24, cols: 80 });
  const held = () => (session as unknown as { heldSince: number | undefined }).heldSince;
  server = await startWatchServer({ engine, recordingsDir: dir });
  const runtime = path.join(dir, 'run');
  mkdirSync(runtime, { mode: 0o700 });
  writeWatchUrlFile(server.url, { XDG_RUNTIME_DIR: runtime });
  const asked = await session.startSend({
    text: `python3 -c 'import getpass; s = getpass.getpass("Password: "); print("len", len(s))'`,
  }).done;
  expect(asked.inputHidden).toBe(true);

  const term = ptyBinding().nodePty.spawn(process.execPath, [BIN, 'attach', 'work'], {
    name: 'xterm-256color',
    rows: 30,
    cols: 100,
    cwd: dir,
    env: { ...process.env, XDG_RUNTIME_DIR: runtime } as Record<string, string>,
  });
  let output = '';
  term.onData((chunk) => {
    output += chunk;
  });
  const exited = new Promise<number>((resolve) => term.onExit(({ exitCode }) => resolve(exitCode)));
  try {
    await until(
      'attach drew the screen and took the keyboard',
      () => /Password:/.test(output) && held() !== undefined,
    );
    expect(output).toContain('work is 24×80, this terminal 30×100 (not resized); Ctrl-] hands back');
    term.write('s3cret-value\r');
    await until('the program read it', () => /len 12/.test(output));
    term.write('\x1d');
    expect(await exited).toBe(0);
  } finally {
    term.kill();
  }
  expect(output).not.toContain('s3cret-value'); // echo was off: not even the person's terminal shows it
  expect(held()).toBeUndefined();
  const snapshot = await session.snapshot();
  expect({ rows: snapshot.rows, cols: snapshot.cols }).toEqual({ rows: 24, cols: 80 });
  const after = await session.startSend({ text: 'echo back-$((6*7))' }).done;
  expect(after.viewport).toMatch(/^len 12\s*$/m);
  expect(after.viewport).toMatch(/^back-42\s*$/m);
  expect(after.viewport).not.toContain('s3cret-value');
});

it('refuses without a terminal (stdin /dev/null) at once, and leaves the keyboard free', async () => {
  const engine = await testEngine({ disposeGraceMs: 300 });
  const session = await engine.spawn({ name: 'work' });
  const held = () => (session as unknown as { heldSince: number | undefined }).heldSince;
  server = await startWatchServer({ engine, recordingsDir: dir });
  const runtime = path.join(dir, 'run');
  mkdirSync(runtime, { mode: 0o700 });
  writeWatchUrlFile(server.url, { XDG_RUNTIME_DIR: runtime });
  const child = spawn(process.execPath, [BIN, 'attach', 'work'], {
    cwd: dir,
    env: { ...process.env, XDG_RUNTIME_DIR: runtime },
    stdio: ['ignore', 'pipe', 'pipe'], // 'ignore' is /dev/null
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let exitCode: number | null | undefined;
  child.on('exit', (code) => {
    exitCode = code;
  });
  try {
    await until('attach exited', () => exitCode !== undefined, 15_000);
  } finally {
    child.kill();
  }
  expect(exitCode).not.toBe(0);
  expect(stderr).toMatch(/INVALID_ARGUMENT/);
  expect(stderr).toMatch(/attach needs a terminal/);
  expect(held()).toBeUndefined();
  const after = await session.startSend({ text: 'echo free-$((6*7))' }).done;
  expect(after.viewport).toMatch(/^free-42\s*$/m);
});
