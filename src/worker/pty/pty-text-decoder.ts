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
 */
import { isAscii } from 'node:buffer';

/** Code units below this are ASCII: a byte that ends a read leaves the UTF-8 decoder holding nothing. */
const FIRST_NON_ASCII_BYTE = 0x80;

export class PtyTextDecoder {
  /** `ignoreBOM`: a byte order mark the program prints is output like any other character. */
  private readonly utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
  /**
   * Whether the streaming decoder holds no byte of an unfinished sequence, so that a read may bypass
   * it. Only known for sure after a read that ended in an ASCII byte: an ASCII byte completes (or, as
   * an error, ends) whatever sequence was open, and starts none.
   */
  private holdsNothing = true;

  /** The text of `bytes`, the next read of the stream (bytes of a character it cuts are held for the next). */
  decode(bytes: Buffer): string {
    if (bytes.length === 0) return '';
    if (this.holdsNothing && isAscii(bytes)) return bytes.toString('latin1');
    const text = this.utf8.decode(bytes, { stream: true });
    this.holdsNothing = bytes[bytes.length - 1]! < FIRST_NON_ASCII_BYTE;
    return text;
  }

  /** The U+FFFD of an unfinished sequence held at the end of the stream ('' when none is held). */
  end(): string {
    this.holdsNothing = true;
    return this.utf8.decode();
  }
}
