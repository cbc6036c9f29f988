/**
 * Deliberate failures, for the tests only: reached through the internal test entry
 * (`agent-pty/internal/testing`), which sets a session's `FaultPlan`. A session without a plan never
 * gets here.
 */
import type { FaultPlan, ThreadFaultApi, ThreadFaultKind } from '../../shared/protocol.js';

/** Elements per allocation of the 'oom' fault: 512 KiB steps reach a small heap limit in moments. */
const OOM_STEP_ELEMENTS = 64 * 1024;

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

/** The control-plane calls a session task adds when its engine was created with fault injection. */
export function threadFaultApi(): ThreadFaultApi {
  return {
    crashThread: async (kind) => {
      // From outside any handler, after this call's reply went out (the host sees the death, not a throw).
      setTimeout(() => injectThreadFault(kind), 0);
    },
  };
}

/** Kills or wedges the engine thread (`ThreadFaultKind`). */
function injectThreadFault(kind: ThreadFaultKind): void {
  switch (kind) {
    case 'throw':
      throw new Error('injected engine thread crash');
    case 'exit':
      process.exit(1);
      break;
    case 'spin':
      for (;;) {
        // wedged: the event loop never turns again
      }
    case 'oom': {
      const hoard: number[][] = [];
      for (;;) hoard.push(new Array(OOM_STEP_ELEMENTS).fill(hoard.length));
    }
  }
}
