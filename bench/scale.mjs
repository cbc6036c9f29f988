/**
 * Benchmark 6 (SPEC §9): N sessions flooding at once — `cat` of the same file in every session,
 * started together — on an engine with `threads` = 1 and 2, and N raw node-pty shells on the host
 * thread for reference. Aggregate throughput = N × file size ÷ time until the last session settled;
 * host event-loop delay over the same span.
 */
import { statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createPtyEngine } from '../dist/main/index.js';
import { ensureLogFile } from './lib/data-file.mjs';
import { startLoopMonitor } from './lib/loop-delay.mjs';
import { check, metric } from './lib/metric.mjs';
import { RawShell } from './lib/raw-shell.mjs';
import { round } from './lib/stats.mjs';

/** Sessions flooding at once. */
const SESSIONS = 4;
const FILE_BYTES_FULL = 20 * 2 ** 20;
const FILE_BYTES_QUICK = 2 * 2 ** 20;
/** Far beyond any flood's duration: every flood must settle at its prompt. */
const FLOOD_TIMEOUT_MS = 600_000;
/** The SPEC's host event-loop bound during floods applies here too. */
const TARGET_LOOP_P99_MS = 10;
const THREAD_COUNTS = [1, 2];

export default {
  name: 'scale',
  title: `Scale: ${SESSIONS} sessions flooding at once`,
  async run({ quick, log }) {
    const path = ensureLogFile(quick ? FILE_BYTES_QUICK : FILE_BYTES_FULL);
    const bytes = statSync(path).size;
    const command = `cat ${path}`;
    const total = SESSIONS * bytes;
    const mbps = (ms) => total / 1e6 / (ms / 1000);
    const runs = {};
    runs.raw = await rawScale(command);
    log(`raw ×${SESSIONS}: ${round(runs.raw.ms)} ms`);
    for (const threads of THREAD_COUNTS) {
      runs[`t${threads}`] = await engineScale(command, threads);
      log(`engine threads=${threads}: ${round(runs[`t${threads}`].ms)} ms`);
    }
    const metrics = [
      metric({
        id: 'raw.mbps',
        label: `raw node-pty ×${SESSIONS}, aggregate`,
        value: round(mbps(runs.raw.ms), 1),
        unit: 'MB/s',
      }),
      metric({
        id: 'raw.loopP99',
        label: `host event-loop p99, raw node-pty ×${SESSIONS}`,
        value: round(runs.raw.loop.p99),
        unit: 'ms',
      }),
    ];
    for (const threads of THREAD_COUNTS) {
      const run = runs[`t${threads}`];
      metrics.push(
        metric({
          id: `t${threads}.mbps`,
          label: `engine threads=${threads}, aggregate`,
          value: round(mbps(run.ms), 1),
          unit: 'MB/s',
        }),
        metric({
          id: `t${threads}.ratio`,
          label: `aggregate throughput threads=${threads} ÷ raw`,
          value: round(runs.raw.ms / run.ms),
          unit: '×',
          ratio: true,
        }),
        metric({
          id: `t${threads}.loopP99`,
          label: `host event-loop p99, threads=${threads}`,
          value: round(run.loop.p99),
          unit: 'ms',
          target: { op: '<=', value: TARGET_LOOP_P99_MS },
        }),
        check({
          id: `t${threads}.unsettled`,
          label: `floods not settled as stdin_read, threads=${threads}`,
          failures: run.unproven,
        }),
      );
    }
    metrics.push(
      metric({
        id: 'ratio.threads',
        label: 'aggregate throughput threads=2 ÷ threads=1',
        value: round(runs.t1.ms / runs.t2.ms),
        unit: '×',
        ratio: true,
      }),
    );
    return {
      metrics,
      details: { sessions: SESSIONS, fileBytes: bytes, runs },
      notes: [
        `${SESSIONS} × ${round(bytes / 1e6, 1)} MB, all sends started in the same tick; time until the last settled.`,
        'On 2 cores the shells, `cat`s, the kernel pty work and the engine threads all compete for the same CPUs.',
      ],
    };
  },
};

async function rawScale(command) {
  const shells = await Promise.all(Array.from({ length: SESSIONS }, () => RawShell.start()));
  try {
    const loop = startLoopMonitor();
    const started = performance.now();
    await Promise.all(shells.map((shell) => shell.run(command)));
    return { ms: performance.now() - started, loop: loop.stop() };
  } finally {
    await Promise.all(shells.map((shell) => shell.close()));
  }
}

async function engineScale(command, threads) {
  const engine = await createPtyEngine({ threads, timeoutMs: FLOOD_TIMEOUT_MS });
  try {
    const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => engine.spawn()));
    const loop = startLoopMonitor();
    const started = performance.now();
    const results = await Promise.all(sessions.map((s) => s.startSend({ text: command }).done));
    const ms = performance.now() - started;
    return {
      ms,
      loop: loop.stop(),
      threadsUsed: engine.threadCount(),
      unproven: results.filter((r) => r.waitReason !== 'stdin_read').length,
    };
  } finally {
    await engine.close();
  }
}
