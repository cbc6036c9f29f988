/**
 * Opening a session's terminal (src/worker/pty/pty-spawn.ts): agent-pty's patched fork gives a master
 * that is close-on-exec and non-blocking; node-pty's own fork, which leaves the master inheritable
 * (docs/decisions/0003-node-pty-patch.md), is refused with SPAWN_FAILED and its process killed. Real
 * node-pty, real processes, real /proc.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ptyBinding } from '../../../../dist/worker/pty/pty-binding.js';
import { spawnPty } from '../../../../dist/worker/pty/pty-spawn.js';
import { until } from '../../../support/until.js';

const SPAWN_MODULE = fileURLToPath(new URL('../../../../dist/worker/pty/pty-spawn.js', import.meta.url));
const OPTIONS = {
  name: 'xterm-256color',
  cols: 80,
  rows: 24,
  cwd: process.cwd(),
  env: { PATH: process.env.PATH },
};
/** O_CLOEXEC and O_NONBLOCK as `/proc/self/fdinfo` prints them (octal). */
const O_CLOEXEC = 0o2000000;
const O_NONBLOCK = 0o4000;

const fdFlags = (fd: number) =>
  Number.parseInt(/^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))![1]!, 8);
/** Whether `pid` still runs (a zombie counts as gone: it was killed and awaits its reaping). */
function running(pid: number): boolean {
  try {
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('spawnPty', () => {
  it("opens the patched fork's terminal: its master is close-on-exec and non-blocking", async () => {
    const spawned = spawnPty(ptyBinding().nodePty, 'sleep', ['30'], OPTIONS, 'sleep');
    try {
      expect(fdFlags(spawned.fd) & O_CLOEXEC).toBe(O_CLOEXEC);
      expect(spawned.nonBlocking).toBe(true);
      expect(fdFlags(spawned.fd) & O_NONBLOCK).toBe(O_NONBLOCK);
      expect(spawned.ptsName).toMatch(/^\/dev\/pts\/\d+$/);
      expect(running(spawned.term.pid)).toBe(true);
    } finally {
      const exited = new Promise((resolve) => spawned.term.onExit(resolve));
      spawned.term.kill('SIGKILL');
      await exited;
    }
  });

  it("refuses node-pty's own fork, whose master every later child would inherit, and kills what it started", async () => {
    // node-pty as published, in a process of its own: agent-pty's binding swaps the fork of node-pty's
    // native module for its patched one in every thread that loads it, this one included.
    const script = `
      import { createRequire } from 'node:module';
      import { spawnPty } from ${JSON.stringify(SPAWN_MODULE)};
      const nodePty = createRequire(${JSON.stringify(SPAWN_MODULE)})('node-pty');
      const pids = [];
      const recording = { ...nodePty, spawn: (...args) => { const term = nodePty.spawn(...args); pids.push(term.pid); return term; } };
      let outcome;
      try {
        spawnPty(recording, 'sleep', ['30'], ${JSON.stringify(OPTIONS)}, 'sleep');
        outcome = { refused: false, pids };
      } catch (error) {
        outcome = { refused: true, code: error.code, message: error.message, pids };
      }
      process.stdout.write(JSON.stringify(outcome));
      process.exit(0);
    `;
    const outcome = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        encoding: 'utf8',
        timeout: 20_000,
      }),
    );
    expect(outcome).toMatchObject({ refused: true, code: 'SPAWN_FAILED' });
    expect(outcome.message).toContain('not close-on-exec');
    expect(outcome.pids).toHaveLength(1);
    await until('the refused terminal’s process gone', () => !running(outcome.pids[0]));
  });
});
