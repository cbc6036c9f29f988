/**
 * A send whose wait its caller aborts while its command runs (SPEC §4.2: the abort ends the wait, never
 * the command): `echo tick; sleep 2; echo tock`, aborted once `tick-42` was read through `readOutput`.
 * Shared by the engines that forward the signal (a world's link, the daemon's socket).
 */
import { expect } from 'vitest';
import type { PtyEngine } from '../../dist/main/index.js';

/** How the aborted send settled, and whether the command ran on to print `tock-43` afterwards. */
export interface AbortedSend {
  waitReason: string;
  rest: 'tock' | 'no tock';
}

/** Runs the aborted send on a new session of `engine`; checks the abort settled it within 1.5 s. */
export async function abortedSend(engine: PtyEngine): Promise<AbortedSend> {
  const session = await engine.spawn();
  const controller = new AbortController();
  const op = session.startSend({
    text: 'echo tick-$((40+2)); sleep 2; echo tock-$((40+3))',
    signal: controller.signal,
  });
  let seen = '';
  for (const deadline = Date.now() + 8_000; !seen.includes('tick-42') && Date.now() < deadline; ) {
    seen += (await op.readOutput()).delta;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(seen).toContain('tick-42');
  controller.abort();
  const aborted = Date.now();
  const result = await op.done;
  expect(Date.now() - aborted).toBeLessThan(1_500); // the abort reached the far side
  const rest = await session.startSend({ timeoutMs: 10_000 }).done;
  expect(rest.waitReason).toBe('stdin_read');
  return {
    waitReason: result.waitReason,
    rest: rest.viewport.split('\n').includes('tock-43') ? 'tock' : 'no tock',
  };
}
