/**
 * The host's side of the heartbeat (src/shared/heartbeat.ts): watches one counter per engine thread —
 * the slot each session task names as its thread's once it started — and reports the tasks of a
 * thread whose counter stopped moving, or a task that never started. Judged by change, never by the
 * host's own clock alone: a host that was blocked itself sees the counters moved and reports nothing.
 */
import {
  HEARTBEAT_BYTES,
  HEARTBEAT_POOL_BYTES,
  HeartbeatReason,
  HeartbeatTiming,
} from '../../shared/heartbeat.js';
import { DisposableSlot, DisposableStore } from '../../shared/lifecycle.js';

/** Why a watched task was reported. */
export type HeartbeatStall = (typeof HeartbeatReason)[keyof typeof HeartbeatReason];

interface WatchedTask {
  /** The task's buffer: its thread's slot once it started, 0 before. */
  started: Int32Array;
  /** When watching began (the bound of a task that never starts counts from here). */
  since: number;
}

interface WatchedThread {
  last: number;
  changedAt: number;
}

/** Watches the engine threads of a pool; calls `onStall(id, reason)` once per task of a stopped thread. */
export class HeartbeatMonitor {
  /** The pool's buffer, handed to every thread (Piscina's workerData). */
  readonly poolBuffer = new SharedArrayBuffer(HEARTBEAT_POOL_BYTES);
  private readonly counters = new Int32Array(this.poolBuffer);
  private readonly tasks = new Map<string, WatchedTask>();
  private readonly threads = new Map<number, WatchedThread>();
  /** The check timer; disposed with the monitor. */
  private readonly owned = new DisposableStore();
  /** The check's interval, armed while a task is watched. */
  private readonly checking = this.owned.add(new DisposableSlot());

  constructor(private readonly onStall: (id: string, reason: HeartbeatStall) => void) {}

  /** A new buffer for task `id`, watched from now on (it goes to the task in its data). */
  watch(id: string): SharedArrayBuffer {
    const buffer = new SharedArrayBuffer(HEARTBEAT_BYTES);
    this.tasks.set(id, { started: new Int32Array(buffer), since: performance.now() });
    if (this.checking.value === undefined) {
      // Watching never keeps the host alive.
      this.checking.value = this.owned.interval(
        'heartbeat check',
        HeartbeatTiming.checkIntervalMs,
        this.check,
        {
          unref: true,
        },
      );
    }
    return buffer;
  }

  /** Stops watching task `id` (it finished, or was reported). */
  unwatch(id: string): void {
    this.tasks.delete(id);
    if (this.tasks.size === 0 && this.checking.value !== undefined) {
      this.checking.clear();
      this.threads.clear();
    }
  }

  /** Stops watching everything; a task watched later is not checked any more. */
  dispose(): void {
    for (const id of [...this.tasks.keys()]) this.unwatch(id);
    this.owned.dispose();
  }

  private readonly check = (): void => {
    const now = performance.now();
    const stalledSlots = new Set<number>();
    const watchedSlots = new Set<number>();
    for (const task of this.tasks.values()) {
      const slot = Atomics.load(task.started, 0);
      if (slot !== 0) watchedSlots.add(slot);
    }
    for (const slot of watchedSlots) {
      const value = Atomics.load(this.counters, slot);
      const thread = this.threads.get(slot);
      if (thread === undefined || thread.last !== value) {
        this.threads.set(slot, { last: value, changedAt: now });
      } else if (now - thread.changedAt > HeartbeatTiming.stallMs) {
        stalledSlots.add(slot);
      }
    }
    for (const slot of this.threads.keys()) if (!watchedSlots.has(slot)) this.threads.delete(slot);
    const stalled: Array<[string, HeartbeatStall]> = [];
    for (const [id, task] of this.tasks) {
      const slot = Atomics.load(task.started, 0);
      if (slot === 0) {
        if (now - task.since > HeartbeatTiming.firstBeatMs) stalled.push([id, HeartbeatReason.neverStarted]);
      } else if (stalledSlots.has(slot)) {
        stalled.push([id, HeartbeatReason.stalled]);
      }
    }
    for (const slot of stalledSlots) this.threads.delete(slot);
    for (const [id, reason] of stalled) {
      this.unwatch(id);
      this.onStall(id, reason);
    }
  };
}
