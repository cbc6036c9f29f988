/**
 * A session's calls leave nothing behind once answered: 20 000 `read`s of 100 lines grow the host's heap
 * by less than 3 MB (call-race.ts; racing each call against the thread's death with `Promise.race` kept
 * every result for the session's life: +17.6 MB here). Measured in a child host with --expose-gc.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const HOST = fileURLToPath(new URL('../../../fixtures/call-heap-host.mjs', import.meta.url));

it('20 000 calls on one session grow the heap by less than 3 MB', async () => {
  const report = await new Promise<{ growthMB: number; calls: number }>((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', HOST],
      { timeout: 55_000, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`host failed: ${String(error)}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split('\n').at(-1)!));
      },
    );
  });
  expect(report.calls).toBe(20_000);
  expect(report.growthMB).toBeLessThan(3);
}, 60_000);
