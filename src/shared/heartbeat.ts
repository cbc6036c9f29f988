/**
 * The engine threads' heartbeat (SPEC §4.7, §4.8): how a wedged thread — a busy loop, a stuck native
 * call — is told from a busy one. Each engine thread bumps one counter in shared memory (its slot of
 * the pool's heartbeat buffer) on a timer of its event loop, however many sessions it hosts; each
 * session task writes its thread's slot into a small buffer of its own when it starts. The host
 * watches one counter per thread and declares the thread wedged when it stops. A timer only fires
 * when the loop turns, so a stopped counter means the loop stopped.
 *
 * The timings, one group like VS Code's pty host heartbeat constants, each with its reason.
 */
export const HeartbeatTiming = {
  /** The engine thread beats this often: one atomic add, nothing a thread notices. */
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

/** Bytes of a session task's heartbeat buffer: one Int32, its thread's slot + 1 once it started (0 before). */
export const HEARTBEAT_BYTES = 4;

/**
 * Thread slots of a pool's heartbeat buffer. A thread claims the next slot when it starts (index 0
 * counts the claims), so a replacement thread never shares a counter with the thread it replaced
 * unless this many threads started since.
 */
export const HEARTBEAT_THREAD_SLOTS = 1024;

/** Bytes of a pool's heartbeat buffer: the claim counter, then one Int32 per thread slot. */
export const HEARTBEAT_POOL_BYTES = 4 * (1 + HEARTBEAT_THREAD_SLOTS);
