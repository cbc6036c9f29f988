/**
 * Resident set size of the whole process (host thread + engine threads) while something runs.
 */

/** Sampling period: fine enough to catch a short-lived peak of a multi-second flood. */
const SAMPLE_MS = 20;

const MB = 2 ** 20;

/** Starts sampling from the current RSS; `stop()` returns `{ baseMB, peakMB, growthMB }`. */
export function startRssSampler() {
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, SAMPLE_MS);
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, process.memoryUsage.rss());
      return { baseMB: base / MB, peakMB: peak / MB, growthMB: (peak - base) / MB };
    },
  };
}
