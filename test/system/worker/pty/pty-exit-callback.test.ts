/**
 * Nothing may abort the host (SPEC §4.7): node-pty's exit callback must not throw into a thread that
 * is being terminated while its shells exit (docs/decisions/0003-node-pty-patch.md, 0004). Each run is a
 * separate node process, so an abort shows as its exit status instead of killing the test runner.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const FIXTURE = fileURLToPath(new URL('../../../fixtures/terminate-during-exit.mjs', import.meta.url));
/** Termination delays (ms) after the spawns: while the shells exit, and while their callbacks queue. */
const DELAYS_MS = [0, 50, 100, 150];

it('terminating a thread while its shells exit does not abort the process', () => {
  for (const delay of DELAYS_MS) {
    const run = spawnSync(process.execPath, [FIXTURE, String(delay)], { encoding: 'utf8', timeout: 20_000 });
    expect({ delay, status: run.status, signal: run.signal, stdout: run.stdout }, run.stderr).toEqual({
      delay,
      status: 0,
      signal: null,
      stdout: 'survived\n',
    });
  }
});
