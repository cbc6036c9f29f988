/**
 * Session limits (SPEC §4.8): what they cost, and what they buy.
 *
 * - Spawn: `engine.spawn()` p50 with the default cgroups (v2 containment + limits) and with the v2
 *   containment off (`cgroupRoot` a plain directory: limits only), and the launcher alone, joining no
 *   cgroup, the v2 one, the limit cgroups, or all — the cgroup moves are what a spawn pays.
 * - Flood: `cat` of a log file in raw node-pty, with bash plain and with bash inside limit cgroups
 *   made as the engine makes them (memory, pids, cpu): the kernel's share of a limit on a flood.
 * - Noisy neighbour: `true` p50/p99 of one session while another on the same engine thread is idle,
 *   floods, fork-bombs, hogs memory or redraws a 500 × 500 screen, and the close of that session
 *   (after a bomb, a hog…). Run by a child host inside an outer cgroup this benchmark makes (pids
 *   2000, 2 GiB), so a broken build cannot take the machine down.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createPtyEngine } from '../dist/main/index.js';
import { detectCgroupLayout } from '../dist/shared/cgroup-hierarchy.js';
import { launcherArgv } from '../dist/worker/containment/cgroup-launcher.js';
import { ensureLogFile } from './lib/data-file.mjs';
import { metric } from './lib/metric.mjs';
import { createOuterCgroup } from './lib/outer-cgroup.mjs';
import { RawShell } from './lib/raw-shell.mjs';
import { round, summarize } from './lib/stats.mjs';

const NEIGHBOUR_HOST = fileURLToPath(new URL('./lib/neighbour-host.mjs', import.meta.url));
const SPAWNS = { full: 20, quick: 6 };
const LAUNCHES = { full: 30, quick: 8 };
const FLOOD_BYTES = { full: 50_000_000, quick: 10_000_000 };
const NEIGHBOUR_SENDS = { full: 200, quick: 40 };
/** SPEC §4.8: a neighbour's `true` p99 during a bomb, a hog, a flood, a maximal screen. */
const NEIGHBOUR_P99_GOAL_MS = 50;
const GIB = 1024 * 1024 * 1024;

export default {
  name: 'limits',
  title: 'Session limits: cost at spawn and flood, noisy neighbour',
  async run({ quick, log }) {
    const size = quick ? 'quick' : 'full';
    const metrics = [];
    const notes = [];

    const spawn = {
      cgroups: await spawnTimes({}, SPAWNS[size]),
      limitsOnly: await spawnTimes(
        { cgroupRoot: mkdtempSync(path.join(tmpdir(), 'bench-limits-')) },
        SPAWNS[size],
      ),
    };
    log(
      `spawn p50: ${round(spawn.cgroups.p50)} ms with cgroups, ${round(spawn.limitsOnly.p50)} ms limits only`,
    );
    metrics.push(
      metric({
        id: 'spawn.p50',
        label: 'spawn p50 (containment + limits)',
        value: round(spawn.cgroups.p50),
        unit: 'ms',
      }),
      metric({
        id: 'spawn.limitsOnly.p50',
        label: 'spawn p50 (limits only, no v2 containment)',
        value: round(spawn.limitsOnly.p50),
        unit: 'ms',
      }),
    );

    const joins = await launcherTimes(LAUNCHES[size]);
    for (const [kind, summary] of Object.entries(joins.times)) {
      metrics.push(
        metric({
          id: `launch.${kind}`,
          label: `launcher joining ${kind}, p50`,
          value: round(summary.p50),
          unit: 'ms',
        }),
      );
    }
    notes.push(`Launcher joins: ${joins.what}.`);

    const flood = await floodTimes(FLOOD_BYTES[size], joins.dirs);
    metrics.push(
      metric({
        id: 'flood.raw',
        label: `raw node-pty cat ${FLOOD_BYTES[size] / 1e6} MB`,
        value: round(flood.plain),
        unit: 'MB/s',
      }),
      metric({
        id: 'flood.rawLimited',
        label: 'the same, bash in limit cgroups',
        value: round(flood.limited),
        unit: 'MB/s',
      }),
      metric({
        id: 'flood.ratio',
        label: 'limited / plain (cost of limits on a flood)',
        value: round(flood.limited / flood.plain, 3),
        unit: '×',
        ratio: true,
      }),
    );
    joins.remove();

    const neighbour = await noisyNeighbour(NEIGHBOUR_SENDS[size], log);
    if (neighbour.unavailable !== undefined) {
      notes.push(`Noisy neighbour not measured: ${neighbour.unavailable}.`);
    } else {
      for (const [name, condition] of Object.entries(neighbour.conditions)) {
        const goal = name === 'idle' ? undefined : { op: '<=', value: NEIGHBOUR_P99_GOAL_MS };
        metrics.push(
          metric({
            id: `neighbour.${name}.p50`,
            label: `neighbour \`true\` p50, other session ${name}`,
            value: round(condition.true.p50),
            unit: 'ms',
          }),
          metric({
            id: `neighbour.${name}.p99`,
            label: `neighbour \`true\` p99, other session ${name}`,
            value: round(condition.true.p99),
            unit: 'ms',
            target: goal,
          }),
          metric({
            id: `neighbour.${name}.close`,
            label: `close of the ${name} session`,
            value: round(condition.noisyCloseMs),
            unit: 'ms',
          }),
        );
        if (condition.noisyEvents !== null) {
          notes.push(
            `${name}: the noisy session's last result reported ${JSON.stringify(condition.noisyEvents)}.`,
          );
        }
      }
    }
    return { metrics, details: { spawn, joins: joins.times, flood, neighbour }, notes };
  },
};

/** p50 etc. of `reps` sequential spawns (each closed) on an engine with `options`. */
async function spawnTimes(options, reps) {
  const engine = await createPtyEngine(options);
  const samples = [];
  try {
    await (await engine.spawn()).close(); // the thread starts (and probes its cgroups) outside the timing
    for (let i = 0; i < reps; i++) {
      const started = performance.now();
      const session = await engine.spawn();
      samples.push(performance.now() - started);
      await session.close();
    }
  } finally {
    await engine.close();
    if (options.cgroupRoot !== undefined) rmSync(options.cgroupRoot, { recursive: true, force: true });
  }
  return summarize(samples);
}

/**
 * The launcher with a no-op argv, joining none, the v2 cgroup, the v1 limit cgroups, or all of them
 * (fresh directories below this process's own cgroups, removed afterwards).
 */
async function launcherTimes(reps) {
  const layout = detectCgroupLayout();
  const made = [];
  const dirs = {};
  const make = (kind, parent) => {
    if (parent === undefined) return;
    const dir = path.join(parent, `agent-pty-bench-launch.${process.pid}`);
    try {
      mkdirSync(dir);
      made.push(dir);
      dirs[kind] = dir;
    } catch {
      // not writable here: that join is left out
    }
  };
  make('v2', layout.v2);
  for (const controller of ['memory', 'pids', 'cpu']) make(controller, layout.v1[controller]);
  const v1 = ['memory', 'pids', 'cpu'].filter((kind) => dirs[kind] !== undefined);
  if (dirs.memory !== undefined) writeFileSync(path.join(dirs.memory, 'memory.limit_in_bytes'), String(GIB));
  if (dirs.pids !== undefined) writeFileSync(path.join(dirs.pids, 'pids.max'), '4096');
  const procs = (kinds) =>
    kinds.filter((kind) => dirs[kind] !== undefined).map((kind) => path.join(dirs[kind], 'cgroup.procs'));
  const variants = {
    'no cgroup': [],
    ...(dirs.v2 === undefined ? {} : { 'the v2 cgroup': procs(['v2']) }),
    ...(v1.length === 0 ? {} : { [`${v1.length} v1 limit cgroups`]: procs(v1) }),
    ...(dirs.v2 === undefined || v1.length === 0 ? {} : { 'all of them': procs(['v2', ...v1]) }),
  };
  const times = {};
  for (const [kind, files] of Object.entries(variants)) {
    const samples = [];
    for (let i = 0; i < reps; i++) {
      const [file, ...args] = launcherArgv(files, ['/bin/sh', '-c', ':']);
      const started = performance.now();
      await new Promise((resolve, reject) =>
        execFile(file, args, (error) => (error ? reject(error) : resolve())),
      );
      samples.push(performance.now() - started);
    }
    times[kind] = summarize(samples);
  }
  return {
    times,
    dirs,
    what: Object.keys(variants).join(', '),
    remove: () => {
      for (const dir of made.reverse()) {
        try {
          rmdirSync(dir);
        } catch {
          // a process still leaving it: swept by nothing, but empty once it exited
        }
      }
    },
  };
}

/** MB/s of `cat` of a log file in raw node-pty: bash plain, and bash inside the limit cgroups `dirs`. */
async function floodTimes(bytes, dirs) {
  const file = ensureLogFile(bytes);
  const rate = async (wrap) => {
    const shell = await RawShell.start(wrap);
    try {
      await shell.run('true');
      const { ms, chars } = await shell.run(`cat ${file}`);
      return chars / 1e6 / (ms / 1000);
    } finally {
      await shell.close();
    }
  };
  const limited = ['memory', 'pids', 'cpu']
    .filter((kind) => dirs[kind] !== undefined)
    .map((kind) => path.join(dirs[kind], 'cgroup.procs'));
  const plainRates = [];
  const limitedRates = [];
  for (let round = 0; round < 3; round++) {
    plainRates.push(await rate((argv) => argv));
    limitedRates.push(await rate((argv) => launcherArgv(limited, argv)));
  }
  return { plain: summarize(plainRates).p50, limited: summarize(limitedRates).p50 };
}

/** Runs bench/lib/neighbour-host.mjs inside an outer cgroup; its report, or `{ unavailable }`. */
async function noisyNeighbour(sends, log) {
  const outer = createOuterCgroup('neighbour', { pids: 2000, memoryBytes: 2 * GIB });
  if (outer.unavailable !== undefined) return outer;
  try {
    const child = outer.startNode([NEIGHBOUR_HOST, outer.leaf, String(sends)]);
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    // 'close', not 'exit': the child's pipes are closed too, so nothing of it stays open.
    const code = await new Promise((resolve) => child.once('close', resolve));
    // The child's process handle is released a turn of the loop after 'close'.
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (code !== 0) throw new Error(`the neighbour host failed (exit ${code}): ${stdout}`);
    const report = JSON.parse(stdout.trim().split('\n').pop());
    for (const [name, condition] of Object.entries(report.conditions)) {
      log(
        `neighbour, other session ${name}: true p50 ${round(condition.true.p50)} ms, p99 ${round(condition.true.p99)} ms`,
      );
    }
    return report;
  } finally {
    await outer.remove();
  }
}
