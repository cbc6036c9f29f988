/**
 * The engine thread's side of the heartbeat (src/shared/heartbeat.ts): one timer per thread bumps the
 * counter of every session task it hosts, while it hosts any.
 */
import { HeartbeatTiming } from '../../shared/heartbeat.js';

const counters = new Set<Int32Array>();
let timer: NodeJS.Timeout | undefined;

/** Starts beating on `buffer` (a session task's counter); returns the function that stops it. */
export function beatOn(buffer: SharedArrayBuffer): () => void {
  const counter = new Int32Array(buffer);
  counters.add(counter);
  Atomics.add(counter, 0, 1); // the first beat at once: the task has started
  if (timer === undefined) {
    timer = setInterval(beat, HeartbeatTiming.beatIntervalMs);
    timer.unref(); // the sessions keep the thread busy, never the heartbeat
  }
  return () => {
    counters.delete(counter);
    if (counters.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

function beat(): void {
  for (const counter of counters) Atomics.add(counter, 0, 1);
}
