#!/usr/bin/env node
/**
 * The benchmark suite (SPEC §9). Runs each benchmark in turn in this process, then writes
 * `results.json`, `report.md` and `chart.svg` into bench/results/ (or `--out=`).
 *
 *   npm run bench                      # build, then the full suite (about a minute on 2 cores)
 *   node bench/run.mjs --quick         # smaller sizes, for a fast check
 *   node bench/run.mjs --only=flood,latency
 *
 * Needs the compiled engine in dist/ (`npx tsc -p .`): the engine threads load compiled JS.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from './lib/args.mjs';
import { renderChart } from './lib/chart-svg.mjs';
import { machineInfo } from './lib/machine.mjs';
import { renderReport } from './lib/report-md.mjs';

const ENGINE_ENTRY = fileURLToPath(new URL('../dist/main/index.js', import.meta.url));
const DEFAULT_OUT = fileURLToPath(new URL('./results/', import.meta.url));

/**
 * Benchmark modules, in run order: cheap and sensitive ones first, floods later. Idle CPU runs first of
 * all, before earlier benchmarks leave garbage whose collection would land in its window.
 */
const BENCHMARKS = [
  'idle-cpu',
  'latency',
  'interactive',
  'close-cancel',
  'flood',
  'shapes',
  'scale',
  'worlds',
  'daemon',
  'limits',
];
/** Handles Node itself keeps open (stdio, a pending fs write): not leaks. */
const BENIGN_RESOURCES = new Set(['TTYWrap', 'PipeWrap', 'FSReqCallback', 'FileHandle']);

async function main() {
  const options = parseArgs(process.argv.slice(2), BENCHMARKS);
  if (options.help) {
    console.log(`usage: node bench/run.mjs [--quick] [--only=${BENCHMARKS.join(',')}] [--out=DIR]`);
    return;
  }
  if (!existsSync(ENGINE_ENTRY)) {
    throw new Error('dist/ is missing: run `npx tsc -p .` (or `npm run bench`, which builds first)');
  }
  const machine = machineInfo();
  const command = `node bench/run.mjs ${process.argv.slice(2).join(' ')}`.trim();
  console.log(
    `agent-pty bench — ${machine.cpuCount}× ${machine.cpuModel}, Node ${machine.node}, load ${machine.loadAvg.join(' ')}`,
  );
  const started = performance.now();
  const results = [];
  for (const name of options.only ?? BENCHMARKS) {
    const { default: bench } = await import(`./${name}.mjs`);
    const log = (message) => console.log(`  [${name}] ${message}`);
    console.log(`▶ ${bench.title}`);
    const t0 = performance.now();
    let entry;
    try {
      const outcome = await bench.run({ quick: options.quick, log });
      entry = { name, title: bench.title, ...outcome };
    } catch (error) {
      // One broken benchmark must not hide the others' numbers; the report shows the failure.
      console.error(error);
      entry = { name, title: bench.title, metrics: [], error: String(error?.stack ?? error) };
    }
    entry.seconds = Math.round((performance.now() - t0) / 100) / 10;
    for (const m of entry.metrics) {
      const verdict = m.pass === undefined ? '' : m.pass ? '  PASS' : '  FAIL';
      console.log(`  ${m.label}: ${m.value}${m.unit ? ` ${m.unit}` : ''}${verdict}`);
    }
    results.push(entry);
  }
  // Every benchmark closed its engines and shells: anything still holding the loop is a leak worth seeing.
  // A child reaped in the last turn keeps its handle until that loop iteration's close phase, which
  // comes after the check phase: a short timer lets it pass (else an exited `serve --stdio` shows here).
  await new Promise((resolve) => setTimeout(resolve, 10));
  const leftover = process.getActiveResourcesInfo().filter((kind) => !BENIGN_RESOURCES.has(kind));
  if (leftover.length > 0)
    console.warn(`warning: resources still open after the run: ${leftover.join(', ')}`);
  const run = {
    command,
    quick: options.quick,
    machine,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    openResourcesAtEnd: leftover,
    benchmarks: results,
  };
  const out = options.out ?? DEFAULT_OUT;
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'results.json'), `${JSON.stringify(run, null, 2)}\n`);
  writeFileSync(join(out, 'report.md'), renderReport(run));
  writeFileSync(join(out, 'chart.svg'), renderChart(run));
  console.log(`done in ${run.seconds} s → ${join(out, 'results.json')}, report.md, chart.svg`);
}

main().then(
  // Engines and shells are closed by each benchmark; exit explicitly in case a library keeps a handle.
  () => process.exit(process.exitCode ?? 0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
