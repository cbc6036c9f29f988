/**
 * CRLF → LF for live output on the host (`liveTextForSubscribers`, protocol.ts). A flood's batches are
 * ~700 lines per 64 KiB, and every string method V8 offers does per-match work: a global regex replace
 * (or `replaceAll`, or split + join) costs 85–165 ms per 100 MiB, measured on fresh strings (V8 caches
 * regex results per subject string, so repeating one string measures far less). That was most of the
 * host thread's share of a flood with a subscriber.
 *
 * Here an ASCII batch is copied into WebAssembly memory and compacted with SIMD: 16 bytes are stored
 * per step, and a step that holds a CRLF stores only up to the CR and resumes at the LF. Then one
 * Latin-1 decode makes the string. Text with characters beyond ASCII, text longer than the window, and
 * machines without WebAssembly SIMD take the regex.
 */
import { instantiate, moduleBytes, splat, uleb128 } from './wasm-function.js';

/** Characters compacted in WebAssembly at most (a live batch is 64 KiB plus at most one read). */
const WINDOW_CHARS = 256 * 1024;
/** The input window, with room for the 17 zero bytes after the text that the last steps may load. */
const INPUT_BYTES = WINDOW_CHARS + 32;
/** Where the compacted text goes (each step stores 16 bytes, so it may write 16 past the end). */
const OUTPUT_AT = INPUT_BYTES;

/**
 * The function, `compact(length: i32) -> i32`: copies memory [0, length) to OUTPUT_AT without the CR
 * of every CRLF, and returns the length copied. Locals: 0 = length, 1 = p (read), 2 = o (written),
 * 3 = pairs (mask), 4 = v (v128).
 */
// biome-ignore format: one instruction per line, each with its meaning
const COMPACT_BODY = [
  0x02, 0x03, 0x7f, 0x01, 0x7b, // locals: 3 × i32, 1 × v128
  0x02, 0x40, // block
  0x03, 0x40, //   loop
  0x20, 0x01, 0x20, 0x00, 0x4f, 0x0d, 0x01, //     br_if (p >= length) out of the block
  0x20, 0x01, 0xfd, 0x00, 0x00, 0x00, 0x21, 0x04, //     v = v128.load(p)
  0x20, 0x02, 0x20, 0x04, 0xfd, 0x0b, 0x00, ...uleb128(OUTPUT_AT), //     v128.store(OUTPUT_AT + o, v)
  0x20, 0x04, ...splat(0x0d), 0xfd, 0x23, //     v == CR
  0x20, 0x01, 0xfd, 0x00, 0x00, 0x01, ...splat(0x0a), 0xfd, 0x23, //     v128.load(p + 1) == LF
  0xfd, 0x4e, 0xfd, 0x64, 0x22, 0x03, //     pairs = bitmask(CR followed by LF)
  0x04, 0x40, //     if pairs
  0x20, 0x02, 0x20, 0x03, 0x68, 0x6a, 0x21, 0x02, //       o += ctz(pairs): keep what precedes the CR
  0x20, 0x01, 0x20, 0x03, 0x68, 0x6a, 0x41, 0x01, 0x6a, 0x21, 0x01, //       p += ctz(pairs) + 1: resume at the LF
  0x05, //     else
  0x20, 0x02, 0x41, 0x10, 0x6a, 0x21, 0x02, //       o += 16
  0x20, 0x01, 0x41, 0x10, 0x6a, 0x21, 0x01, //       p += 16
  0x0b, //     end
  0x0c, 0x00, //     continue
  0x0b, //   end loop
  0x0b, // end block
  0x20, 0x02, 0x20, 0x01, 0x20, 0x00, 0x6b, 0x6b, // o - (p - length): the last step may run past the end
  0x0b,
];

interface Compactor {
  compact: (length: number) => number;
  input: Buffer;
  output: Buffer;
}

/** Instantiated on first use: only a host with a live subscriber needs it. Null: not available. */
let compactor: Compactor | null | undefined;

function getCompactor(): Compactor | null {
  if (compactor === undefined) {
    const module = instantiate(moduleBytes(COMPACT_BODY, OUTPUT_AT + WINDOW_CHARS + 16));
    compactor =
      module === undefined
        ? null
        : {
            compact: module.fn,
            input: Buffer.from(module.memory, 0, INPUT_BYTES),
            output: Buffer.from(module.memory, OUTPUT_AT, WINDOW_CHARS + 16),
          };
  }
  return compactor;
}

const CRLF = /\r\n/g;

/** The pieces joined, every CRLF replaced by LF — also one split between two pieces (a lone CR or LF stays). */
export function joinCrlfToLf(parts: readonly string[]): string {
  let chars = 0;
  for (const part of parts) chars += part.length;
  const wasm = chars <= WINDOW_CHARS ? getCompactor() : null;
  if (wasm !== null) {
    let written = 0;
    let ascii = true;
    for (const part of parts) {
      const bytes = wasm.input.write(part, written, 'utf8');
      written += bytes;
      // One byte per character exactly when the piece is ASCII (wider characters and lone surrogates
      // take more; a copy cut short by the window's end has more bytes than the piece has characters).
      if (bytes !== part.length) {
        ascii = false;
        break;
      }
    }
    if (ascii) {
      wasm.input.fill(0, written, written + 17); // no stale CR or LF beyond the end
      return wasm.output.toString('latin1', 0, wasm.compact(written));
    }
  }
  return (parts.length === 1 ? parts[0]! : parts.join('')).replace(CRLF, '\n');
}
