/** The Markdown report: machine, a summary of every target with its verdict, then each benchmark. */
import { describeTarget } from './metric.mjs';

/** Renders `run` (the object written to results.json) as Markdown. */
export function renderReport(run) {
  const { machine } = run;
  const lines = [
    '# agent-pty benchmark report',
    '',
    `Command: \`${run.command}\`${run.quick ? ' (quick mode: reduced sizes, not the reference run)' : ''} — ` +
      `${run.seconds} s in total.`,
    '',
    `Machine: ${machine.cpuCount} × ${machine.cpuModel}${machine.cpuMHz > 0 ? ` @ ${machine.cpuMHz} MHz` : ''}, ` +
      `${machine.totalMemMB} MiB RAM, ` +
      `${machine.platform}, Node ${machine.node}; load average at start ${machine.loadAvg.join(' / ')}; ` +
      `${machine.date}.`,
    '',
    `Source: commit ${machine.revision}` +
      (machine.uncommittedSources.length > 0
        ? ` plus uncommitted changes in ${machine.uncommittedSources.map((f) => `\`${f}\``).join(', ')}.`
        : ', clean src/.'),
    '',
    'Every ratio compares paths measured side by side in this one run. ![chart](chart.svg)',
    '',
    '## Targets (SPEC §9)',
    '',
    '| benchmark | metric | measured | target | verdict |',
    '|---|---|---:|---:|---|',
  ];
  for (const bench of run.benchmarks) {
    for (const m of bench.metrics.filter((x) => x.target !== undefined)) {
      lines.push(
        `| ${bench.name} | ${m.label} | ${formatValue(m)} | ${describeTarget(m.target, m.unit)} | ${verdict(m)} |`,
      );
    }
    if (bench.error !== undefined) lines.push(`| ${bench.name} | (benchmark failed) | — | — | **error** |`);
  }
  for (const bench of run.benchmarks) {
    lines.push('', `## ${bench.title} (\`${bench.name}\`, ${bench.seconds} s)`, '');
    if (bench.error !== undefined) {
      lines.push('The benchmark failed:', '', '```', bench.error, '```');
      continue;
    }
    lines.push('| metric | value | target | verdict |', '|---|---:|---:|---|');
    for (const m of bench.metrics) {
      lines.push(`| ${m.label} | ${formatValue(m)} | ${describeTarget(m.target, m.unit)} | ${verdict(m)} |`);
    }
    for (const note of bench.notes ?? []) lines.push('', `- ${note}`);
  }
  lines.push('');
  return lines.join('\n');
}

function formatValue(m) {
  if (typeof m.value !== 'number' || !Number.isFinite(m.value)) return String(m.value);
  return m.unit === '' ? String(m.value) : m.unit === '×' ? `${m.value}×` : `${m.value} ${m.unit}`;
}

function verdict(m) {
  if (m.pass === undefined) return m.target === undefined ? '' : 'not measured';
  return m.pass ? 'pass' : '**FAIL**';
}
