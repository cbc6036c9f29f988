/**
 * Flood input: a log-like text file generated once under bench/.data/ (gitignored) and reused.
 * Deterministic (fixed-seed generator), plain ASCII, ~95-byte lines — what `cat` of a real service
 * log looks like to a terminal.
 */
import { closeSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DATA_DIR = fileURLToPath(new URL('../.data/', import.meta.url));
/** Lines generated per write: large writes, bounded memory. */
const LINES_PER_WRITE = 20_000;
const LEVELS = ['INFO ', 'DEBUG', 'WARN ', 'ERROR', 'INFO '];
const STATUSES = [200, 200, 200, 201, 304, 404, 500];

/** Path of a log file of at least `bytes` bytes, generated on first use. */
export function ensureLogFile(bytes) {
  mkdirSync(DATA_DIR, { recursive: true });
  const path = `${DATA_DIR}log-${bytes}.txt`;
  try {
    if (statSync(path).size >= bytes) return path;
  } catch {
    // not generated yet
  }
  writeLogFile(path, bytes);
  return path;
}

function writeLogFile(path, bytes) {
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
    let line = 0;
    while (written < bytes) {
      const lines = [];
      for (let k = 0; k < LINES_PER_WRITE; k++, line++) {
        const ms = line * 7;
        const time = new Date(Date.UTC(2024, 4, 1) + ms).toISOString();
        lines.push(
          `${time} ${LEVELS[next() % LEVELS.length]} [worker-${next() % 16}] req=${line.toString(16)} ` +
            `GET /api/v1/items/${next() % 100_000} status=${STATUSES[next() % STATUSES.length]} ` +
            `dur=${next() % 2_000}ms\n`,
        );
      }
      const chunk = Buffer.from(lines.join(''));
      writeSync(fd, chunk);
      written += chunk.length;
    }
  } finally {
    closeSync(fd);
  }
}
