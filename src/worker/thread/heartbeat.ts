/**
 * The engine thread's side of the heartbeat (src/shared/heartbeat.ts): one timer per thread bumps the
 * thread's own counter in the pool's buffer while the thread hosts any session, and each session task
 * says, in its own buffer, which counter is its thread's.
 */
import { HEARTBEAT_THREAD_SLOTS, HeartbeatTiming } from '../../shared/heartbeat.js';
import { DisposableSlot, DisposableStore } from '../../shared/lifecycle.js';

let pool: Int32Array | undefined;
let slot = 0;
let tasks = 0;
/** The thread's timers: the beat, armed while the thread hosts a session task. */
const threadTimers = new DisposableStore();
const beat = new DisposableSlot();

/**
 * Starts beating for a session task: `poolBuffer` is the pool's heartbeat buffer (the same for every
 * task of the pool), `taskBuffer` the task's own. Returns the function that ends the task's part.
 */
export function beatOn(poolBuffer: SharedArrayBuffer, taskBuffer: SharedArrayBuffer): () => void {
  if (pool === undefined) {
    pool = new Int32Array(poolBuffer);
    slot = 1 + (Atomics.add(pool, 0, 1) % HEARTBEAT_THREAD_SLOTS);
  }
  const counters = pool;
  Atomics.add(counters, slot, 1); // a beat at once: the thread runs
  Atomics.store(new Int32Array(taskBuffer), 0, slot); // the task started, on this thread's counter
  tasks++;
  if (beat.value === undefined) {
    // Unref'd: the sessions keep the thread busy, never the heartbeat.
    beat.value = threadTimers.interval(
      'engine thread heartbeat',
      HeartbeatTiming.beatIntervalMs,
      () => Atomics.add(counters, slot, 1),
      { unref: true },
    );
  }
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    tasks--;
    if (tasks === 0) beat.clear();
  };
}
