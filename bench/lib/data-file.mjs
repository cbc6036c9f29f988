/**
 * Flood input: a log-like text file generated once under bench/.data/ (gitignored) and reused.
 * Deterministic (fixed-seed generator), plain ASCII, ~95-byte lines — what `cat` of a real service
 * log looks like to a terminal.
 */
import { closeSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DATA_DIR = fileURLToPath(new URL('../.data/', import.meta.url));
/** Units generated per write: large writes, bounded memory. */
const UNITS_PER_WRITE = 20_000;
const LEVELS = ['INFO ', 'DEBUG', 'WARN ', 'ERROR', 'INFO '];
const STATUSES = [200, 200, 200, 201, 304, 404, 500];

/** The i-th line of the log (`next` is the seeded random source). */
function logLine(line, next) {
  const time = new Date(Date.UTC(2024, 4, 1) + line * 7).toISOString();
  return (
    `${time} ${LEVELS[next() % LEVELS.length]} [worker-${next() % 16}] req=${line.toString(16)} ` +
    `GET /api/v1/items/${next() % 100_000} status=${STATUSES[next() % STATUSES.length]} ` +
    `dur=${next() % 2_000}ms\n`
  );
}

/** Path of a log file of at least `bytes` bytes, generated on first use. */
export function ensureLogFile(bytes) {
  return ensureGeneratedFile('log', bytes, logLine);
}

/**
 * Path of `bench/.data/<name>-<bytes>.txt`, generated on first use as the pieces `unit(i, next)` for
 * i = 0, 1, … until it holds at least `bytes` bytes (`next` is a fixed-seed random source, so the file
 * is the same on every machine), then `suffix`.
 */
export function ensureGeneratedFile(name, bytes, unit, suffix = '') {
  mkdirSync(DATA_DIR, { recursive: true });
  const path = `${DATA_DIR}${name}-${bytes}.txt`;
  try {
    if (statSync(path).size >= bytes) return path;
  } catch {
    // not generated yet
  }
  let seed = 0x2545f491;
  // xorshift32: fast, deterministic, good enough to vary the fields.
  const next = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return seed >>> 0;
  };
  const fd = openSync(path, 'w');
  try {
    let written = 0;
    let i = 0;
    while (written < bytes) {
      const parts = [];
      for (let k = 0; k < UNITS_PER_WRITE; k++, i++) parts.push(unit(i, next));
      const chunk = Buffer.from(parts.join(''));
      writeSync(fd, chunk);
      written += chunk.length;
    }
    if (suffix !== '') writeSync(fd, suffix);
  } finally {
    closeSync(fd);
  }
  return path;
}
