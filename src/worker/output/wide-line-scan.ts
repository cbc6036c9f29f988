/**
 * A SIMD scan for the wide part of `lineTextKind` (line-text.ts): where does text beyond ASCII stop being
 * line text — printable characters (U+0020–U+007E, U+00A0 and up), TAB, LF and CR?
 *
 * The string is copied into WebAssembly memory as UTF-16 (a plain copy of a two-byte string), and a tiny
 * WebAssembly function checks 8 code units per step. Surrogates pass, as the regex it replaces lets them
 * (`[\x09-\x0d\x20-\x7e\xa0-\uffff]`); VT and FF, which that regex admits and line-text.ts then looks for
 * separately, stop this scan themselves. Measured on the 24 MiB UTF-8 file of the shapes benchmark in
 * 4 KiB pieces: the sticky regex took 14.9 ms, a search for the first excluded unit 17–18 ms.
 *
 * Where the module does not compile (WebAssembly SIMD needs SSE4.1 on x64), {@link wideLineTextEnd} is
 * undefined and callers use the regex.
 */

import { instantiate, moduleBytes } from './wasm-function.js';

/** Code units copied and scanned per call. */
const WINDOW_UNITS = 32 * 1024;
/** The input window in bytes: two per unit, and one vector of padding. */
const WINDOW_BYTES = 2 * WINDOW_UNITS + 16;

/** `v128.const` with every 16-bit lane `unit`. */
function splat16(unit: number): number[] {
  const lanes: number[] = [];
  for (let lane = 0; lane < 8; lane++) lanes.push(unit & 0xff, unit >> 8);
  return [0xfd, 0x0c, ...lanes];
}

/**
 * The function, `scan(end: i32) -> i32`: byte index of the first 16-bit unit in memory [0, end) that is
 * not line text (a C0 control other than TAB, LF and CR; DEL; a C1 control), or `end`; `end` is a
 * multiple of 16. Locals: 0 = end, 1 = i, 2 = bad (mask), 3 = v (v128).
 */
// biome-ignore format: one instruction per line, each with its meaning
const SCAN_BODY = [
  0x02, 0x02, 0x7f, 0x01, 0x7b, // locals: 2 × i32, 1 × v128
  0x02, 0x40, // block
  0x03, 0x40, //   loop
  0x20, 0x01, 0x20, 0x00, 0x4f, 0x0d, 0x01, //     br_if (i >= end) out of the block
  0x20, 0x01, 0xfd, 0x00, 0x00, 0x00, 0x21, 0x03, //     v = v128.load(i)
  0x20, 0x03, ...splat16(0x20), 0xfd, 0x30, //     v < 0x20 (unsigned)
  0x20, 0x03, ...splat16(0x09), 0xfd, 0x2d, //     v == TAB
  0x20, 0x03, ...splat16(0x0a), 0xfd, 0x2d, 0xfd, 0x50, //     | v == LF
  0x20, 0x03, ...splat16(0x0d), 0xfd, 0x2d, 0xfd, 0x50, //     | v == CR
  0xfd, 0x4f, //     controls and not (TAB | LF | CR)
  0x20, 0x03, ...splat16(0x7e), 0xfd, 0x32, //     v > 0x7E (unsigned)
  0x20, 0x03, ...splat16(0xa0), 0xfd, 0x30, 0xfd, 0x4e, //     & v < 0xA0: DEL and the C1 controls
  0xfd, 0x50, //     either
  0xfd, 0x84, 0x01, 0x22, 0x02, //     bad = bitmask(bad lanes)
  0x04, 0x40, //     if bad
  0x20, 0x01, 0x20, 0x02, 0x68, 0x41, 0x01, 0x74, 0x6a, 0x0f, //       return i + 2 × ctz(bad)
  0x0b, //     end
  0x20, 0x01, 0x41, 0x10, 0x6a, 0x21, 0x01, //     i += 16
  0x0c, 0x00, //     continue
  0x0b, //   end loop
  0x0b, // end block
  0x20, 0x00, // end
  0x0b,
];

const MODULE_BYTES = moduleBytes(SCAN_BODY, WINDOW_BYTES);

function instantiateScanner(): { scan: (end: number) => number; bytes: Buffer } | undefined {
  const module = instantiate(MODULE_BYTES);
  if (module === undefined) return undefined;
  return { scan: module.fn, bytes: Buffer.from(module.memory, 0, WINDOW_BYTES) };
}

const scanner = instantiateScanner();

/**
 * Index of the first code unit of `text` at or after `from` that is not line text (printable, TAB, LF,
 * CR; VT and FF excluded), or `text.length`. Undefined where WebAssembly SIMD is unavailable.
 */
export const wideLineTextEnd: ((text: string, from: number) => number) | undefined =
  scanner === undefined
    ? undefined
    : (text: string, from: number): number => {
        const { scan, bytes } = scanner;
        for (let at = from; at < text.length; at += WINDOW_UNITS) {
          const written = bytes.write(text.slice(at, at + WINDOW_UNITS), 0, 'utf16le');
          const padded = (written + 15) & ~15;
          bytes.fill(0x20, written, padded); // spaces (0x20 0x20 is U+2020, line text too)
          const stop = scan(padded);
          if (stop < written) return at + stop / 2;
        }
        return text.length;
      };
