/**
 * The host's side of the heartbeat (src/shared/heartbeat.ts): watches each session task's counter and
 * reports a task whose counter stopped moving. Judged by change, never by the host's own clock alone:
 * a host that was blocked itself sees the counters moved and reports nothing.
 */
import { HEARTBEAT_BYTES, HeartbeatReason, HeartbeatTiming } from '../../shared/heartbeat.js';

/** Why a watched task was reported. */
export type HeartbeatStall = (typeof HeartbeatReason)[keyof typeof HeartbeatReason];

interface Watched {
  counter: Int32Array;
  last: number;
  changedAt: number;
}

/** Watches heartbeat counters; calls `onStall(id, reason)` once per task that stops beating. */
export class HeartbeatMonitor {
  private readonly watched = new Map<string, Watched>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly onStall: (id: string, reason: HeartbeatStall) => void) {}

  /** A new counter for task `id`, watched from now on (it goes to the task in its data). */
  watch(id: string): SharedArrayBuffer {
    const buffer = new SharedArrayBuffer(HEARTBEAT_BYTES);
    this.watched.set(id, { counter: new Int32Array(buffer), last: 0, changedAt: performance.now() });
    if (this.timer === undefined) {
      this.timer = setInterval(this.check, HeartbeatTiming.checkIntervalMs);
      this.timer.unref(); // watching never keeps the host alive
    }
    return buffer;
  }

  /** Stops watching task `id` (it finished, or was reported). */
  unwatch(id: string): void {
    this.watched.delete(id);
    if (this.watched.size === 0 && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Stops watching everything. */
  dispose(): void {
    for (const id of [...this.watched.keys()]) this.unwatch(id);
  }

  private readonly check = (): void => {
    const now = performance.now();
    const stalled: Array<[string, HeartbeatStall]> = [];
    for (const [id, entry] of this.watched) {
      const value = Atomics.load(entry.counter, 0);
      if (value !== entry.last) {
        entry.last = value;
        entry.changedAt = now;
        continue;
      }
      const started = value !== 0;
      const bound = started ? HeartbeatTiming.stallMs : HeartbeatTiming.firstBeatMs;
      if (now - entry.changedAt > bound) {
        stalled.push([id, started ? HeartbeatReason.stalled : HeartbeatReason.neverStarted]);
      }
    }
    for (const [id, reason] of stalled) {
      this.unwatch(id);
      this.onStall(id, reason);
    }
  };
}
