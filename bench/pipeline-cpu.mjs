/**
 * Micro-benchmark (standalone, not part of `run.mjs`): the CPU the engine thread spends per read of a
 * flood, without the pty — the line-text check, the replier, the sanitizer and the scrollback, fed ~4 KiB
 * reads of the flood log with CRLF line ends as the session's `processOutput` feeds them; then the same
 * log with colored levels, routed as styled line text against the sanitizer's state machine alone. The baseline,
 * run in the same process on the same reads, is what raw node-pty pays per read anyway: decoding the
 * bytes into a string (`StringDecoder`). Timing the pipeline alone, best of several passes, is far steadier
 * than a flood through a pty on a shared machine, so it is the number to watch when changing the hot path.
 *
 *   npm run build && node bench/pipeline-cpu.mjs
 */
import { readFileSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { LiveRingReader } from '../dist/shared/live-ring.js';
import { LineFeeds } from '../dist/worker/output/line-feeds.js';
import { LineRing } from '../dist/worker/output/line-ring.js';
import { LineTextKind, lineTextKind } from '../dist/worker/output/line-text.js';
import { LiveOutputPublisher } from '../dist/worker/output/live-output.js';
import { OutputSanitizer, withoutStyles } from '../dist/worker/output/sanitizer.js';
import { TerminalReplier } from '../dist/worker/replies/terminal-replier.js';
import { ensureLogFile } from './lib/data-file.mjs';

/** About one pty read during a flood, in bytes. */
const READ_BYTES = 4_400;
const PASSES = 12;
const MIB_100 = 100 * 2 ** 20;

const log = Buffer.from(
  readFileSync(ensureLogFile(20 * 2 ** 20), 'latin1').replaceAll('\n', '\r\n'),
  'latin1',
);
const reads = [];
for (let at = 0; at + READ_BYTES <= log.length; at += READ_BYTES)
  reads.push(log.subarray(at, at + READ_BYTES));
const bytes = reads.length * READ_BYTES;
// Flat strings, as the decoder hands them to the session.
const texts = reads.map((read) => ` ${read.toString('latin1')}`.slice(1));

/** Best time of `PASSES` runs of `pass`, scaled to 100 MiB. */
async function best(pass) {
  let bestMs = Number.POSITIVE_INFINITY;
  for (let r = 0; r < PASSES; r++) {
    const started = performance.now();
    pass();
    bestMs = Math.min(bestMs, performance.now() - started);
    await new Promise((resolve) => setImmediate(resolve)); // let the replier's scheduled work run
  }
  return (bestMs * MIB_100) / bytes;
}

const decoder = new StringDecoder('utf8');
const decodeMs = await best(() => {
  for (const read of reads) decoder.write(read);
});

/** A session's consumers of one read: the replier, the sanitizer and the scrollback behind it. */
function pipeline() {
  const replier = new TerminalReplier({ cols: 120, rows: 40, reply: () => undefined });
  const sanitizer = new OutputSanitizer({ maxPendingChars: 256 * 1024 });
  const ring = new LineRing({ maxLines: 10_000, maxBytes: 4 * 2 ** 20 });
  const sink = {
    text: (s) => ring.text(s),
    newline: () => ring.newline(),
    rewriteLine: () => ring.rewriteLine(),
    textBlock: (block, ascii, lineFeeds) => ring.textBlock(block, ascii, lineFeeds),
    osc: () => undefined,
  };
  return { replier, sanitizer, ring, sink };
}

const { replier, sanitizer, ring, sink } = pipeline();
const lineFeeds = new LineFeeds();
const pipelineMs = await best(() => {
  for (const text of texts) {
    const kind = lineTextKind(text, lineFeeds);
    if (kind === LineTextKind.None) throw new Error('a log read is not line text');
    replier.feedLineText(text, lineFeeds.known);
    sanitizer.pushLineText(text, sink, kind === LineTextKind.Ascii, lineFeeds.known);
  }
});
// The scrollback's share, with the line feeds each read's scan found (taken outside the timing).
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
replier.dispose();

// A colored log (an SGR around each line's level, as test runners and build tools print on a tty):
// the session's routing for reads that are not line text, against the state machine alone.
const colored = Buffer.from(
  readFileSync(ensureLogFile(20 * 2 ** 20), 'latin1')
    .replace(/ (INFO|DEBUG|WARN|ERROR) /g, ' \x1b[32m$1\x1b[0m ')
    .replaceAll('\n', '\r\n'),
  'latin1',
);
const coloredTexts = [];
for (let at = 0; at + READ_BYTES <= colored.length; at += READ_BYTES)
  coloredTexts.push(colored.subarray(at, at + READ_BYTES).toString('latin1'));
const coloredBytes = coloredTexts.length * READ_BYTES;
const perColoredMiB = (ms) => (ms * bytes) / coloredBytes; // `best` scales by the plain log's size
/** The colored reads through a fresh pipeline; `styled`: route styled line text as the session does. */
function coloredPass(styled) {
  const { replier, sanitizer, sink } = pipeline();
  return () => {
    for (const text of coloredTexts) {
      replier.feed(text);
      const plain = styled ? withoutStyles(text) : undefined;
      const kind = plain === undefined ? LineTextKind.None : lineTextKind(plain, lineFeeds);
      if (plain === undefined || kind === LineTextKind.None) sanitizer.push(text, sink);
      else sanitizer.pushStyledLineText(text, plain, sink, kind === LineTextKind.Ascii, lineFeeds.known);
    }
  };
}
const coloredStyledMs = perColoredMiB(await best(coloredPass(true)));
const coloredGeneralMs = perColoredMiB(await best(coloredPass(false)));

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
console.log(
  `colored log, session pipeline  ${coloredStyledMs.toFixed(1)} ms per 100 MiB  (state machine alone: ${coloredGeneralMs.toFixed(1)})`,
);
console.log(
  `live output: engine thread     ${liveEngineMs.toFixed(1)} ms per 100 MiB; host thread ${liveHostMs.toFixed(1)} ms`,
);
