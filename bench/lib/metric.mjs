/**
 * One reported number. Benchmarks return lists of metrics; the report, the JSON and the chart are all
 * built from them, so a target and its verdict are written down exactly once.
 */

/**
 * A metric. `target` is `{ op: '<=' | '>=', value }` when the SPEC sets one; `pass` is then computed
 * here (undefined when there is no target or the value could not be measured).
 * `ratio: true` marks side-by-side ratios, which the chart plots.
 */
export function metric({ id, label, value, unit = '', target, ratio = false, check = false }) {
  let pass;
  if (target !== undefined && Number.isFinite(value)) {
    pass = target.op === '<=' ? value <= target.value : value >= target.value;
  }
  return { id, label, value, unit, target, pass, ratio, check };
}

/**
 * A correctness check counted over a benchmark's runs (sends not proven, processes left, …): passes
 * at zero failures. Shown in the tables; the chart leaves it out (a count of 0 has no headroom).
 */
export function check({ id, label, failures }) {
  return metric({ id, label, value: failures, target: { op: '<=', value: 0 }, check: true });
}

/** `≤ 5 ms`-style text of a target, or '' when there is none. */
export function describeTarget(target, unit = '') {
  if (target === undefined) return '';
  const op = target.op === '<=' ? '≤' : '≥';
  if (unit === '×') return `${op} ${target.value}×`;
  return `${op} ${target.value}${unit === '' ? '' : ` ${unit}`}`;
}
