/**
 * Standalone profile (not run by `run.mjs`): where the time of a `true` send→settle goes (SPEC §9,
 * issue 24), against raw node-pty's `echo x` round trip in the same process.
 *
 *   node bench/latency-stages.mjs [sends per round]     # default 200; 5 alternating rounds; ~1 minute
 *
 * - **inline** — the engine's session core on this thread (bench/lib/inline-session.mjs), with
 *   `performance.now()` stamps wrapped onto the prototypes of dist/ from here (the product is not
 *   changed): `startSend` entered, the pty write done (`PtyInputWriter.write` returned), the first
 *   byte back (`OutputPipeline.write`), the prompt marker seen (`SendOperation.markerArrived`), the
 *   settle decided (`SendOperation.settle`) and `done` resolved; the `/proc` samples between.
 * - **engine** — `createPtyEngine()`, host-observed: `startSend` until `done`, the engine's own
 *   `elapsedMs` (its SendOperation's start until its settle), and a bare Comlink round trip
 *   (`status()` on the session's proxy) measured in the same rounds: host − engine is the hop.
 * - **engineOneCall / engineTwoCalls** — the A/B of the `send` call, both straight on the session's
 *   proxy: one `send`, against what the host did before it (`startSend`, then `awaitSend` once that
 *   answered); interleaved send by send within each round.
 * - **inlineHeld / inlineFresh** — the A/B of issue 24's held `/proc` descriptors: two inline cores, one
 *   sampling through its own `HeldProcFiles` (as the product does), the other with every file opened
 *   afresh (as before); interleaved send by send within each round; the time inside the samples too.
 * - **raw** — `echo x` until the echo and the prompt are back (bench/lib/raw-shell.mjs).
 *
 * Every figure is the median over the rounds of that round's p50 (or p99).
 */
import { performance } from 'node:perf_hooks';
import { createPtyEngine } from '../dist/main/index.js';
import { OutputPipeline } from '../dist/worker/output-pipeline.js';
import { freshProcFiles } from '../dist/worker/proc/proc-files.js';
import { PtyInputWriter } from '../dist/worker/pty/pty-input-writer.js';
import { SendOperation } from '../dist/worker/readiness/send-operation.js';
import { SessionCore } from '../dist/worker/session.js';
import { InlineSession } from './lib/inline-session.mjs';
import { RAW_PROMPT, RawShell } from './lib/raw-shell.mjs';
import { median, percentile, round } from './lib/stats.mjs';

const SENDS = Number(process.argv[2] ?? 200);
const ROUNDS = 5;
/** Unmeasured sends per path first: as in latency.mjs, V8 compiles the engine's code on its helper threads for the first thousands. */
const WARMUP = 2_500;

/** Stamps of the send in flight (inline only: the engine's prototypes live in another thread). */
let stamps;
const wrap = (proto, name, before) => {
  const original = proto[name];
  proto[name] = function wrapped(...args) {
    before(this, args);
    return original.apply(this, args);
  };
};
wrap(SessionCore.prototype, 'startSend', () => {
  stamps = { start: performance.now(), samples: 0, sampleMs: 0 };
});
{
  const original = PtyInputWriter.prototype.write;
  PtyInputWriter.prototype.write = function write(...args) {
    const outcome = original.apply(this, args);
    if (stamps !== undefined && stamps.written === undefined) stamps.written = performance.now();
    return outcome;
  };
}
wrap(OutputPipeline.prototype, 'write', () => {
  if (stamps !== undefined && stamps.firstByte === undefined) stamps.firstByte = performance.now();
});
wrap(SendOperation.prototype, 'markerArrived', () => {
  if (stamps !== undefined) stamps.marker ??= performance.now();
});
wrap(SendOperation.prototype, 'settle', () => {
  if (stamps !== undefined) stamps.settle ??= performance.now();
});
{
  const original = SessionCore.prototype.sampleNow;
  SessionCore.prototype.sampleNow = function sampleNow(...args) {
    const started = performance.now();
    const sample = original.apply(this, args);
    if (stamps !== undefined) {
      stamps.samples++;
      stamps.sampleMs += performance.now() - started;
    }
    return sample;
  };
}

const engine = await createPtyEngine();
const session = await engine.spawn();
const inline = await InlineSession.start();
/** The A/B of held `/proc` descriptors: the same inline core, its samples opening every file afresh. */
const inlineFresh = await InlineSession.start();
inlineFresh.core.procFiles.close();
inlineFresh.core.procFiles = { ...freshProcFiles, close: () => undefined };
const raw = await RawShell.start();
/** Send ids for the proxy calls of the A/B paths, far from the session's own. */
let proxyIds = 1_000_000;
/**
 * One event-loop turn after each engine send, outside the measured time, the same for every engine
 * path: the engine releases the send slot a few microtasks after the result, and a send arriving in
 * that window would measure the release, not the send.
 */
const idleTurn = () => new Promise((resolve) => setImmediate(resolve));
/** One `true` through an inline core, with its stages. */
async function inlineSend(core) {
  const { ms } = await core.send('true');
  const s = stamps;
  stamps = undefined;
  return {
    ms,
    toWritten: s.written - s.start,
    toFirstByte: s.firstByte - s.written,
    toMarker: s.marker - s.firstByte,
    toSettle: s.settle - s.marker,
    toDone: s.start + ms - s.settle,
    samples: s.samples,
    sampleMs: s.sampleMs,
  };
}
const rawEcho = (tail) => tail.endsWith(`\r\nx\r\n${RAW_PROMPT}`);
const paths = {
  raw: async () => {
    raw.type('echo x');
    return { ms: await raw.waitFor(rawEcho) };
  },
  inline: async () => inlineSend(inline),
  engine: async () => {
    const started = performance.now();
    const result = await session.startSend({ text: 'true' }).done;
    const ms = performance.now() - started;
    await idleTurn();
    return { ms, engineMs: result.elapsedMs, hopMs: ms - result.elapsedMs };
  },
  comlink: async () => {
    const started = performance.now();
    await session.status();
    return { ms: performance.now() - started };
  },
};
/**
 * The A/B of the "one thread call per send" change, both straight on the session's proxy: one `send`,
 * against what the host did before it (`startSend`, then `awaitSend` once that answered). Interleaved
 * send by send (the order swapping each pair), so the machine's drift hits both alike.
 */
const abPaths = {
  engineTwoCalls: async () => {
    const id = proxyIds++;
    const started = performance.now();
    await session.proxy.startSend(id, { text: 'true' });
    await session.proxy.awaitSend(id);
    const ms = performance.now() - started;
    await idleTurn();
    return { ms };
  },
  engineOneCall: async () => {
    const id = proxyIds++;
    const started = performance.now();
    await session.proxy.send(id, { text: 'true' });
    const ms = performance.now() - started;
    await idleTurn();
    return { ms };
  },
};
/** The A/B of held `/proc` descriptors (issue 24), interleaved send by send like the one above. */
const procPaths = {
  inlineHeld: async () => inlineSend(inline),
  inlineFresh: async () => inlineSend(inlineFresh),
};
const names = Object.keys(paths);
const perRound = Object.fromEntries(
  [...names, ...Object.keys(abPaths), ...Object.keys(procPaths)].map((n) => [n, []]),
);
try {
  for (const name of names) for (let i = 0; i < WARMUP; i++) await paths[name]();
  for (const name of Object.keys(abPaths)) for (let i = 0; i < WARMUP; i++) await abPaths[name]();
  for (const name of Object.keys(procPaths)) for (let i = 0; i < WARMUP; i++) await procPaths[name]();
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + r) % names.length];
      const samples = [];
      for (let i = 0; i < SENDS; i++) samples.push(await paths[name]());
      perRound[name].push(samples);
    }
    const ab = { engineOneCall: [], engineTwoCalls: [] };
    for (let i = 0; i < SENDS; i++) {
      const order = i % 2 === 0 ? ['engineOneCall', 'engineTwoCalls'] : ['engineTwoCalls', 'engineOneCall'];
      for (const name of order) ab[name].push(await abPaths[name]());
    }
    for (const name of Object.keys(ab)) perRound[name].push(ab[name]);
    const proc = { inlineHeld: [], inlineFresh: [] };
    for (let i = 0; i < SENDS; i++) {
      const order = i % 2 === 0 ? ['inlineHeld', 'inlineFresh'] : ['inlineFresh', 'inlineHeld'];
      for (const name of order) proc[name].push(await procPaths[name]());
    }
    for (const name of Object.keys(proc)) perRound[name].push(proc[name]);
  }
} finally {
  await raw.close();
  await inline.close();
  await inlineFresh.close();
  await engine.close();
}

/** Median over rounds of each round's percentile `p` of `field`. */
const stat = (name, field, p) =>
  round(
    median(
      perRound[name].map((s) =>
        percentile(
          s.map((x) => x[field]),
          p,
        ),
      ),
    ),
    3,
  );
const rows = [
  ['raw `echo x` round trip', 'raw', 'ms'],
  ['inline `true` send→settle', 'inline', 'ms'],
  ['  startSend → pty write done', 'inline', 'toWritten'],
  ['  write → first byte back', 'inline', 'toFirstByte'],
  ['  first byte → marker seen', 'inline', 'toMarker'],
  ['  marker → settle decided', 'inline', 'toSettle'],
  ['  settle → done resolved', 'inline', 'toDone'],
  ['  `/proc` samples per send', 'inline', 'samples'],
  ['  time in those samples', 'inline', 'sampleMs'],
  ['engine `true`, host-observed', 'engine', 'ms'],
  ['  engine-reported elapsedMs', 'engine', 'engineMs'],
  ['  host − engine (the two hops)', 'engine', 'hopMs'],
  ['A/B, through the proxy: one `send` call', 'engineOneCall', 'ms'],
  ['A/B, through the proxy: `startSend`, then `awaitSend` (before)', 'engineTwoCalls', 'ms'],
  ['bare Comlink round trip (`status()`)', 'comlink', 'ms'],
  ['A/B, inline: `/proc` descriptors held across samples', 'inlineHeld', 'ms'],
  ['  time in its samples', 'inlineHeld', 'sampleMs'],
  ['A/B, inline: every `/proc` file opened afresh (before)', 'inlineFresh', 'ms'],
  ['  time in its samples', 'inlineFresh', 'sampleMs'],
];
console.log('| stage | p50 ms | p99 ms |\n| --- | --- | --- |');
for (const [label, name, field] of rows)
  console.log(`| ${label} | ${stat(name, field, 50)} | ${stat(name, field, 99)} |`);
const oneBetter = perRound.engineOneCall.filter(
  (s, r) =>
    percentile(
      s.map((x) => x.ms),
      50,
    ) <
    percentile(
      perRound.engineTwoCalls[r].map((x) => x.ms),
      50,
    ),
).length;
console.log(`\nA/B: one call had the lower p50 in ${oneBetter} of ${ROUNDS} rounds`);
const roundP50 = (name, r) =>
  percentile(
    perRound[name][r].map((x) => x.ms),
    50,
  );
const heldBetter = perRound.inlineHeld.filter(
  (_, r) => roundP50('inlineHeld', r) < roundP50('inlineFresh', r),
).length;
console.log(`A/B: held /proc descriptors had the lower p50 in ${heldBetter} of ${ROUNDS} rounds`);
const rawP50 = stat('raw', 'ms', 50);
const rawP99 = stat('raw', 'ms', 99);
console.log(
  `\nengine − raw: p50 +${round(stat('engine', 'ms', 50) - rawP50, 3)} ms (target ≤ 0.45), p99 +${round(stat('engine', 'ms', 99) - rawP99, 3)} ms (target ≤ 2); ${SENDS} sends × ${ROUNDS} rounds per path`,
);
