/**
 * Execution worlds (SPEC §10): what the link costs. Three paths, in one run:
 * - in-process: `createPtyEngine()` in this process;
 * - pipe: `createRemoteEngine` over `node dist/main/cli/bin.js serve --stdio` (a local pipe);
 * - ssh: the same through `ssh 127.0.0.1` to a private sshd this benchmark starts (skipped, with a
 *   note, when sshd is not installed).
 * Measured on each: send→settle of `true` (host-observed), a 100 MB flood send→settle (only the
 * bounded result crosses the link), and the same flood with a live `onOutput` subscriber (the whole
 * output crosses the link, flow-controlled: what is not delivered is counted as dropped).
 */
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createPtyEngine, createRemoteEngine } from '../dist/main/index.js';
import { check, metric } from './lib/metric.mjs';
import { sshAvailable, startSshd } from './lib/sshd.mjs';
import { round, summarize } from './lib/stats.mjs';

const BIN = fileURLToPath(new URL('../dist/main/cli/bin.js', import.meta.url));
const SERVE = [process.execPath, BIN, 'serve', '--stdio'];

/** Sends of `true` per path, split into alternating rounds, after unmeasured warm-ups. */
const SENDS_FULL = 300;
const SENDS_QUICK = 60;
const ROUNDS = 3;
const WARMUP = 20;
/** SPEC §10: flood bytes (100 MB), and a small one for --quick. */
const FLOOD_BYTES_FULL = 100_000_000;
const FLOOD_BYTES_QUICK = 8_000_000;
/** Floods per path and kind, alternating paths (throughput on this machine varies ±20 % per flood). */
const FLOOD_ROUNDS_FULL = 3;
const FLOOD_ROUNDS_QUICK = 1;
/** Far beyond a flood's duration: a flood must settle at its prompt. */
const FLOOD_TIMEOUT_MS = 600_000;
/** Targets of SPEC §10. */
const TARGET_FLOOD_RATIO_SSH = 0.5;
const TARGET_ADDED_LATENCY_PIPE_MS = 1;

export default {
  name: 'worlds',
  title: 'Execution worlds: latency and throughput of the link',
  async run({ quick, log }) {
    const sshd = sshAvailable() ? await startSshd() : undefined;
    const config = { timeoutMs: FLOOD_TIMEOUT_MS };
    const paths = { 'in-process': await createPtyEngine(config) };
    try {
      paths.pipe = await createRemoteEngine({ command: SERVE, config });
      if (sshd !== undefined) {
        paths.ssh = await createRemoteEngine({ command: sshd.ssh(...SERVE), config });
      }
      return await measure({ quick, log, paths });
    } finally {
      await Promise.allSettled(Object.values(paths).map((engine) => engine.close()));
      await sshd?.stop();
    }
  },
};

async function measure({ quick, log, paths }) {
  const names = Object.keys(paths);
  const sessions = {};
  for (const name of names) sessions[name] = await paths[name].spawn();
  let unproven = 0;

  // 1. send→settle of `true`.
  const sends = quick ? SENDS_QUICK : SENDS_FULL;
  const latency = Object.fromEntries(names.map((name) => [name, []]));
  const sendTrue = async (name, record) => {
    const started = performance.now();
    const result = await sessions[name].startSend({ text: 'true' }).done;
    if (!record) return;
    latency[name].push(performance.now() - started);
    if (result.waitReason !== 'stdin_read') unproven++;
  };
  for (const name of names) for (let i = 0; i < WARMUP; i++) await sendTrue(name, false);
  for (let r = 0; r < ROUNDS; r++) {
    for (const name of names) for (let i = 0; i < Math.ceil(sends / ROUNDS); i++) await sendTrue(name, true);
  }
  const lat = Object.fromEntries(names.map((name) => [name, summarize(latency[name])]));
  log(`true p50: ${names.map((name) => `${name} ${round(lat[name].p50)} ms`).join(', ')}`);

  // 2. floods, without and with a live subscriber, paths alternating within each round.
  const bytes = quick ? FLOOD_BYTES_QUICK : FLOOD_BYTES_FULL;
  const command = `head -c ${bytes} /dev/zero | tr '\\0' a | fold -w 100; echo`;
  const floods = Object.fromEntries(names.map((name) => [name, { plain: [], live: [] }]));
  const rounds = quick ? FLOOD_ROUNDS_QUICK : FLOOD_ROUNDS_FULL;
  for (let r = 0; r < rounds; r++) {
    for (const kind of ['plain', 'live']) {
      for (const name of names.map((_, i) => names[(i + r) % names.length])) {
        const run = await flood(sessions[name], command, kind === 'live');
        if (run.waitReason !== 'stdin_read') unproven++;
        floods[name][kind].push(run);
        log(
          `round ${r + 1}: ${kind} flood ${name} ${round(run.ms)} ms${kind === 'live' ? `, ${round(run.delivered * 100)} % delivered live` : ''}`,
        );
      }
    }
  }
  const meanMs = (name, kind) => floods[name][kind].reduce((sum, run) => sum + run.ms, 0) / rounds;
  const mbps = (name, kind) => round(bytes / 1e6 / (meanMs(name, kind) / 1000), 1);
  const delivered = (name) =>
    round((floods[name].live.reduce((sum, run) => sum + run.delivered, 0) / rounds) * 100, 1);

  const metrics = [];
  for (const name of names) {
    metrics.push(
      metric({
        id: `${name}.true.p50`,
        label: `${name}: \`true\` send→settle p50`,
        value: round(lat[name].p50),
        unit: 'ms',
      }),
      metric({
        id: `${name}.true.p99`,
        label: `${name}: \`true\` send→settle p99`,
        value: round(lat[name].p99),
        unit: 'ms',
      }),
      metric({
        id: `${name}.flood.mbps`,
        label: `${name}: ${bytes / 1e6} MB flood send→settle`,
        value: mbps(name, 'plain'),
        unit: 'MB/s',
      }),
      metric({
        id: `${name}.live.mbps`,
        label: `${name}: flood with a live subscriber`,
        value: mbps(name, 'live'),
        unit: 'MB/s',
      }),
      metric({
        id: `${name}.live.delivered`,
        label: `${name}: share of the flood delivered live`,
        value: delivered(name),
        unit: '%',
      }),
    );
  }
  const base = 'in-process';
  for (const name of names.filter((candidate) => candidate !== base)) {
    metrics.push(
      metric({
        id: `${name}.true.added`,
        label: `${name}: \`true\` p50 added over in-process`,
        value: round(lat[name].p50 - lat[base].p50),
        unit: 'ms',
        ...(name === 'pipe' ? { target: { op: '<=', value: TARGET_ADDED_LATENCY_PIPE_MS } } : {}),
      }),
      metric({
        id: `${name}.flood.ratio`,
        label: `${name}: flood throughput ÷ in-process`,
        value: round(meanMs(base, 'plain') / meanMs(name, 'plain')),
        unit: '×',
        ratio: true,
        ...(name === 'ssh' ? { target: { op: '>=', value: TARGET_FLOOD_RATIO_SSH } } : {}),
      }),
      metric({
        id: `${name}.live.ratio`,
        label: `${name}: flood with live subscriber, throughput ÷ in-process`,
        value: round(meanMs(base, 'live') / meanMs(name, 'live')),
        unit: '×',
        ratio: true,
      }),
    );
  }
  metrics.push(check({ id: 'unproven', label: 'sends not settled as stdin_read', failures: unproven }));
  return {
    metrics,
    details: { latency: lat, floods },
    notes: [
      `${latency[base].length} measured \`true\` sends per path after ${WARMUP} warm-ups, in ${ROUNDS} alternating rounds.`,
      `${rounds} flood round(s) of ${bytes / 1e6} MB per path and kind, paths rotating; throughput from mean times.`,
      'A plain flood carries only the bounded result over the link; a live flood carries the whole output, ' +
        'flow-controlled (1 Mi characters in flight per session): what the link cannot carry in time is dropped and counted.',
      ...(names.includes('ssh') ? [] : ['ssh path skipped: sshd, ssh or ssh-keygen is not installed.']),
    ],
  };
}

/** One flood: time from startSend to the settle; with `live`, the share of characters delivered live. */
async function flood(session, command, live) {
  let received = 0;
  let dropped = 0;
  const subscription = live
    ? session.onOutput((chunk) => {
        received += chunk.text.length;
        dropped += chunk.dropped;
      })
    : undefined;
  const started = performance.now();
  const result = await session.startSend({ text: command }).done;
  const ms = performance.now() - started;
  // Live output still in flight when the send settled is counted too (it was not dropped).
  if (live) await new Promise((resolve) => setTimeout(resolve, 200));
  subscription?.dispose();
  const total = received + dropped;
  return { ms, waitReason: result.waitReason, delivered: total === 0 ? 0 : received / total };
}
