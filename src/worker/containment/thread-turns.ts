/**
 * Fair share of an engine thread for synchronous work of many sessions at once (SPEC §4.8): closing
 * hundreds of sessions means hundreds of `/proc` scans (a few milliseconds each with a thousand
 * processes), and when they are all due together — their poll timers expire in one timers phase, their
 * close calls arrive in one burst — the thread runs them back to back for seconds: the heartbeat's
 * timer cannot fire in between, and the host declares the thread wedged (issue 22, observation 5).
 *
 * So such work goes through this thread's queue: each turn of the event loop runs queued work until
 * {@link TURN_BUDGET_MS} passed, then lets the loop go round (timers, I/O, other sessions) before it
 * goes on. One step is never split: a step is what its caller hands over (one scan).
 */

import { DisposableStore } from '../../shared/lifecycle.js';

/** Synchronous work run per turn of the event loop, at most (one step may overrun it by its own length). */
const TURN_BUDGET_MS = 10;

interface Step {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

const queue: Step[] = [];
let head = 0;
let scheduled = false;
/** The next turn's immediate. Never disposed: the queue is the thread's, and lives as long as it. */
const turns = new DisposableStore();

/**
 * Runs `work` (synchronous) in a turn of this thread's event loop that has room for it; resolves or
 * rejects with its outcome. Steps run in the order they were handed over.
 */
export function inTurn<T>(work: () => T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
    schedule();
  });
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  // setImmediate: work queued during a check phase runs in the next loop iteration, after the timers.
  turns.immediate('thread turn', runTurn);
}

function runTurn(): void {
  scheduled = false;
  const until = performance.now() + TURN_BUDGET_MS;
  while (head < queue.length) {
    const step = queue[head++]!;
    try {
      step.resolve(step.work());
    } catch (error) {
      step.reject(error);
    }
    if (performance.now() >= until) break;
  }
  if (head === queue.length) {
    queue.length = 0;
    head = 0;
  } else {
    schedule();
  }
}
