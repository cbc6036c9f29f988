/**
 * The heartbeat is one counter per engine thread, not one per session task (SPEC §4.8): the host
 * watches the counter each task names as its thread's, reports every task of a thread whose counter
 * stopped, and leaves the tasks of a beating thread alone however many there are. The worker side is
 * played here by writing the shared buffers the way src/worker/heartbeat.ts does; time is faked.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HeartbeatMonitor } from '../../../../src/main/engine/heartbeat-monitor.js';
import { HeartbeatReason, HeartbeatTiming } from '../../../../src/shared/heartbeat.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('heartbeat per thread', () => {
  it('reports every task of a stopped thread, none of a beating one, and a task that never started', () => {
    const stalls: Array<[string, string]> = [];
    const monitor = new HeartbeatMonitor((id, reason) => stalls.push([id, reason]));
    const counters = new Int32Array(monitor.poolBuffer);
    // Thread slot 1 hosts 300 tasks, slot 2 hosts one; one more task never starts.
    const busy = Array.from({ length: 300 }, (_, i) => new Int32Array(monitor.watch(`a${i}`)));
    const lone = new Int32Array(monitor.watch('b0'));
    monitor.watch('never');
    for (const task of busy) Atomics.store(task, 0, 1);
    Atomics.store(lone, 0, 2);
    // Thread 1 keeps beating (one add per beat, whatever its task count); thread 2 stops.
    const beat = setInterval(() => Atomics.add(counters, 1, 1), HeartbeatTiming.beatIntervalMs);
    vi.advanceTimersByTime(HeartbeatTiming.stallMs + 2 * HeartbeatTiming.checkIntervalMs);
    expect(stalls).toEqual([['b0', HeartbeatReason.stalled]]);
    vi.advanceTimersByTime(HeartbeatTiming.firstBeatMs);
    expect(stalls).toEqual([
      ['b0', HeartbeatReason.stalled],
      ['never', HeartbeatReason.neverStarted],
    ]);
    // Now thread 1 stops too: all 300 of its tasks are reported, once each.
    clearInterval(beat);
    vi.advanceTimersByTime(HeartbeatTiming.stallMs + 2 * HeartbeatTiming.checkIntervalMs);
    expect(stalls.slice(2).map(([id]) => id)).toEqual(busy.map((_, i) => `a${i}`));
    vi.advanceTimersByTime(10 * HeartbeatTiming.stallMs);
    expect(stalls).toHaveLength(302);
    monitor.dispose();
  });
});
