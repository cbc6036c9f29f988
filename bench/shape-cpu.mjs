/**
 * Micro-benchmark (standalone, not part of `run.mjs`): the engine thread's CPU per MiB of each SPEC §9
 * output shape (bench/lib/workload-files.mjs: colored log, UTF-8, `\r` progress, backspace spinner,
 * cursor-up redraws), through a session's own decoder and `OutputPipeline` without the pty: 4 KiB reads
 * of bytes with CRLF line ends, each decoded (the build's `PtyTextDecoder`; node-pty's `StringDecoder`
 * for a build from before it) and written and processed as one pty read, with a listening send in the
 * slot (a flood runs inside a send) that only counts what it is told. Best of 5 passes per shape. A flood through a
 * pty moves ±30 % between runs on a shared VM; this moves a few percent, so it is the number to A/B
 * two builds with:
 *
 *   node bench/shape-cpu.mjs [ROOT ...] [--shapes=colored,utf8,progress,spinner,cursorUp] [--rounds=3]
 *
 * ROOT is a checkout or an `ab-builds.mjs` snapshot with a built `dist/` (default: this checkout); with
 * several, the rounds alternate them and the best of all rounds is reported per build and shape.
 */
import { existsSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath } from 'node:url';
import { sessionPipelines } from './lib/session-pipeline.mjs';
import { ensureWorkloadFile } from './lib/workload-files.mjs';

const READ_BYTES = 4096;
const PASSES = 5;
const FILE_BYTES = 8 * 2 ** 20;

const args = process.argv.slice(2);
const option = (name, fallback) =>
  args.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const roots = args.filter((arg) => !arg.startsWith('--'));
if (roots.length === 0) roots.push(fileURLToPath(new URL('..', import.meta.url)));
const shapes = option('shapes', 'colored,utf8,progress,spinner,cursorUp').split(',');
const rounds = Number(option('rounds', '3'));

/** The reads of each shape's file, as the pty hands them over (CRLF line ends, cut anywhere). */
const readsOf = Object.fromEntries(
  shapes.map((shape) => {
    const text = readFileSync(ensureWorkloadFile(shape, FILE_BYTES), 'utf8').replaceAll('\n', '\r\n');
    const bytes = Buffer.from(text, 'utf8');
    const reads = [];
    for (let at = 0; at < bytes.length; at += READ_BYTES) reads.push(bytes.subarray(at, at + READ_BYTES));
    return [shape, { reads, mib: bytes.length / 2 ** 20 }];
  }),
);

/** `() => decode(read) => [text, utf8?]`: how the build at `root` turns a pty read into text. */
async function decoderOf(root) {
  const path = `${root}/dist/worker/pty/pty-text-decoder.js`;
  if (!existsSync(path)) {
    return () => {
      const decoder = new StringDecoder('utf8');
      return (read) => [decoder.write(read), undefined];
    };
  }
  const { PtyTextDecoder } = await import(path);
  return () => {
    const decoder = new PtyTextDecoder();
    return (read) => [decoder.decode(read), decoder.exactUtf8];
  };
}

/** A send in the slot that only counts what it is told. */
function countingListener() {
  let calls = 0;
  const count = () => {
    calls++;
  };
  return {
    text: count,
    newline: count,
    textBlock: count,
    rewriteLine: count,
    rowEdits: count,
    markerArrived: count,
    endOfChunk: () => undefined,
    get calls() {
      return calls;
    },
  };
}

/** ms per MiB of `shape` through the pipeline of the build at `root`, best of `PASSES`. */
async function measure(root, shape) {
  const { create } = await sessionPipelines(root);
  const newDecoder = await decoderOf(root);
  const { reads, mib } = readsOf[shape];
  let best = Number.POSITIVE_INFINITY;
  for (let pass = 0; pass < PASSES; pass++) {
    const listener = countingListener();
    const pipeline = create(listener);
    const decode = newDecoder();
    const started = performance.now();
    for (const read of reads) {
      const [text, utf8] = decode(read);
      if (text !== '') pipeline.write(text, utf8);
      pipeline.flush();
    }
    await pipeline.whenParsed?.();
    best = Math.min(best, performance.now() - started);
    pipeline.dispose();
  }
  return best / mib;
}

const best = Object.fromEntries(roots.map((root) => [root, {}]));
for (let round = 0; round < rounds; round++) {
  for (const root of round % 2 === 0 ? roots : [...roots].reverse()) {
    for (const shape of shapes) {
      const ms = await measure(root, shape);
      best[root][shape] = Math.min(best[root][shape] ?? Number.POSITIVE_INFINITY, ms);
    }
  }
}
console.log(`pipeline CPU, ms per MiB (best of ${rounds} alternating rounds × ${PASSES} passes):`);
console.log(`| build | ${shapes.join(' | ')} |`);
console.log(`| --- | ${shapes.map(() => '---:').join(' | ')} |`);
for (const root of roots) {
  console.log(`| ${root} | ${shapes.map((shape) => best[root][shape].toFixed(2)).join(' | ')} |`);
}
