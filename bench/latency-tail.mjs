/**
 * Standalone profile (not run by `run.mjs`): where the slow `true` sends of a fresh session come from.
 *
 *   node bench/latency-tail.mjs [sends]      # default 3000, inline (the session core on this thread)
 *
 * For each send it reads, before and after, the CPU time of this process's other threads (V8's
 * compiler and GC helpers; the main thread runs the session), bash's run-queue wait
 * (`/proc/<pid>/schedstat`, second field: time runnable but not running) and the GC events of this
 * thread. Printed: per block of 150 sends, the helpers' CPU, the sends over `SLOW_MS` and the GCs; then
 * how many slow sends ran while the helpers ran, and where the slowest ones waited. Reading it: when the
 * helpers compile the engine's code (the first thousands of sends), more threads want the 2 cores than
 * there are: bash, the kernel's pty worker or the session's own thread waits for one (bash's own wait is
 * only part of it); once compilation is done, only scavenges are left.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { InlineSession } from './lib/inline-session.mjs';
import { round, summarize } from './lib/stats.mjs';

const SENDS = Number(process.argv[2] ?? 3000);
const BLOCK = 150;
/** A send this slow is in the tail (the engine's warm p99 is under 1 ms here). */
const SLOW_MS = 1.5;
/** Helper CPU during one send above this counts as "the helpers ran". */
const BUSY_HELPERS_MS = 0.5;

/** `[run ns, run-queue wait ns]` of a task, from its schedstat. */
const schedstat = (path) => readFileSync(path, 'utf8').split(' ').slice(0, 2).map(Number);
/** CPU ns of every thread of this process but the main one. */
function helperCpuNs() {
  let ns = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    if (Number(tid) !== process.pid) ns += schedstat(`/proc/self/task/${tid}/schedstat`)[0];
  }
  return ns;
}

const gcs = [];
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries())
    gcs.push({ from: entry.startTime, to: entry.startTime + entry.duration });
});
gcObserver.observe({ entryTypes: ['gc'] });

const session = await InlineSession.start();
const rows = [];
try {
  for (let i = 0; i < SENDS; i++) {
    const helpersBefore = helperCpuNs();
    const [, bashWaitBefore] = schedstat(`/proc/${session.pid}/schedstat`);
    const from = performance.now();
    const { ms } = await session.send('true');
    const to = performance.now();
    rows.push({
      from,
      to,
      ms,
      helpersMs: (helperCpuNs() - helpersBefore) / 1e6,
      bashWaitMs: (schedstat(`/proc/${session.pid}/schedstat`)[1] - bashWaitBefore) / 1e6,
    });
  }
} finally {
  await session.close();
}
await new Promise((resolve) => setTimeout(resolve, 50)); // the last GC entries are delivered late
gcObserver.disconnect();

console.log(`${SENDS} inline \`true\` sends from a fresh session; slow = over ${SLOW_MS} ms`);
console.log('| sends | p50 ms | p99 ms | helper CPU ms | slow | GCs |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
for (let start = 0; start < rows.length; start += BLOCK) {
  const block = rows.slice(start, start + BLOCK);
  const summary = summarize(block.map((row) => row.ms));
  const helpers = block.reduce((sum, row) => sum + row.helpersMs, 0);
  const slow = block.filter((row) => row.ms > SLOW_MS).length;
  const inBlock = gcs.filter((gc) => gc.from >= block[0].from && gc.from < block.at(-1).to).length;
  console.log(
    `| ${start + 1}–${start + block.length} | ${round(summary.p50, 3)} | ${round(summary.p99, 3)} | ${round(helpers, 1)} | ${slow} | ${inBlock} |`,
  );
}
const slow = rows.filter((row) => row.ms > SLOW_MS);
const withHelpers = slow.filter((row) => row.helpersMs > BUSY_HELPERS_MS).length;
const withGc = slow.filter((row) => gcs.some((gc) => gc.from < row.to && gc.to > row.from)).length;
console.log(
  `\n${slow.length} slow sends: ${withHelpers} while the helpers ran over ${BUSY_HELPERS_MS} ms, ${withGc} overlapping a GC of this thread`,
);
const bashWait = summarize(slow.map((row) => row.bashWaitMs));
console.log(
  `bash's run-queue wait in them: p50 ${round(bashWait.p50, 3)} ms, max ${round(bashWait.max, 3)} ms`,
);
