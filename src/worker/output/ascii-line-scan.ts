/**
 * A SIMD scan for the common case of `lineTextKind` (line-text.ts): where does a string stop being
 * printable ASCII with TAB, LF and CR (bytes 0x09, 0x0A, 0x0D, 0x20–0x7E)?
 *
 * The string is copied into WebAssembly memory as UTF-8; a tiny WebAssembly function then checks 16
 * bytes per step. For ASCII text the copy is a plain copy, and the first character beyond ASCII becomes
 * bytes of 0x80 and up, which stop the scan right at its index (every character before it took one
 * byte). So the answer is exact, and "all of it" also means "all of it is ASCII", which the scrollback
 * uses. Measured on ~5 KiB reads of a CRLF log, the copy plus the scan cost about 0.18 ns per character
 * (0.16 with a Latin-1 copy, which truncates wide characters and so could not tell ASCII apart), against
 * 0.62 ns for the regex (`lineTextKindByRegex`).
 *
 * On its way the scan records where the line feeds are (line-feeds.ts), which spares the consumers a
 * search per line.
 *
 * WebAssembly SIMD needs SSE4.1 on x64. Where the module does not compile, {@link asciiLineTextEnd} is
 * undefined and callers use the regex.
 */

import type { LineFeeds } from './line-feeds.js';
import { instantiate, moduleBytes, splat, store } from './wasm-function.js';

/**
 * Characters copied and scanned per call; the input window holds this plus the padding. A window of
 * wide text takes up to three times as many bytes: the copy then stops where the input window is full,
 * which is past the first non-ASCII character, so the scan still stops there.
 */
const WINDOW_CHARS = 64 * 1024;
/**
 * Characters of the first window when the text looks wide. Text beyond ASCII stops the scan at its first
 * such character, which in wide text comes within a few characters: copying a whole 4–64 KiB chunk as
 * UTF-8 to learn that took a sixth of the pipeline's time on CJK text (bench/shape-cpu.mjs).
 */
const WIDE_FIRST_WINDOW_CHARS = 1024;

/**
 * Whether `text` looks wide: a character beyond ASCII at a quarter, half or three quarters of it. Only
 * the first window's size depends on it (a look that misses costs a larger copy, never a wrong answer);
 * ASCII text keeps one window, as a smaller first one would cost it a second scan per chunk.
 */
function looksWide(text: string): boolean {
  const quarter = text.length >> 2;
  return (
    text.charCodeAt(quarter) > 0x7e ||
    text.charCodeAt(2 * quarter) > 0x7e ||
    text.charCodeAt(3 * quarter) > 0x7e
  );
}

/** Where the scan writes the index of each line feed: an i32 each, at most one per byte of the window. */
const LINE_FEEDS_AT = WINDOW_CHARS + 16;
/** Where the scan writes how many line feeds it recorded, then how many CRs it passed (two i32). */
const COUNTS_AT = LINE_FEEDS_AT + 4 * (WINDOW_CHARS + 16);

/**
 * The function, `scan(end: i32) -> i32`: index of the first byte in memory [0, end) outside
 * {09, 0A, 0D, 20–7E}, or `end`; `end` is a multiple of 16. On the way it records the index of every
 * LF before that byte at LINE_FEEDS_AT, then their number and the number of CRs before it at COUNTS_AT.
 * Locals: 0 = end, 1 = i, 2 = bad (mask), 3 = lf (mask), 4 = n (line feeds), 5 = cr (count),
 * 6 = stop, 7 = crs (mask), 8 = v (v128).
 */
// biome-ignore format: one instruction per line, each with its meaning
const SCAN_BODY = [
  0x02, 0x07, 0x7f, 0x01, 0x7b, // locals: 7 × i32, 1 × v128
  0x20, 0x00, 0x21, 0x06, // stop = end
  0x02, 0x40, // block
  0x03, 0x40, //   loop
  0x20, 0x01, 0x20, 0x00, 0x4f, 0x0d, 0x01, //     br_if (i >= end) out of the block
  0x20, 0x01, 0xfd, 0x00, 0x00, 0x00, 0x21, 0x08, //     v = v128.load(i)
  0x20, 0x08, ...splat(0x20), 0xfd, 0x26, //     v < 0x20 (unsigned)
  0x20, 0x08, ...splat(0x09), 0xfd, 0x23, //     v == TAB
  0x20, 0x08, ...splat(0x0a), 0xfd, 0x23, 0xfd, 0x50, //     | v == LF
  0x20, 0x08, ...splat(0x0d), 0xfd, 0x23, 0xfd, 0x50, //     | v == CR
  0xfd, 0x4f, //     controls and not (TAB | LF | CR)
  0x20, 0x08, ...splat(0x7e), 0xfd, 0x28, 0xfd, 0x50, //     | v > 0x7E (unsigned)
  0xfd, 0x64, 0x21, 0x02, //     bad = bitmask(bad lanes)
  0x20, 0x08, ...splat(0x0a), 0xfd, 0x23, 0xfd, 0x64, 0x21, 0x03, //     lf = bitmask(v == LF)
  0x20, 0x08, ...splat(0x0d), 0xfd, 0x23, 0xfd, 0x64, 0x21, 0x07, //     crs = bitmask(v == CR)
  0x20, 0x02, 0x04, 0x40, //     if bad
  0x20, 0x01, 0x20, 0x02, 0x68, 0x6a, 0x21, 0x06, //       stop = i + ctz(bad)
  0x41, 0x00, 0x21, 0x00, //       end = 0: this vector is the last
  // bad = (bad & -bad) - 1: a mask of the lanes below the first bad one
  0x20, 0x02, 0x41, 0x00, 0x20, 0x02, 0x6b, 0x71, 0x41, 0x01, 0x6b, 0x21, 0x02, //       bad = lanes before it
  0x20, 0x03, 0x20, 0x02, 0x71, 0x21, 0x03, //       lf &= bad
  0x20, 0x07, 0x20, 0x02, 0x71, 0x21, 0x07, //       crs &= bad
  0x0b, //     end
  0x20, 0x05, 0x20, 0x07, 0x69, 0x6a, 0x21, 0x05, //     cr += popcnt(crs)
  0x02, 0x40, //     block
  0x03, 0x40, //       loop
  0x20, 0x03, 0x45, 0x0d, 0x01, //         br_if (lf == 0) out of the block
  0x20, 0x04, 0x41, 0x02, 0x74, //         address n × 4
  0x20, 0x01, 0x20, 0x03, 0x68, 0x6a, //         i + ctz(lf)
  ...store(LINE_FEEDS_AT), //         stored at LINE_FEEDS_AT + n × 4
  0x20, 0x04, 0x41, 0x01, 0x6a, 0x21, 0x04, //         n += 1
  0x20, 0x03, 0x20, 0x03, 0x41, 0x01, 0x6b, 0x71, 0x21, 0x03, //         lf &= lf - 1
  0x0c, 0x00, //         continue
  0x0b, //       end loop
  0x0b, //     end block
  0x20, 0x01, 0x41, 0x10, 0x6a, 0x21, 0x01, //     i += 16
  0x0c, 0x00, //     continue
  0x0b, //   end loop
  0x0b, // end block
  0x41, 0x00, 0x20, 0x04, ...store(COUNTS_AT), // line feeds recorded
  0x41, 0x00, 0x20, 0x05, ...store(COUNTS_AT + 4), // CRs passed
  0x20, 0x06, // stop
  0x0b,
];

const MODULE_BYTES = moduleBytes(SCAN_BODY, COUNTS_AT + 8);

interface Scanner {
  scan: (end: number) => number;
  /** The input window (the memory before the scan's results). */
  bytes: Buffer;
  /** The scan's line feed indices. */
  found: Int32Array;
  /** The scan's counts: line feeds recorded, CRs passed. */
  counts: Int32Array;
}

function instantiateScanner(): Scanner | undefined {
  const module = instantiate(MODULE_BYTES);
  if (module === undefined) return undefined;
  const { fn: scan, memory } = module;
  return {
    scan,
    // Only the input window: a copy of wide text must never reach the results it would overwrite.
    bytes: Buffer.from(memory, 0, LINE_FEEDS_AT),
    found: new Int32Array(memory, LINE_FEEDS_AT, WINDOW_CHARS + 16),
    counts: new Int32Array(memory, COUNTS_AT, 2),
  };
}

const scanner = instantiateScanner();

/**
 * Index of the first code unit of `text` that is not printable ASCII, TAB, LF or CR, or `text.length`.
 * With `lineFeeds`, also records the indices of the line feeds before that index, and the CRs there.
 * `utf8`: the UTF-8 of `text`, copied instead of encoding `text` (a byte index is a character index up
 * to the first byte the scan stops at, as for the encoded text). Undefined where WebAssembly SIMD is
 * unavailable.
 */
export const asciiLineTextEnd:
  | ((text: string, lineFeeds?: LineFeeds, utf8?: Uint8Array) => number)
  | undefined =
  scanner === undefined
    ? undefined
    : (text: string, lineFeeds?: LineFeeds, utf8?: Uint8Array): number => {
        const { scan, bytes, found, counts } = scanner;
        lineFeeds?.reset();
        const first = utf8 === undefined && looksWide(text) ? WIDE_FIRST_WINDOW_CHARS : WINDOW_CHARS;
        for (let at = 0, size = first; at < text.length; at += size, size = WINDOW_CHARS) {
          let written: number;
          if (utf8 === undefined) {
            const piece = at === 0 && text.length <= size ? text : text.slice(at, at + size);
            written = bytes.write(piece, 0, 'utf8');
          } else {
            // Every window before this one was ASCII, so byte `at` starts character `at`.
            const piece = utf8.subarray(at, at + size);
            bytes.set(piece, 0);
            written = piece.length;
          }
          const padded = (written + 15) & ~15;
          bytes.fill(0x20, written, padded); // spaces: the last vector holds only line text beyond the end
          const stop = scan(padded);
          // Every character before `stop` took one byte, so byte indices are character indices.
          lineFeeds?.add(found, counts[0]!, counts[1]!, at);
          if (stop < written) return at + stop;
        }
        return text.length;
      };
