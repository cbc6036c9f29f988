/**
 * Standalone micro-benchmark (not run by `run.mjs`): the engine thread's cost per 100 MiB of the
 * workloads of SPEC §9 through the sanitizer, the output model and the scrollback — no pty, no
 * replier — as the session's OutputPipeline hands them to the sanitizer (line text takes the line-text
 * route, the rest `pushStyled`; the sanitizer knows the width, as the session's does). Compare with raw
 * node-pty's flood time on the same machine (bench/results: ~1.2–2.5 s per 100 MiB): a workload that
 * costs `c` s here adds about `c` to a flood's wall time on this 2-core machine.
 *
 *   node bench/output-model-cpu.mjs [MiB=24]   # MiB: size of each workload
 */
import { LineFeeds } from '../dist/worker/output/line-feeds.js';
import { LineRing } from '../dist/worker/output/line-ring.js';
import { LineTextKind, lineTextKind } from '../dist/worker/output/line-text.js';
import { OutputModel } from '../dist/worker/output/output-model.js';
import { OutputSanitizer } from '../dist/worker/output/sanitizer.js';

const READ_CHARS = 4_096;
const totalMiB = Number(process.argv[2] ?? 24);
if (!(totalMiB > 0))
  throw new Error(`usage: node bench/output-model-cpu.mjs [MiB=24], got ${process.argv[2]}`);
/** Characters of each workload (24 MiB unless given), cut into reads. */
const TOTAL_CHARS = Math.ceil(totalMiB * 2 ** 20);
const PASSES = 5;
const MIB_100 = 100 * 2 ** 20;

/** Repeats `unit` (a function of the repetition index) until TOTAL_CHARS, cut into pty-sized reads. */
function workload(unit) {
  const parts = [];
  let size = 0;
  for (let i = 0; size < TOTAL_CHARS; i++) {
    const piece = unit(i);
    parts.push(piece);
    size += piece.length;
  }
  const text = parts.join('');
  const reads = [];
  for (let at = 0; at < text.length; at += READ_CHARS)
    reads.push(` ${text.slice(at, at + READ_CHARS)}`.slice(1));
  return { reads, chars: text.length };
}

const line = (i) =>
  `2026-01-01T00:00:${String(i % 60).padStart(2, '0')} INFO worker-${i % 7} processed batch ${i} in ${i % 97} ms\r\n`;
const workloads = {
  'plain log': workload(line),
  'colored log': workload((i) => `\x1b[32m${line(i).slice(0, 24)}\x1b[0m${line(i).slice(24)}`),
  'UTF-8 text': workload((i) => `${i} 日本語のテキスト、絵文字 🚀 と ümlauts: ${'été '.repeat(i % 5)}\r\n`),
  '\\r progress': workload(
    (i) => `\rDownloading [${'#'.repeat(i % 40).padEnd(40)}] ${i % 100}%${i % 100 === 99 ? '\r\n' : ''}`,
  ),
  'backspace spinner': workload((i) => `${'|/-\\'[i % 4]}\b${i % 500 === 499 ? `done ${i}\r\n` : ''}`),
  'cursor-up progress': workload((i) => {
    if (i % 50 === 0)
      return 'layer-a: Waiting\r\nlayer-b: Waiting\r\nlayer-c: Waiting\r\nlayer-d: Waiting\r\n';
    let frame = '\x1b[4A';
    for (const layer of 'abcd')
      frame += `\r\x1b[2Klayer-${layer}: Downloading [${'='.repeat(i % 30)}>] ${i % 100} MB\r\n`;
    return frame;
  }),
};

function pipeline() {
  const ring = new LineRing({ maxLines: 10_000, maxBytes: 1 << 22 });
  const model = new OutputModel({ rows: 40, cols: 120, ring, maxLineChars: 1 << 20 });
  const sanitizer = new OutputSanitizer({ maxPendingChars: 1 << 20, columns: 120 });
  const sink = {
    text: (s) => model.text(s),
    newline: () => model.newline(),
    rewriteLine: () => model.rewriteLine(),
    textBlock: (block, ascii, lineFeeds) => model.textBlock(block, ascii, lineFeeds),
    osc: () => undefined,
    backspace: () => model.backspace(),
    csi: (params, final) => model.csi(params, final),
    escape: (final) => model.escape(final),
  };
  const lineFeeds = new LineFeeds();
  return (data) => {
    const kind = lineTextKind(data, lineFeeds);
    if (kind !== LineTextKind.None) {
      sanitizer.pushLineText(data, sink, kind === LineTextKind.Ascii, lineFeeds.known);
      return;
    }
    // The sanitizer's entry for everything else, as OutputPipeline.route uses it (without the replier).
    sanitizer.pushStyled(data, sink, lineFeeds);
  };
}

for (const [name, { reads, chars }] of Object.entries(workloads)) {
  let bestMs = Number.POSITIVE_INFINITY;
  for (let pass = 0; pass < PASSES; pass++) {
    const feed = pipeline();
    const started = performance.now();
    for (const read of reads) feed(read);
    bestMs = Math.min(bestMs, performance.now() - started);
  }
  console.log(`${name.padEnd(20)} ${((bestMs * MIB_100) / chars / 1000).toFixed(2)} s per 100 MiB`);
}
