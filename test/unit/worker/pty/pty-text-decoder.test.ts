/**
 * The session's decoder of pty bytes: over any cutting of a byte stream into reads it gives the text
 * node-pty's own stream decoder gives (`StringDecoder` with its `end()`), including the U+FFFD of bytes
 * that are no UTF-8, and its ASCII shortcut never skips bytes the streaming decoder still holds; the
 * UTF-8 it vouches for is exactly that of the text it returned.
 */
import { StringDecoder } from 'node:string_decoder';
import { describe, expect, it } from 'vitest';
import { PtyTextDecoder, unfinishedEnd } from '../../../../src/worker/pty/pty-text-decoder.js';

/** A deterministic generator (the cases must be the same on every run). */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return state / 2 ** 32;
  };
}

/** Lead, continuation and boundary bytes of UTF-8, ASCII and bytes that never occur in it. */
const BYTE_POOL = [
  0x41, 0x0a, 0x0d, 0x1b, 0xc3, 0xa9, 0xe4, 0xb8, 0xad, 0xf0, 0x9f, 0x98, 0x80, 0xbf, 0xed, 0xa0, 0xf4, 0x90,
  0xc0, 0xff, 0xe0, 0xef, 0xbb,
];

function referenceText(reads: Buffer[]): string {
  const reference = new StringDecoder('utf8');
  return reads.map((read) => reference.write(read)).join('') + reference.end();
}

describe('PtyTextDecoder', () => {
  it("gives StringDecoder's text for 20 000 random byte streams cut into random reads", () => {
    const random = seeded(7);
    for (let round = 0; round < 20_000; round++) {
      const bytes = Buffer.alloc(1 + Math.floor(random() * 40));
      for (let i = 0; i < bytes.length; i++)
        bytes[i] =
          random() < 0.3 ? Math.floor(random() * 256) : BYTE_POOL[Math.floor(random() * BYTE_POOL.length)]!;
      const reads: Buffer[] = [];
      for (let at = 0; at < bytes.length; ) {
        const length = 1 + Math.floor(random() * 6);
        reads.push(bytes.subarray(at, at + length));
        at += length;
      }
      const decoder = new PtyTextDecoder();
      let text = '';
      for (const read of reads) {
        const piece = decoder.decode(read);
        const utf8 = decoder.exactUtf8;
        if (utf8 !== undefined) expect(Buffer.from(utf8).equals(Buffer.from(piece, 'utf8'))).toBe(true);
        text += piece;
      }
      expect(text + decoder.end(), bytes.toString('hex')).toBe(referenceText(reads));
    }
  });

  it('vouches for the UTF-8 of every read of valid text, however the reads cut its characters', () => {
    const text = 'ascii 中文 😀 é\r\n'.repeat(20);
    const bytes = Buffer.from(text, 'utf8');
    for (const size of [1, 2, 3, 5, 7, 64]) {
      const decoder = new PtyTextDecoder();
      const vouched: Buffer[] = [];
      let decoded = '';
      for (let at = 0; at < bytes.length; at += size) {
        const piece = decoder.decode(bytes.subarray(at, at + size));
        decoded += piece;
        // Only a read that held all of its bytes back (the start of a character) has none.
        if (decoder.exactUtf8 !== undefined) vouched.push(Buffer.from(decoder.exactUtf8));
        else expect(piece).toBe('');
      }
      expect(decoded).toBe(text);
      expect(Buffer.concat(vouched).toString('utf8'), `reads of ${size}`).toBe(text);
    }
  });

  it('finds the start of an unfinished character exactly where UTF-8 could still complete it', () => {
    // The definition: a cut at `at` holds a proper prefix of some valid encoded character.
    const prefixes = new Set<string>();
    for (let cp = 0x80; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const encoded = Buffer.from(String.fromCodePoint(cp), 'utf8');
      for (let n = 1; n < encoded.length; n++) prefixes.add(encoded.subarray(0, n).toString('hex'));
    }
    const random = seeded(11);
    for (let round = 0; round < 20_000; round++) {
      const bytes = Buffer.alloc(Math.floor(random() * 6));
      for (let i = 0; i < bytes.length; i++)
        bytes[i] =
          random() < 0.5 ? Math.floor(random() * 256) : BYTE_POOL[Math.floor(random() * BYTE_POOL.length)]!;
      let expected = bytes.length;
      for (let at = Math.max(0, bytes.length - 3); at < bytes.length; at++)
        if (prefixes.has(bytes.subarray(at).toString('hex'))) {
          expected = at;
          break;
        }
      expect(unfinishedEnd(bytes), bytes.toString('hex')).toBe(expected);
    }
  });

  it('decodes a character cut into every one of its bytes whole', () => {
    const emoji = Buffer.from('a😀b中c', 'utf8');
    const reads = [...emoji].map((byte) => Buffer.from([byte]));
    const decoder = new PtyTextDecoder();
    expect(reads.map((read) => decoder.decode(read)).join('')).toBe('a😀b中c');
  });

  it('an ASCII read after an unfinished sequence first ends that sequence with U+FFFD', () => {
    const decoder = new PtyTextDecoder();
    expect(decoder.decode(Buffer.from([0x61, 0xe2, 0x82]))).toBe('a');
    // All ASCII, but the decoder holds the euro sign's first two bytes: they cannot complete now.
    expect(decoder.decode(Buffer.from('b-ok\n'))).toBe('\ufffdb-ok\n');
    expect(decoder.decode(Buffer.from('plain\n'))).toBe('plain\n');
  });

  it('vouches for no bytes while the decoder still holds some that are no UTF-8', () => {
    const decoder = new PtyTextDecoder();
    // E4 92 cannot complete (another lead byte follows), but the decoder holds it once E4 80 is cut off.
    expect(decoder.decode(Buffer.from([0xe4, 0x92, 0xe4, 0x80]))).toBe('');
    // E4 80 BF is valid, yet the text begins with the U+FFFD of E4 92: these bytes are not its UTF-8.
    expect(decoder.decode(Buffer.from([0xbf]))).toBe('\ufffd\u403f');
    expect(decoder.exactUtf8).toBeUndefined();
    expect(decoder.decode(Buffer.from('ok\n'))).toBe('ok\n');
  });

  it('keeps a byte order mark the program prints, at the start and later', () => {
    const decoder = new PtyTextDecoder();
    expect(decoder.decode(Buffer.from('\ufeffhead\n', 'utf8'))).toBe('\ufeffhead\n');
    expect(decoder.decode(Buffer.from('x\ufeff\n', 'utf8'))).toBe('x\ufeff\n');
  });

  it('ends the stream with the U+FFFD of what it held, once', () => {
    const decoder = new PtyTextDecoder();
    expect(decoder.decode(Buffer.from([0xf0, 0x9f, 0x98]))).toBe('');
    expect(decoder.end()).toBe('\ufffd');
    expect(decoder.end()).toBe('');
    expect(decoder.decode(Buffer.from('after\n'))).toBe('after\n');
  });
});
