/**
 * The engine threads' heartbeat (SPEC §4.7): how a wedged thread — a busy loop, a stuck native call —
 * is told from a busy one. Each session task bumps a counter in shared memory on a timer of its
 * thread's event loop; the host watches the counters and declares a thread wedged when one stops. A
 * timer only fires when the loop turns, so a stopped counter means the loop stopped.
 *
 * The timings, one group like VS Code's pty host heartbeat constants, each with its reason.
 */
export const HeartbeatTiming = {
  /** The engine thread beats this often: an atomic add per session, nothing a thread notices. */
  beatIntervalMs: 250,
  /** The host looks at the counters this often; detection takes at most stall + check. */
  checkIntervalMs: 500,
  /**
   * No beat for this long means wedged: 12 missed beats, far beyond a GC pause or one output slice of
   * the engine (a few ms), and within the "few seconds" of SPEC §4.7 (3.5 s worst case with the check).
   */
  stallMs: 3_000,
  /**
   * Before a task's first beat the thread may still be starting (a new thread loads node-pty and the
   * terminal emulator; seconds on a loaded machine), so a task that never beat gets this long.
   */
  firstBeatMs: 10_000,
} as const;

/** Why the host declared a thread dead, for the error message of ENGINE_THREAD_DIED. */
export const HeartbeatReason = {
  /** The thread beat before and then stopped. */
  stalled: 'stopped responding (no heartbeat)',
  /** The task never started beating: the thread it was given to never ran it. */
  neverStarted: 'never started the session (no heartbeat)',
} as const;

/** Bytes of one session's heartbeat counter (one Int32). */
export const HEARTBEAT_BYTES = 4;
