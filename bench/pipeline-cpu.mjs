/**
 * Micro-benchmark (standalone, not part of `run.mjs`): the CPU the engine thread spends per read of a
 * flood, without the pty — the session's own `OutputPipeline` (src/worker/output-pipeline.ts: the
 * terminal model with its plain-run pass-through and scrollback, prompt evidence), fed ~4 KiB reads of
 * the flood log with CRLF line ends, each written and processed as one pty read; then the same log
 * with colored levels, through the same pipeline (its pass-through strips the colours). The
 * baseline, run in the same process on the same reads, is what raw node-pty pays per read anyway:
 * decoding the bytes into a string (`StringDecoder`). Timing the pipeline alone, best of several passes,
 * is far steadier than a flood through a pty on a shared machine, so it is the number to watch when
 * changing the hot path.
 *
 *   npm run build && node bench/pipeline-cpu.mjs [MiB=20]   # MiB: size of the log cut into reads
 */
import { readFileSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { LiveRingReader } from '../dist/shared/live-ring.js';
import { LineFeeds } from '../dist/worker/output/line-feeds.js';
import { LineRing } from '../dist/worker/output/line-ring.js';
import { lineTextKind } from '../dist/worker/output/line-text.js';
import { LiveOutputPublisher } from '../dist/worker/output/live-output.js';
import { ensureLogFile } from './lib/data-file.mjs';
import { sessionPipelines } from './lib/session-pipeline.mjs';

/** About one pty read during a flood, in bytes. */
const READ_BYTES = 4_400;
const PASSES = 12;
const MIB_100 = 100 * 2 ** 20;
const logMiB = Number(process.argv[2] ?? 20);
if (!(logMiB > 0)) throw new Error(`usage: node bench/pipeline-cpu.mjs [MiB=20], got ${process.argv[2]}`);
const logFile = ensureLogFile(Math.ceil(logMiB * 2 ** 20));
const pipelines = await sessionPipelines();
const { config } = pipelines;

const log = Buffer.from(readFileSync(logFile, 'latin1').replaceAll('\n', '\r\n'), 'latin1');
const reads = [];
for (let at = 0; at + READ_BYTES <= log.length; at += READ_BYTES)
  reads.push(log.subarray(at, at + READ_BYTES));
const bytes = reads.length * READ_BYTES;
// Flat strings, as the decoder hands them to the session.
const texts = reads.map((read) => ` ${read.toString('latin1')}`.slice(1));

/** Best time of `PASSES` runs of `pass`, scaled to 100 MiB; `settle` runs between passes, untimed. */
async function best(pass, settle = async () => undefined) {
  let bestMs = Number.POSITIVE_INFINITY;
  for (let r = 0; r < PASSES; r++) {
    const started = performance.now();
    pass();
    bestMs = Math.min(bestMs, performance.now() - started);
    await settle();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return (bestMs * MIB_100) / bytes;
}

const decoder = new StringDecoder('utf8');
const decodeMs = await best(() => {
  for (const read of reads) decoder.write(read);
});

/** The session's pipeline with no send in the slot, no live stream and replies dropped: a flood between sends. */
const sessionPipeline = () => pipelines.create(undefined);

/** Each text as one pty read through `pipeline`, processed at once (as the session's next turn would). */
const feedReads = (pipeline, reads) => () => {
  for (const text of reads) {
    pipeline.write(text);
    pipeline.flush();
  }
};

const plainPipeline = sessionPipeline();
const pipelineMs = await best(feedReads(plainPipeline, texts), () => plainPipeline.whenParsed());
plainPipeline.dispose();
// The scrollback's share, with the line feeds each read's scan found (taken outside the timing).
const lineFeeds = new LineFeeds();
const ring = new LineRing({ maxLines: config.scrollbackLines, maxBytes: config.scrollbackMaxBytes });
const scans = texts.map((text) => {
  lineTextKind(text, lineFeeds);
  return lineFeeds.positions.slice(0, lineFeeds.count);
});
const ringMs = await best(() => {
  for (let i = 0; i < texts.length; i++) {
    lineFeeds.positions = scans[i];
    lineFeeds.count = scans[i].length;
    ring.textBlock(texts[i], true, lineFeeds);
  }
});

// A colored log (an SGR around each line's level, as test runners and build tools print on a tty):
// the pipeline's own routing (styled line text), against the state machine alone.
const colored = Buffer.from(
  readFileSync(logFile, 'latin1')
    .replace(/ (INFO|DEBUG|WARN|ERROR) /g, ' \x1b[32m$1\x1b[0m ')
    .replaceAll('\n', '\r\n'),
  'latin1',
);
const coloredTexts = [];
for (let at = 0; at + READ_BYTES <= colored.length; at += READ_BYTES)
  coloredTexts.push(colored.subarray(at, at + READ_BYTES).toString('latin1'));
const coloredBytes = coloredTexts.length * READ_BYTES;
const perColoredMiB = (ms) => (ms * bytes) / coloredBytes; // `best` scales by the plain log's size
const styledPipeline = sessionPipeline();
const coloredStyledMs = perColoredMiB(
  await best(feedReads(styledPipeline, coloredTexts), () => styledPipeline.whenParsed()),
);
styledPipeline.dispose();
// Live output: the engine's share (batching, CRLF → LF, the copy into the ring), and the host's
// (decoding the records into strings), as the difference of a pass that also decodes.
const channel = new MessageChannel();
const publisher = new LiveOutputPublisher(channel.port1);
publisher.setEnabled(true);
const liveReader = new LiveRingReader(receiveMessageOnPort(channel.port2).message.buffer);
/** Publishes every read, the host side reading the ring every 32 reads (`decode`: into strings). */
const livePass = (decode) => () => {
  let chars = 0;
  const deliver = decode ? (text) => (chars += text.length) : undefined;
  texts.forEach((text, i) => {
    publisher.textBlock(text, true);
    if (i % 32 === 31) liveReader.drain(deliver);
  });
  liveReader.drain(deliver);
};
const liveEngineMs = await best(livePass(false));
const liveHostMs = (await best(livePass(true))) - liveEngineMs;
publisher.dispose();
channel.port2.close();

console.log(`decode (raw node-pty's share)  ${decodeMs.toFixed(1)} ms per 100 MiB`);
console.log(
  `session pipeline               ${pipelineMs.toFixed(1)} ms per 100 MiB  (${(pipelineMs / decodeMs).toFixed(2)} × decode)`,
);
console.log(`  of which the scrollback      ${ringMs.toFixed(1)} ms per 100 MiB`);
console.log(`colored log, session pipeline  ${coloredStyledMs.toFixed(1)} ms per 100 MiB`);
console.log(
  `live output: engine thread     ${liveEngineMs.toFixed(1)} ms per 100 MiB; host thread ${liveHostMs.toFixed(1)} ms`,
);
