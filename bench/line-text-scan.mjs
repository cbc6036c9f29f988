/**
 * Micro-benchmark (standalone, not part of `run.mjs`): cost per character of the line-text check, the
 * SIMD scan (`lineTextKind`) against the regex fallback (`lineTextKindByRegex`), on ~5 KiB reads of the
 * flood log with CRLF line ends — what the engine thread checks once per read during a flood.
 *
 *   npm run build && node bench/line-text-scan.mjs
 */
import { readFileSync } from 'node:fs';
import { lineTextKind, lineTextKindByRegex } from '../dist/worker/output/line-text.js';
import { ensureLogFile } from './lib/data-file.mjs';

/** About one pty read during a flood, in characters. */
const READ_CHARS = 4_900;
const REPEATS = 7;

const log = readFileSync(ensureLogFile(8 * 2 ** 20), 'latin1').replaceAll('\n', '\r\n');
// Flat copies, as the decoder hands them over (a slice would share the whole log).
const reads = [];
for (let at = 0; at + READ_CHARS <= log.length; at += READ_CHARS)
  reads.push(` ${log.slice(at, at + READ_CHARS)}`);
const chars = reads.length * (READ_CHARS + 1);

for (const [name, check] of [
  ['lineTextKind (SIMD)', lineTextKind],
  ['lineTextKindByRegex', lineTextKindByRegex],
]) {
  for (const read of reads.slice(0, 200)) check(read); // warm up the JIT
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < REPEATS; r++) {
    const started = performance.now();
    for (const read of reads) if (!check(read)) throw new Error('a log read is not line text');
    best = Math.min(best, performance.now() - started);
  }
  console.log(`${name.padEnd(20)} ${((best * 1e6) / chars).toFixed(3)} ns/char (best of ${REPEATS})`);
}
