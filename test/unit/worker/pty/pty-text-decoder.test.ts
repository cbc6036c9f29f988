/**
 * The session's decoder of pty bytes: over any cutting of a byte stream into reads it gives the text
 * node-pty's own stream decoder gives (`StringDecoder` with its `end()`), including the U+FFFD of bytes
 * that are no UTF-8, and its ASCII shortcut never skips bytes the streaming decoder still holds.
 */
import { StringDecoder } from 'node:string_decoder';
import { describe, expect, it } from 'vitest';
import { PtyTextDecoder } from '../../../../src/worker/pty/pty-text-decoder.js';

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

function decodeAll(decoder: PtyTextDecoder, reads: Buffer[]): string {
  return reads.map((read) => decoder.decode(read)).join('') + decoder.end();
}

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
      expect(decodeAll(new PtyTextDecoder(), reads), bytes.toString('hex')).toBe(referenceText(reads));
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
