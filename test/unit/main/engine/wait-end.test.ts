/**
 * A send's wait ended from outside (wait-end.ts): the daemon's `WaitEnd` and a caller's AbortSignal
 * through `signalAbort` behave alike for the layers that listen — each listener once, none after the
 * end, a forgotten one never.
 */
import { expect, it } from 'vitest';
import { signalAbort, type WaitAbort, WaitEnd } from '../../../../src/main/engine/wait-end.js';

function ends(): Array<{ name: string; wait: WaitAbort; end: () => void }> {
  const controller = new AbortController();
  const waitEnd = new WaitEnd();
  return [
    { name: 'WaitEnd', wait: waitEnd, end: () => waitEnd.end() },
    { name: 'AbortSignal', wait: signalAbort(controller.signal), end: () => controller.abort() },
  ];
}

it.each(ends())('$name: calls each listener once, in order, and none that was forgotten', ({ wait, end }) => {
  const calls: string[] = [];
  wait.onAbort(() => calls.push('first'));
  const forgotten = wait.onAbort(() => calls.push('forgotten'));
  wait.onAbort(() => calls.push('second'));
  forgotten.dispose();
  expect(wait.aborted).toBe(false);
  end();
  end();
  expect(wait.aborted).toBe(true);
  expect(calls).toEqual(['first', 'second']);
});

it.each(ends())('$name: a listener added after the end is never called', ({ wait, end }) => {
  end();
  const calls: string[] = [];
  wait.onAbort(() => calls.push('late')).dispose();
  wait.onAbort(() => calls.push('late'));
  end();
  expect(calls).toEqual([]);
});
