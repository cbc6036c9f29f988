/**
 * Standalone micro-benchmark (not run by `run.mjs`): the cost of one foreground sample
 * (`sampleForeground`, src/worker/proc/stdin-wait.ts) of bash blocked at its prompt, every file opened
 * afresh against descriptors held across samples (`HeldProcFiles`), interleaved in alternating rounds of
 * one process so the machine's drift hits both alike (issue 24).
 *
 *   node bench/proc-sample.mjs [samples per round]     # default 2000; 7 rounds; a few seconds
 *
 * Prints the median over rounds of each path's mean µs per sample, and checks that both paths give the
 * same verdicts.
 */
import { performance } from 'node:perf_hooks';
import { HeldProcFiles } from '../dist/worker/proc/proc-files.js';
import { sampleForeground } from '../dist/worker/proc/stdin-wait.js';
import { InlineSession } from './lib/inline-session.mjs';
import { median, round } from './lib/stats.mjs';

const SAMPLES = Number(process.argv[2] ?? 2000);
const ROUNDS = 7;

const session = await InlineSession.start();
const { pid } = session;
const rdev = session.core.ttyRdev;
const held = new HeldProcFiles();
const paths = {
  fresh: () => sampleForeground(pid, pid, rdev),
  held: () => sampleForeground(pid, pid, rdev, process.arch, held),
};
const verdicts = (sample) => JSON.stringify(sample?.members.map((m) => [m.tid, m.verdict, m.syscall, m.fd]));
const perRound = { fresh: [], held: [] };
try {
  const expected = verdicts(paths.fresh());
  if (!expected.includes('waiting')) throw new Error(`bash is not waiting at its prompt: ${expected}`);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? ['fresh', 'held'] : ['held', 'fresh'];
    for (const name of order) {
      let last;
      const started = performance.now();
      for (let i = 0; i < SAMPLES; i++) last = paths[name]();
      perRound[name].push(((performance.now() - started) / SAMPLES) * 1000);
      if (verdicts(last) !== expected) throw new Error(`${name} disagrees: ${verdicts(last)} vs ${expected}`);
    }
  }
} finally {
  held.close();
  await session.close();
}
console.log('| path | µs per sample (median of rounds) | rounds |\n| --- | --- | --- |');
for (const name of Object.keys(perRound)) {
  console.log(
    `| ${name} | ${round(median(perRound[name]), 1)} | ${perRound[name].map((x) => round(x, 1)).join(' ')} |`,
  );
}
