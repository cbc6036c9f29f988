/**
 * Benchmark 1 (SPEC §9): send→settle latency of `true`.
 *
 * Three paths, measured in interleaved rounds so machine noise hits them alike:
 * - engine: `session.startSend({ text: 'true' }).done` on the host thread (the engine thread does the
 *   work; the time includes both Comlink hops). The engine's own `elapsedMs` is reported alongside.
 * - inline: the same session core on the host thread (no thread hop).
 * - raw: node-pty on the host thread, `echo x` typed, until the echoed `x` line and the prompt arrived —
 *   the floor any pty round trip pays (bash reads, forks nothing, prints, prompts).
 *
 * SPEC §9's target is relative: engine p50 ≤ raw p50 + 0.45 ms and p99 ≤ raw p99 + 2 ms, each the median
 * over 5 alternating rounds of that round's difference.
 */
import { performance } from 'node:perf_hooks';
import { createPtyEngine } from '../dist/main/index.js';
import { InlineSession } from './lib/inline-session.mjs';
import { check, metric } from './lib/metric.mjs';
import { RAW_PROMPT, RawShell } from './lib/raw-shell.mjs';
import { median, round, summarize } from './lib/stats.mjs';

/** Measured sends per path and round (the SPEC asks for p99 over at least 200). */
const SENDS_FULL = 200;
const SENDS_QUICK = 40;
/** SPEC §9: `true` through the engine, host-observed, against raw node-pty's echo in the same run. */
const TARGET_ADDED_P50_MS = 0.45;
const TARGET_ADDED_P99_MS = 2;
/** SPEC §9: median of 5 alternating rounds. */
const ROUNDS = 5;
/**
 * Unmeasured sends per path before the rounds. An engine lives for many sends; its first thousands run
 * code V8 is still compiling on its background threads, and on 2 cores those threads take the CPU bash
 * needs (measured 2026-12-03, `true` inline, per 150 sends: 36–53 ms of V8 helper-thread CPU and 7–12
 * sends over 1.5 ms in the first 600, 1–2 ms and 0–1 slow after 2 500; of 81 sends over 1.5 ms, 80 ran
 * while the helpers ran more than 0.5 ms; bash's run-queue wait in them 1.5–3.5 ms). After 400 warm-ups
 * the rounds still caught that compilation (p99 +3.0 ms over raw); after 2 500 they measure the steady
 * state. The first sends after the spawn are reported on their own (`cold`), with no target.
 */
const WARMUP_FULL = 2_500;
const WARMUP_QUICK = 20;
/** The first sends of a fresh engine session, reported as `cold`. */
const COLD_SENDS = 50;

export default {
  name: 'latency',
  title: 'Send→settle latency of `true`',
  async run({ quick, log }) {
    const sends = quick ? SENDS_QUICK : SENDS_FULL;
    const warmup = quick ? WARMUP_QUICK : WARMUP_FULL;
    const engine = await createPtyEngine();
    const session = await engine.spawn();
    const inline = await InlineSession.start();
    const raw = await RawShell.start();
    const rawEcho = (tail) => tail.endsWith(`\r\nx\r\n${RAW_PROMPT}`);
    /** rounds[r][path]: that round's samples. */
    const rounds = [];
    const cold = [];
    /** The engine's warm-up sends, reported with no target: what a session's first thousands pay. */
    const warming = [];
    let unproven = 0;
    try {
      const engineSend = async (into) => {
        const started = performance.now();
        const result = await session.startSend({ text: 'true' }).done;
        const ms = performance.now() - started;
        if (result.waitReason !== 'stdin_read') unproven++;
        into?.engine.push(ms);
        into?.engineReported.push(result.elapsedMs);
        return ms;
      };
      const inlineSend = async (into) => {
        const { result, ms } = await inline.send('true');
        if (result.waitReason !== 'stdin_read') unproven++;
        into?.inline.push(ms);
      };
      const rawSend = async (into) => {
        raw.type('echo x');
        const ms = await raw.waitFor(rawEcho);
        into?.raw.push(ms);
      };
      for (let i = 0; i < COLD_SENDS; i++) cold.push(await engineSend(undefined));
      for (let i = 0; i < warmup; i++) {
        warming.push(await engineSend(undefined));
        await inlineSend(undefined);
        await rawSend(undefined);
      }
      // Each round runs the paths in blocks, the order rotating: drift that comes and goes meets each.
      const paths = [engineSend, inlineSend, rawSend];
      for (let r = 0; r < ROUNDS; r++) {
        const into = { engine: [], engineReported: [], inline: [], raw: [] };
        for (let k = 0; k < paths.length; k++) {
          const path = paths[(k + r) % paths.length];
          for (let i = 0; i < sends; i++) await path(into);
        }
        rounds.push(into);
        log(`round ${r + 1}/${ROUNDS} done`);
      }
    } finally {
      await raw.close();
      await inline.close();
      await engine.close();
    }
    /** Median over the rounds of each round's percentile `p` of `path`. */
    const overRounds = (path, p) => median(rounds.map((into) => summarize(into[path])[p]));
    /** Median over the rounds of each round's engine − raw difference at percentile `p`. */
    const addedOverRaw = (p) =>
      median(rounds.map((into) => summarize(into.engine)[p] - summarize(into.raw)[p]));
    const e = { p50: overRounds('engine', 'p50'), p99: overRounds('engine', 'p99') };
    const er = { p50: overRounds('engineReported', 'p50'), p99: overRounds('engineReported', 'p99') };
    const il = { p50: overRounds('inline', 'p50'), p99: overRounds('inline', 'p99') };
    const rw = { p50: overRounds('raw', 'p50'), p99: overRounds('raw', 'p99') };
    const added = { p50: addedOverRaw('p50'), p99: addedOverRaw('p99') };
    const coldSummary = summarize(cold);
    const warmingSummary = summarize(warming);
    return {
      metrics: [
        metric({
          id: 'added.p50',
          label: 'engine `true` p50 − raw echo p50 (host-observed; median over rounds)',
          value: round(added.p50, 3),
          unit: 'ms',
          target: { op: '<=', value: TARGET_ADDED_P50_MS },
        }),
        metric({
          id: 'added.p99',
          label: 'engine `true` p99 − raw echo p99 (median over rounds)',
          value: round(added.p99, 3),
          unit: 'ms',
          target: { op: '<=', value: TARGET_ADDED_P99_MS },
        }),
        metric({
          id: 'engine.p50',
          label: 'engine `true` p50 (host-observed)',
          value: round(e.p50, 3),
          unit: 'ms',
        }),
        metric({
          id: 'engine.p99',
          label: 'engine `true` p99 (host-observed)',
          value: round(e.p99),
          unit: 'ms',
        }),
        metric({
          id: 'engine.reported.p50',
          label: 'engine `true` p50 (engine-reported elapsedMs)',
          value: round(er.p50),
          unit: 'ms',
        }),
        metric({
          id: 'engine.reported.p99',
          label: 'engine `true` p99 (engine-reported elapsedMs)',
          value: round(er.p99),
          unit: 'ms',
        }),
        metric({ id: 'inline.p50', label: 'inline core `true` p50', value: round(il.p50), unit: 'ms' }),
        metric({ id: 'inline.p99', label: 'inline core `true` p99', value: round(il.p99), unit: 'ms' }),
        metric({
          id: 'raw.p50',
          label: 'raw node-pty `echo x` round trip p50',
          value: round(rw.p50),
          unit: 'ms',
        }),
        metric({
          id: 'raw.p99',
          label: 'raw node-pty `echo x` round trip p99',
          value: round(rw.p99),
          unit: 'ms',
        }),
        metric({
          id: 'ratio.p50',
          label: 'engine p50 ÷ raw echo p50',
          value: round(e.p50 / rw.p50),
          unit: '×',
          ratio: true,
        }),
        metric({
          id: 'ratio.p99',
          label: 'engine p99 ÷ raw echo p99',
          value: round(e.p99 / rw.p99),
          unit: '×',
        }),
        metric({
          id: 'cold.p50',
          label: `engine \`true\` p50 over the first ${COLD_SENDS} sends of a fresh session (no target)`,
          value: round(coldSummary.p50, 3),
          unit: 'ms',
        }),
        metric({
          id: 'warming.p50',
          label: `engine \`true\` p50 over the ${warmup} warm-up sends that follow (no target)`,
          value: round(warmingSummary.p50, 3),
          unit: 'ms',
        }),
        metric({
          id: 'warming.p99',
          label: `engine \`true\` p99 over those warm-up sends (no target)`,
          value: round(warmingSummary.p99, 3),
          unit: 'ms',
        }),
        check({ id: 'unproven', label: 'sends not settled as stdin_read', failures: unproven }),
      ],
      details: {
        sendsPerRound: sends,
        rounds,
        cold: coldSummary,
        warming: warmingSummary,
        engine: e,
        engineReported: er,
        inline: il,
        raw: rw,
      },
      notes: [
        `${ROUNDS} rounds of ${sends} sends per path (blocks, the order rotating each round) after ${COLD_SENDS} cold and ${warmup} warm-up sends per path; each figure is the median over the rounds (SPEC §9).`,
        'Host-observed = from `startSend()` to `done` resolving on the host thread (includes both thread hops).',
      ],
    };
  },
};
