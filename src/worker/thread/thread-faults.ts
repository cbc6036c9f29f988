/**
 * Deliberate deaths of an engine thread, for the tests only: the control-plane call a session task
 * adds when its engine was created through the internal test entry (`agent-pty/internal/testing`),
 * which throws, exits, wedges or exhausts the heap of the thread. An engine without fault injection
 * never gets here. A session's failed teardowns are containment/teardown-faults.ts.
 */
import { DisposableStore } from '../../shared/lifecycle.js';
import type { ThreadFaultApi, ThreadFaultKind } from '../../shared/protocol.js';

/** Elements per allocation of the 'oom' fault: 512 KiB steps reach a small heap limit in moments. */
const OOM_STEP_ELEMENTS = 64 * 1024;

/** The control-plane calls a session task adds when its engine was created with fault injection. */
export function threadFaultApi(): ThreadFaultApi {
  const faults = new DisposableStore();
  return {
    crashThread: async (kind) => {
      // From outside any handler, after this call's reply went out (the host sees the death, not a throw).
      faults.timeout('injected thread fault', 0, () => injectThreadFault(kind));
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
