/**
 * Host event-loop delay while something runs, with `perf_hooks.monitorEventLoopDelay`.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Sampling period of the histogram in ms. Node records the time between consecutive ticks of a timer
 * with this period, so every value includes the period itself: reported delays are conservative by
 * up to this much.
 */
export const LOOP_RESOLUTION_MS = 1;

const NS_PER_MS = 1e6;

/** Starts measuring; `stop()` returns `{ p50, p99, max, samples }` in ms. */
export function startLoopMonitor() {
  const histogram = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  histogram.enable();
  return {
    stop() {
      histogram.disable();
      return {
        p50: histogram.percentile(50) / NS_PER_MS,
        p99: histogram.percentile(99) / NS_PER_MS,
        max: histogram.max / NS_PER_MS,
        samples: histogram.count,
      };
    },
  };
}
