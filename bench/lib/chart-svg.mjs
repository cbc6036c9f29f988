/**
 * A hand-written SVG bar chart (no chart library) of the run's key numbers, in two panels:
 * 1. side-by-side ratios (metrics flagged `ratio`), log axis, with the target marked where one exists;
 * 2. every target as a headroom factor on a log axis: target ÷ measured for upper bounds, measured ÷
 *    target for lower bounds, so ≥ 1 passes in both cases. Correctness checks (counts of failures)
 *    are left out: the tables list them.
 */

const WIDTH = 900;
const LABEL_W = 430;
/** Longer labels are cut (the report's tables have them in full). */
const LABEL_MAX_CHARS = 70;
const BAR_X = LABEL_W + 10;
const BAR_W = WIDTH - BAR_X - 90;
const ROW_H = 24;
const BAR_H = 15;
const PANEL_GAP = 46;
const PASS = '#2e7d32';
const FAIL = '#c62828';
const INFO = '#607d8b';
/** Headroom axis bounds: factors beyond these are drawn at the edge (the label still shows the value). */
const LOG_MIN = 0.01;
const LOG_MAX = 100;

/** Renders the chart of `run` as an SVG document. */
export function renderChart(run) {
  const ratios = [];
  const headroom = [];
  for (const bench of run.benchmarks) {
    for (const m of bench.metrics) {
      if (!Number.isFinite(m.value)) continue;
      if (m.ratio) ratios.push(m);
      if (m.target !== undefined && !m.check) headroom.push({ m, bench: bench.name, factor: headroomOf(m) });
    }
  }
  const parts = [];
  let y = 30;
  parts.push(
    text(
      10,
      y,
      `agent-pty bench — ${run.machine.cpuCount}× ${run.machine.cpuModel}, Node ${run.machine.node}`,
      14,
      'bold',
    ),
  );
  y += 30;
  y = ratioPanel(parts, ratios, y);
  y += PANEL_GAP;
  y = headroomPanel(parts, headroom, y);
  const height = y + 20;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif">`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}

function ratioPanel(parts, ratios, y) {
  parts.push(
    text(
      10,
      y,
      'Side-by-side ratios (log axis; colour = target verdict, grey = no target; | = target)',
      13,
      'bold',
    ),
  );
  y += 12;
  y = axis(parts, y, logTicks());
  const top = y;
  const one = logScale(1);
  for (const m of ratios) {
    const colour = m.pass === undefined ? INFO : m.pass ? PASS : FAIL;
    parts.push(text(LABEL_W, y + BAR_H - 3, label(m.label), 11, 'normal', 'end'));
    bar(parts, one, logScale(m.value), y, colour, `${m.value}×`);
    if (m.target !== undefined) {
      const tx = logScale(m.target.value);
      parts.push(
        `<line x1="${tx}" y1="${y - 3}" x2="${tx}" y2="${y + BAR_H + 3}" stroke="#000" stroke-width="2"/>`,
      );
    }
    y += ROW_H;
  }
  parts.push(`<line x1="${one}" y1="${top - 8}" x2="${one}" y2="${y}" stroke="#000" stroke-width="1"/>`);
  return y;
}

function headroomPanel(parts, rows, y) {
  parts.push(
    text(
      10,
      y,
      'Targets: headroom factor (log axis; ≥ 1 passes — target÷measured for ≤, measured÷target for ≥)',
      13,
      'bold',
    ),
  );
  y += 12;
  y = axis(parts, y, logTicks());
  const top = y;
  const one = logScale(1);
  for (const { m, bench, factor } of rows) {
    parts.push(text(LABEL_W, y + BAR_H - 3, label(`${bench}: ${m.label}`), 11, 'normal', 'end'));
    const value = m.unit === '×' ? `${m.value}×` : `${m.value}${m.unit ? ` ${m.unit}` : ''}`;
    bar(parts, one, logScale(Number.isFinite(factor) ? factor : LOG_MAX), y, m.pass ? PASS : FAIL, value);
    y += ROW_H;
  }
  parts.push(`<line x1="${one}" y1="${top - 8}" x2="${one}" y2="${y}" stroke="#000" stroke-width="1"/>`);
  return y;
}

/** A bar from the 1× line to `x`, with its value label past the bar's outer end. */
function bar(parts, one, x, y, colour, label) {
  parts.push(rect(Math.min(one, x), y, Math.max(1, Math.abs(x - one)), BAR_H, colour));
  const labelX = x >= one ? x + 4 : x - 4;
  parts.push(text(labelX, y + BAR_H - 3, label, 11, 'normal', x >= one ? 'start' : 'end'));
}

function logScale(v) {
  const clamped = Math.min(LOG_MAX, Math.max(LOG_MIN, v));
  const span = Math.log10(LOG_MAX) - Math.log10(LOG_MIN);
  return BAR_X + ((Math.log10(clamped) - Math.log10(LOG_MIN)) / span) * BAR_W;
}

function logTicks() {
  return [0.01, 0.1, 1, 10, 100].map((v) => ({ x: logScale(v), label: `${v}×` }));
}

/** How many times over its target a metric is (≥ 1 passes); Infinity when the measured value is 0 under a ≤ target. */
function headroomOf(m) {
  const { op, value: target } = m.target;
  if (op === '>=') return target === 0 ? (m.value >= 0 ? Infinity : 0) : m.value / target;
  if (m.value <= 0) return m.value <= target ? Infinity : 0;
  return target / m.value;
}

function axis(parts, y, ticks) {
  y += 6;
  parts.push(`<line x1="${BAR_X}" y1="${y}" x2="${BAR_X + BAR_W}" y2="${y}" stroke="#999"/>`);
  for (const tick of ticks) {
    parts.push(`<line x1="${tick.x}" y1="${y - 3}" x2="${tick.x}" y2="${y + 3}" stroke="#999"/>`);
    parts.push(text(tick.x, y - 6, tick.label, 10, 'normal', 'middle', '#666'));
  }
  return y + 8;
}

function rect(x, y, w, h, fill) {
  return `<rect x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${h}" fill="${fill}"/>`;
}

function text(x, y, content, size, weight = 'normal', anchor = 'start', fill = '#222') {
  return `<text x="${typeof x === 'number' ? x.toFixed(1) : x}" y="${y}" font-size="${size}" font-weight="${weight}" text-anchor="${anchor}" fill="${fill}">${escapeXml(content)}</text>`;
}

/** A row label, cut to {@link LABEL_MAX_CHARS}. */
function label(content) {
  const s = String(content);
  return s.length > LABEL_MAX_CHARS ? `${s.slice(0, LABEL_MAX_CHARS - 1)}…` : s;
}

function escapeXml(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
}
