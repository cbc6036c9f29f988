/**
 * Turns the bytes read from a pty master into text, as a stream: a character split across two reads
 * is decoded whole, and bytes that are not UTF-8 become U+FFFD as the WHATWG decoder says.
 *
 * node-pty would decode with its stream's `StringDecoder` (`setEncoding('utf8')`); the session asks it
 * for bytes instead (`encoding: null`) and decodes here, because for text beyond ASCII `TextDecoder` in
 * streaming mode is 2× faster on Node 20 and 22 and 5× faster on Node 24 (24 MiB of CJK and emoji in
 * 4 KiB reads: 50 / 19 ms against `StringDecoder`'s 97–115 ms), while for ASCII it is 4–7× slower than
 * a byte copy. So a read of ASCII only, with nothing of an earlier read held back, is copied as Latin-1
 * (the same characters), and everything else goes through the streaming decoder. Over a stream the two
 * give the same text as `StringDecoder` does with its `end()`; `TextDecoder` emits the U+FFFD of a
 * sequence that can no longer complete at once, where `StringDecoder` waits for more bytes.
 *
 * A read of wide text almost always cuts a character (the line discipline hands over 4 KiB, whatever
 * they hold). The decoder keeps that unfinished end itself and puts it in front of the next read, so
 * that each read's text comes with its exact UTF-8 ({@link exactUtf8}): the output pipeline scans and
 * stores those bytes instead of encoding the text again.
 */
import { isAscii, isUtf8 } from 'node:buffer';

/** Bytes below this are ASCII: one that ends a read leaves the streaming decoder holding nothing. */
const FIRST_NON_ASCII_BYTE = 0x80;
const NOTHING = Buffer.alloc(0);

export class PtyTextDecoder {
  /** `ignoreBOM`: a byte order mark the program prints is output like any other character. */
  private readonly utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
  /** The start of a character the last read cut (at most 3 bytes), for the next read. */
  private held: Buffer = NOTHING;
  /**
   * Whether the streaming decoder itself holds no byte, so that a read may bypass it. Cutting off the
   * unfinished end is not enough where bytes are no UTF-8: in `E4 92 | E4 80` the cut leaves `E4 92`
   * at the end, which the decoder holds until the next byte shows it broken. Known for sure after whole
   * valid UTF-8, and after a byte below 0x80: an ASCII byte completes (or, as an error, ends) whatever
   * sequence was open, and starts none.
   */
  private decoderHoldsNothing = true;
  private lastUtf8: Uint8Array | undefined;

  /**
   * The exact UTF-8 of the text the last {@link decode} returned, when it has one: the read was ASCII or
   * whole valid UTF-8 once its cut ends were joined. Undefined after bytes that are no UTF-8.
   */
  get exactUtf8(): Uint8Array | undefined {
    return this.lastUtf8;
  }

  /** The text of `bytes`, the next read of the stream (the start of a character it cuts waits for the next). */
  decode(bytes: Buffer): string {
    if (this.held.length === 0 && this.decoderHoldsNothing && isAscii(bytes)) {
      this.lastUtf8 = bytes;
      return bytes.toString('latin1');
    }
    const input = this.held.length === 0 ? bytes : Buffer.concat([this.held, bytes]);
    const cut = unfinishedEnd(input);
    // A copy: the bytes of a read belong to its stream.
    this.held = cut === input.length ? NOTHING : Buffer.from(input.subarray(cut));
    const complete = cut === input.length ? input : input.subarray(0, cut);
    if (complete.length === 0) {
      this.lastUtf8 = undefined;
      return '';
    }
    const exact = this.decoderHoldsNothing && isUtf8(complete);
    this.lastUtf8 = exact ? complete : undefined;
    // Streaming mode even for whole characters: it is the fast path of TextDecoder on Node 20–24.
    const text = this.utf8.decode(complete, { stream: true });
    this.decoderHoldsNothing = exact || complete[complete.length - 1]! < FIRST_NON_ASCII_BYTE;
    return text;
  }

  /** The U+FFFD of an unfinished character held at the end of the stream ('' when none is held). */
  end(): string {
    const text = this.utf8.decode(this.held);
    this.held = NOTHING;
    this.decoderHoldsNothing = true;
    this.lastUtf8 = undefined;
    return text;
  }
}

/**
 * Where an unfinished character at the end of `bytes` starts: a lead byte followed by fewer continuation
 * bytes than it needs, each in the range UTF-8 allows there (so the sequence may still complete);
 * `bytes.length` when there is none.
 */
export function unfinishedEnd(bytes: Uint8Array): number {
  const length = bytes.length;
  for (let at = length - 1; at >= 0 && at >= length - 3; at--) {
    const byte = bytes[at]!;
    if (byte >= 0x80 && byte <= 0xbf) continue; // a continuation byte: its lead is further back
    const needs =
      byte >= 0xc2 && byte <= 0xdf
        ? 2
        : byte >= 0xe0 && byte <= 0xef
          ? 3
          : byte >= 0xf0 && byte <= 0xf4
            ? 4
            : 0;
    if (needs === 0 || at + needs <= length) return length; // ASCII, no lead byte, or a whole character
    if (at + 1 < length && !secondByteFits(byte, bytes[at + 1]!)) return length;
    return at;
  }
  return length;
}

/** Whether `second` may follow the lead byte `lead` (the narrower ranges after E0, ED, F0 and F4). */
function secondByteFits(lead: number, second: number): boolean {
  if (lead === 0xe0) return second >= 0xa0 && second <= 0xbf;
  if (lead === 0xed) return second >= 0x80 && second <= 0x9f;
  if (lead === 0xf0) return second >= 0x90 && second <= 0xbf;
  if (lead === 0xf4) return second >= 0x80 && second <= 0x8f;
  return second >= 0x80 && second <= 0xbf;
}
