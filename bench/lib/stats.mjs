/**
 * Summary statistics of timing samples. Percentiles use the nearest-rank method on a sorted copy, so
 * p99 of 200 samples is the 198th smallest — an observed value, never an interpolation.
 */

/** Nearest-rank percentile `p` (0–100) of `samples`; NaN when there are none. */
export function percentile(samples, p) {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** `{ n, min, p50, p90, p99, max, mean }` of `samples`. */
export function summarize(samples) {
  const n = samples.length;
  const mean = n === 0 ? Number.NaN : samples.reduce((sum, x) => sum + x, 0) / n;
  return {
    n,
    min: n === 0 ? Number.NaN : Math.min(...samples),
    p50: percentile(samples, 50),
    p90: percentile(samples, 90),
    p99: percentile(samples, 99),
    max: n === 0 ? Number.NaN : Math.max(...samples),
    mean,
  };
}

/** Median of `samples` (p50). */
/** Arithmetic mean of `samples` (NaN when empty). */
export function mean(samples) {
  return samples.reduce((sum, value) => sum + value, 0) / samples.length;
}

export function median(samples) {
  return percentile(samples, 50);
}

/** Rounds to `digits` decimals (keeps JSON and tables readable). */
export function round(value, digits = 2) {
  if (!Number.isFinite(value)) return value;
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
