/**
 * CRLF → LF for live output, on the engine thread as a batch is published into the live ring
 * (live-output.ts, live-ring.ts): subscribers get LF line ends, and the host only decodes.
 *
 * A flood's batches are ~700 lines per 64 KiB, and every string method V8 offers does per-match work
 * (a global regex replace, `replaceAll`, split + join; bench/README.md, "What sets flood throughput").
 * Here the batch is copied into WebAssembly memory as UTF-8 and compacted with SIMD: 16 bytes are
 * stored per step, and a step that holds a CRLF stores only up to the CR and resumes at the LF. CR and
 * LF never occur inside a multi-byte character, so removing bytes there keeps the text valid. A batch
 * too large for the window, and machines without WebAssembly SIMD, take the regex.
 */
import { instantiate, moduleBytes, splat, uleb128 } from './wasm-function.js';

/**
 * Bytes compacted in WebAssembly at most: a batch is 64 KiB plus at most one read (64 KiB), and text
 * beyond ASCII may take up to 3 bytes a character.
 */
const WINDOW_BYTES = 512 * 1024;
/** The input window, with room for the 17 zero bytes after the text that the last steps may load. */
const INPUT_BYTES = WINDOW_BYTES + 32;
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

/** Instantiated on first use: only a session with a live subscriber needs it. Null: not available. */
let compactor: Compactor | null | undefined;

function getCompactor(): Compactor | null {
  if (compactor === undefined) {
    const module = instantiate(moduleBytes(COMPACT_BODY, OUTPUT_AT + WINDOW_BYTES + 16));
    compactor =
      module === undefined
        ? null
        : {
            compact: module.fn,
            input: Buffer.from(module.memory, 0, INPUT_BYTES),
            output: Buffer.from(module.memory, OUTPUT_AT, WINDOW_BYTES + 16),
          };
  }
  return compactor;
}

const CRLF = /\r\n/g;

/**
 * The UTF-8 bytes of the `pieces` joined, every CRLF replaced by LF — also one split between two pieces
 * (a lone CR or LF stays). `ascii`: every piece is ASCII, so it is copied rather than encoded. The
 * result may be a view of memory that the next call overwrites.
 */
export function utf8WithoutCrlf(pieces: readonly string[], ascii: boolean): Uint8Array {
  // Wide pieces are joined first: a surrogate pair split between two must be encoded as one character.
  const parts = ascii || pieces.length === 1 ? pieces : [pieces.join('')];
  let chars = 0;
  for (const part of parts) chars += part.length;
  // A UTF-16 code unit takes at most 3 bytes of UTF-8.
  const wasm = (ascii ? chars : 3 * chars) <= WINDOW_BYTES ? getCompactor() : null;
  if (wasm === null) return Buffer.from(parts.join('').replace(CRLF, '\n'), 'utf8');
  const encoding = ascii ? 'latin1' : 'utf8';
  let length = 0;
  for (const part of parts) length += wasm.input.write(part, length, encoding);
  wasm.input.fill(0, length, length + 17); // no stale CR or LF beyond the end
  return wasm.output.subarray(0, wasm.compact(length));
}
