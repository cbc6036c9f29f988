/**
 * Deliberate teardown failures of one session, for the tests only: reached through the internal test
 * entry (`agent-pty/internal/testing`), which sets a session's `FaultPlan`. A session without a plan
 * never gets here. A thread's deliberate deaths are thread/thread-faults.ts.
 */
import type { FaultPlan } from '../../shared/protocol.js';

/** A kill function as `teardownProcessTree` takes it. */
type Kill = (pid: number, signal: NodeJS.Signals) => void;

/** The faults of one session's teardowns. */
export class TeardownFaults {
  private failuresLeft: number;

  constructor(plan: FaultPlan) {
    this.failuresLeft = plan.failTeardowns ?? 0;
  }

  /** For the next teardown attempt: a kill that swallows every signal while failures are planned, else undefined. */
  nextKill(): Kill | undefined {
    if (this.failuresLeft <= 0) return undefined;
    this.failuresLeft--;
    return () => undefined;
  }
}
