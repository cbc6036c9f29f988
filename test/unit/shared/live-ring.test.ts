/**
 * The live-output ring (src/shared/live-ring.ts) with both ends in one thread: records come out as
 * they went in, in order, across the wrap-around; a record that does not fit is refused whole; and the
 * wake-up and resume handshakes give each side the answer the other needs. (The same code across real
 * threads is covered by the live-output tests of output-pipeline.test.ts.)
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  LIVE_LOW_WATERMARK_BYTES,
  LIVE_RING_BYTES,
  LiveRingReader,
  LiveRingWriter,
} from '../../../src/shared/live-ring.js';

const HEADER_BYTES = 16;
const recordBytes = (payload: number): number => (HEADER_BYTES + payload + 7) & ~7;
const utf8 = (text: string): Uint8Array => Buffer.from(text, 'utf8');
const isAscii = (text: string): boolean => Buffer.byteLength(text, 'utf8') === text.length;

/** Everything `reader` delivers now, as [text, dropped] pairs. */
function drained(reader: LiveRingReader): [string, number][] {
  const records: [string, number][] = [];
  reader.drain((text, dropped) => records.push([text, dropped]));
  return records;
}

describe('live ring', () => {
  it('delivers what was appended, in order, and refuses whole what does not fit (model)', () => {
    const capacity = 256; // small, so records wrap around the end and the ring fills up
    const operation = fc.oneof(
      {
        weight: 3,
        arbitrary: fc.record({
          text: fc.string({ unit: fc.constantFrom('a', 'b', '\n', '\r', 'é', '日', '😀'), maxLength: 80 }),
          dropped: fc.nat(1000),
        }),
      },
      { weight: 1, arbitrary: fc.constant('drain' as const) },
    );
    // Where the byte counters start: 0, and just before they pass 2^31 and 2^32 (held as Int32).
    const origin = fc.constantFrom(0, 2 ** 31 - 96, 2 ** 32 - 96);
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 60 }), origin, (operations, start) => {
        const writer = new LiveRingWriter(capacity, start);
        const reader = new LiveRingReader(writer.buffer);
        const pending: [string, number][] = [];
        let unread = 0;
        for (const op of operations) {
          if (op === 'drain') {
            expect(drained(reader)).toEqual(pending.splice(0));
            unread = 0;
            expect(writer.unread()).toBe(0);
            continue;
          }
          const payload = utf8(op.text);
          const fits = recordBytes(payload.length) <= capacity - unread;
          expect(writer.append(payload, isAscii(op.text), op.dropped)).toBe(fits);
          if (fits) {
            pending.push([op.text, op.dropped]);
            unread += recordBytes(payload.length);
          }
          expect(writer.unread()).toBe(unread);
        }
        expect(drained(reader)).toEqual(pending);
      }),
      { numRuns: 500 },
    );
  });

  it('carries a count of dropped characters beyond 32 bits', () => {
    const writer = new LiveRingWriter(256);
    const reader = new LiveRingReader(writer.buffer);
    for (const dropped of [2 ** 31 + 5, 2 ** 32 + 7, 3 * 2 ** 40]) writer.append(utf8('z'), true, dropped);
    expect(drained(reader)).toEqual([
      ['z', 2 ** 31 + 5],
      ['z', 2 ** 32 + 7],
      ['z', 3 * 2 ** 40],
    ]);
  });

  it('decodes a wide character split by the end of the ring', () => {
    const writer = new LiveRingWriter(64);
    const reader = new LiveRingReader(writer.buffer);
    // A 16-byte header and 24 bytes: the next header takes bytes 40–55, and its payload wraps after 8.
    expect(writer.append(utf8('x'.repeat(24)), true, 0)).toBe(true);
    expect(drained(reader)).toEqual([['x'.repeat(24), 0]]);
    const text = 'abcdefg日本'; // '日' takes bytes 7–9 of the payload: split at 8
    expect(writer.append(utf8(text), false, 3)).toBe(true);
    expect(drained(reader)).toEqual([[text, 3]]);
  });

  it('reads only what was published when the read began, and at most as many records as asked', () => {
    const writer = new LiveRingWriter();
    const reader = new LiveRingReader(writer.buffer);
    writer.append(utf8('one\n'), true, 0);
    const seen: string[] = [];
    reader.drain((text) => {
      seen.push(text);
      writer.append(utf8('two\n'), true, 0); // published while the host reads: left for the next read
    });
    expect(seen).toEqual(['one\n']);
    expect(drained(reader)).toEqual([['two\n', 0]]);
    // At most `maxRecords` per call; the rest wait, in order.
    for (const text of ['a', 'b', 'c']) writer.append(utf8(text), true, 0);
    const first: string[] = [];
    expect(reader.drain((text) => first.push(text), 2)).toBe(2);
    expect(first).toEqual(['a', 'b']);
    expect(drained(reader)).toEqual([['c', 0]]);
  });

  it('skips records undecoded without a subscriber, and still frees their space', () => {
    const writer = new LiveRingWriter(256);
    const reader = new LiveRingReader(writer.buffer);
    writer.append(utf8('gone\n'), true, 0);
    expect(reader.drain()).toBe(1);
    expect(writer.unread()).toBe(0);
    expect(drained(reader)).toEqual([]);
  });

  it('wakes a sleeping host once, and a host that finds a record keeps reading without a message', () => {
    const writer = new LiveRingWriter();
    const reader = new LiveRingReader(writer.buffer);
    // A new ring: the host sleeps, so the first record needs a wake-up, and only one.
    writer.append(utf8('a'), true, 0);
    expect(writer.claimWake()).toBe(true);
    writer.append(utf8('b'), true, 0);
    expect(writer.claimWake()).toBe(false);
    expect(reader.drain()).toBe(2);
    // Nothing new: the host goes to sleep, and the next record wakes it again.
    expect(reader.trySleep()).toBe(true);
    writer.append(utf8('c'), true, 0);
    expect(writer.claimWake()).toBe(true);
    expect(reader.drain()).toBe(1);
    // A record published while the host is awake posts nothing; the host finds it when it tries to
    // sleep, stays awake, and the engine still sees an awake host.
    writer.append(utf8('d'), true, 0);
    expect(writer.claimWake()).toBe(false);
    expect(reader.trySleep()).toBe(false);
    expect(writer.claimWake()).toBe(false);
    expect(drained(reader)).toEqual([['d', 0]]);
    expect(reader.trySleep()).toBe(true);
  });

  it('tells a paused engine when the host has read down to the low watermark, once', () => {
    const writer = new LiveRingWriter();
    const reader = new LiveRingReader(writer.buffer);
    const big = utf8('x'.repeat(LIVE_LOW_WATERMARK_BYTES));
    expect(reader.claimResume()).toBe(false); // nobody asked
    writer.append(big, true, 0);
    expect(writer.requestResume()).toBe(false); // more than the low watermark is unread: wait for the host
    expect(reader.claimResume()).toBe(false); // the host has not read yet
    reader.drain();
    expect(reader.claimResume()).toBe(true);
    expect(reader.claimResume()).toBe(false);
    // Asked when the host had already read everything: the engine resumes at once, without a message.
    expect(writer.requestResume()).toBe(true);
  });

  it('has the documented size, and rejects a record space that is not a power of two', () => {
    expect(new LiveRingWriter().buffer.byteLength).toBeGreaterThanOrEqual(LIVE_RING_BYTES);
    expect(() => new LiveRingWriter(1000)).toThrow(RangeError);
  });
});
