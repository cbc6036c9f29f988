import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TerminalError } from '../../../../src/shared/errors.js';
import { LineFeeds } from '../../../../src/worker/output/line-feeds.js';
import { LineRing } from '../../../../src/worker/output/line-ring.js';
import { TerminalModel } from '../../../../src/worker/replies/terminal-model.js';

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');

/** The longest suffix of `s` within `maxBytes` UTF-8 bytes, cut between code points. */
function tailWithin(s: string, maxBytes: number): string {
  const points = [...s];
  let bytes = 0;
  let i = points.length;
  while (i > 0 && bytes + utf8(points[i - 1]!) <= maxBytes) {
    bytes += utf8(points[i - 1]!);
    i -= 1;
  }
  return points.slice(i).join('');
}

/**
 * The specification of the ring written the slow, obvious way: plain arrays, everything recomputed.
 * The real ring must agree with it on every observable.
 */
class NaiveRing {
  lines: string[] = [];
  open = '';
  firstSeq = 0;
  evicted = false;
  trimmedSeqs = new Set<number>();
  openTrimmed = false;
  constructor(
    readonly maxLines: number,
    readonly maxBytes: number,
  ) {}

  get headSeq(): number {
    return this.firstSeq + this.lines.length;
  }
  held(): string[] {
    return this.open === '' ? [...this.lines] : [...this.lines, this.open];
  }
  bytes(): number {
    return this.lines.reduce((sum, line) => sum + utf8(line) + 1, 0) + utf8(this.open);
  }
  text(s: string): void {
    this.open += s;
    if (utf8(this.open) > this.maxBytes) this.trimOpen(this.maxBytes);
    this.evict();
  }
  newline(): void {
    if (utf8(this.open) + 1 > this.maxBytes) this.trimOpen(this.maxBytes - 1);
    if (this.openTrimmed) this.trimmedSeqs.add(this.headSeq);
    this.lines.push(this.open);
    this.open = '';
    this.openTrimmed = false;
    this.evict();
  }
  rewriteLine(): void {
    this.open = '';
    this.openTrimmed = false;
  }
  private trimOpen(maxBytes: number): void {
    this.open = tailWithin(this.open, maxBytes);
    this.openTrimmed = true;
    this.evicted = true;
  }
  private evict(): void {
    while (
      this.lines.length > 0 &&
      (this.lines.length + (this.open === '' ? 0 : 1) > this.maxLines || this.bytes() > this.maxBytes)
    ) {
      this.lines.shift();
      this.firstSeq += 1;
      this.evicted = true;
    }
  }
  /** Newest lines of `lines` within maxBytes (joined by `sep` rules); a lone oversized line keeps its tail. */
  private newest(lines: string[], maxBytes: number, terminatedUpTo: number) {
    // terminatedUpTo: lines with index < terminatedUpTo carry a trailing '\n' (delta format); for pages
    // every line but the last is followed by '\n'.
    const out: string[] = [];
    let used = 0;
    for (let i = lines.length - 1; i >= 0; i--) {
      const withNewline = i < terminatedUpTo;
      const cost = utf8(lines[i]!) + (withNewline ? 1 : 0);
      if (used + cost > maxBytes) {
        if (out.length === 0)
          out.push(tailWithin(lines[i]!, maxBytes - (withNewline ? 1 : 0)) + (withNewline ? '\n' : ''));
        return { text: out.reverse().join(''), kept: out.length, cut: true };
      }
      out.push(lines[i]! + (withNewline ? '\n' : ''));
      used += cost;
    }
    return { text: out.reverse().join(''), kept: out.length, cut: false };
  }
  read(offset: number, count: number, maxBytes: number) {
    const held = this.held();
    const lineEnd = Math.max(0, held.length - offset);
    const page = held.slice(Math.max(0, lineEnd - count), lineEnd);
    const cut = this.newest(page, maxBytes, page.length - 1);
    return {
      text: cut.text,
      totalLines: held.length,
      lineBegin: lineEnd - cut.kept,
      lineEnd,
      truncated: cut.cut,
    };
  }
  readSince(fromSeq: number, maxBytes: number) {
    const completed = this.lines.slice(Math.max(0, fromSeq - this.firstSeq));
    const chosen = fromSeq > this.headSeq ? [] : this.open === '' ? completed : [...completed, this.open];
    const cut = this.newest(chosen, maxBytes, completed.length);
    const trimmed =
      [...this.trimmedSeqs].some((seq) => seq >= fromSeq) || (this.openTrimmed && fromSeq <= this.headSeq);
    return {
      text: cut.text,
      nextSeq: this.headSeq,
      truncated: cut.cut || fromSeq < this.firstSeq || trimmed,
    };
  }
}

/**
 * A block's lines through `text` + `newline` one by one — the contract of `textBlock`: each piece
 * ended by `\n` (without the CR of a CRLF), then the rest.
 */
function perLine(target: { text(s: string): void; newline(): void }, block: string): void {
  const pieces = block.split('\n');
  const rest = pieces.pop()!;
  for (const piece of pieces) {
    const line = piece.endsWith('\r') ? piece.slice(0, -1) : piece;
    if (line !== '') target.text(line);
    target.newline();
  }
  if (rest !== '') target.text(rest);
}

/** The line feeds of `s` as the line-text scan reports them, found the obvious way. */
function lineFeedsOf(s: string): LineFeeds {
  const positions = [...s.matchAll(/\n/g)].map((match) => match.index);
  const lineFeeds = new LineFeeds();
  lineFeeds.reset();
  lineFeeds.add(Int32Array.from(positions), positions.length, [...s.matchAll(/\r/g)].length, 0);
  return lineFeeds;
}

type Op =
  | { kind: 'text'; s: string }
  | { kind: 'newline' }
  | { kind: 'rewrite' }
  | { kind: 'block'; s: string; told: boolean; lineFeeds: boolean; withUtf8: boolean }
  | { kind: 'read'; offset: number; count: number; maxBytes: number }
  | { kind: 'since'; back: number; maxBytes: number };

const textPiece = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }).map((s) => s.replace(/[\n\r]/g, '')),
  fc.string({ unit: 'binary-ascii', maxLength: 6 }).map((s) => s.replace(/[\n\r]/g, '')),
  fc.constantFrom('é', '日本語', '😀', 'x'.repeat(40), '\t'),
);
/**
 * Several lines at once: text pieces joined by `\n` or `\r\n` (any count, empty and over-long lines
 * included). A CR before an LF belongs to the line end.
 */
const block = fc
  .array(fc.tuple(fc.oneof(textPiece, fc.constant('')), fc.constantFrom('\n', '\r\n')), {
    minLength: 1,
    maxLength: 14,
  })
  .map((lines) => lines.map(([piece, end], i) => (i === lines.length - 1 ? piece : piece + end)).join(''));
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('block' as const),
      s: block,
      told: fc.boolean(),
      lineFeeds: fc.boolean(),
      withUtf8: fc.boolean(),
    }),
  },
  { weight: 5, arbitrary: textPiece.map((s) => ({ kind: 'text' as const, s })) },
  { weight: 4, arbitrary: fc.constant({ kind: 'newline' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'rewrite' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('read' as const),
      offset: fc.nat(12),
      count: fc.nat(12),
      maxBytes: fc.integer({ min: 1, max: 80 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('since' as const),
      back: fc.nat(12),
      maxBytes: fc.integer({ min: 1, max: 80 }),
    }),
  },
);

describe('LineRing agrees with the naive model', () => {
  it('on every observable, for any appends, rewrites, pages and deltas', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 64 }),
        fc.array(op, { maxLength: 120, size: 'max' }),
        (maxLines, maxBytes, ops) => {
          const ring = new LineRing({ maxLines, maxBytes });
          const model = new NaiveRing(maxLines, maxBytes);
          for (const step of ops) {
            switch (step.kind) {
              case 'text':
                ring.text(step.s);
                model.text(step.s);
                break;
              case 'newline':
                ring.newline();
                model.newline();
                break;
              case 'rewrite':
                ring.rewriteLine();
                model.rewriteLine();
                break;
              case 'block': {
                // The contract: text + newline per `\n`-terminated piece (without the CR of a CRLF),
                // then text of the rest.
                // The terminal model says when a block is ASCII; the ring checks when it is not told. For an
                // ASCII block it may also pass where the line feeds are, as the scan found them.
                const ascii = step.told && /^\p{ASCII}*$/u.test(step.s);
                // Where the caller has the block's UTF-8 (the pty's bytes), it passes it too: only text
                // without a lone surrogate has one.
                const bytes =
                  step.withUtf8 && !/\p{Cs}/u.test(step.s) ? Buffer.from(step.s, 'utf8') : undefined;
                ring.textBlock(
                  step.s,
                  ascii,
                  ascii && step.lineFeeds ? lineFeedsOf(step.s) : undefined,
                  bytes,
                );
                perLine(model, step.s);
                break;
              }
              case 'read':
                expect(ring.read({ offset: step.offset, count: step.count }, step.maxBytes)).toEqual(
                  model.read(step.offset, step.count, step.maxBytes),
                );
                break;
              case 'since': {
                const fromSeq = Math.max(0, model.headSeq - step.back);
                expect(ring.readSince(fromSeq, step.maxBytes)).toEqual(
                  model.readSince(fromSeq, step.maxBytes),
                );
                break;
              }
            }
            expect(ring.toString()).toBe(model.lines.map((l) => `${l}\n`).join('') + model.open);
            expect(ring.totalLines).toBe(model.held().length);
            expect(ring.byteLength).toBe(model.bytes());
            expect(ring.byteLength).toBe(utf8(ring.toString()));
            expect(ring.totalLines).toBeLessThanOrEqual(maxLines);
            expect(ring.byteLength).toBeLessThanOrEqual(maxBytes);
            expect(ring.headSeq).toBe(model.headSeq);
            expect(ring.evicted).toBe(model.evicted);
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('LineRing paging', () => {
  /** `seq 1 20000` into a ring that holds 10 000 lines: lines "10001".."20000". */
  function seqRing(): LineRing {
    const ring = new LineRing({ maxLines: 10_000, maxBytes: 4 * 1024 * 1024 });
    for (let i = 1; i <= 20_000; i++) {
      ring.text(String(i));
      ring.newline();
    }
    return ring;
  }
  const numbers = (from: number, to: number): string =>
    Array.from({ length: to - from + 1 }, (_, k) => String(from + k)).join('\n');

  it('pages 20 000 lines exactly by offset and count', () => {
    const ring = seqRing();
    expect(ring.totalLines).toBe(10_000);
    expect(ring.evicted).toBe(true);
    expect(ring.read({}, 1 << 20)).toEqual({
      text: numbers(19_501, 20_000),
      totalLines: 10_000,
      lineBegin: 9_500,
      lineEnd: 10_000,
      truncated: false,
    });
    expect(ring.read({ offset: 500, count: 500 }, 1 << 20)).toMatchObject({
      text: numbers(19_001, 19_500),
      lineBegin: 9_000,
      lineEnd: 9_500,
    });
    expect(ring.read({ offset: 9_990, count: 500 }, 1 << 20)).toMatchObject({
      text: numbers(10_001, 10_010),
      lineBegin: 0,
      lineEnd: 10,
    });
    expect(ring.read({ offset: 10_000 }, 1 << 20)).toMatchObject({ text: '', lineBegin: 0, lineEnd: 0 });
    expect(ring.read({ offset: 0, count: 0 }, 1 << 20)).toMatchObject({ text: '', lineBegin: 10_000 });
    expect(ring.read({ count: 10_000 }, 1 << 20).text).toBe(numbers(10_001, 20_000));
  });

  it('cuts a page to maxBytes keeping its newest lines', () => {
    const ring = seqRing();
    // Five digits per line plus '\n' between lines: 16 lines take 16 * 6 - 1 = 95 bytes, 17 take 101.
    expect(ring.read({ count: 500 }, 100)).toEqual({
      text: numbers(19_985, 20_000),
      totalLines: 10_000,
      lineBegin: 9_984,
      lineEnd: 10_000,
      truncated: true,
    });
    expect(ring.read({ offset: 100, count: 3 }, 16)).toMatchObject({
      text: numbers(19_899, 19_900),
      truncated: true,
    });
    expect(ring.read({ count: 1 }, 3)).toMatchObject({ text: '000', lineBegin: 9_999, truncated: true });
  });

  it('counts a non-empty open line as the newest line', () => {
    const ring = new LineRing({ maxLines: 10, maxBytes: 1000 });
    ring.text('done');
    ring.newline();
    ring.text('$ ');
    expect(ring.read({}, 1000)).toEqual({
      text: 'done\n$ ',
      totalLines: 2,
      lineBegin: 0,
      lineEnd: 2,
      truncated: false,
    });
    expect(ring.toString()).toBe('done\n$ ');
  });

  it('rejects invalid arguments with INVALID_ARGUMENT', () => {
    const ring = new LineRing({ maxLines: 10, maxBytes: 1000 });
    for (const bad of [
      () => ring.read({ offset: -1 }, 10),
      () => ring.read({ count: 1.5 }, 10),
      () => ring.read({}, 0),
    ]) {
      expect(bad).toThrow(TerminalError);
    }
    expect(() => new LineRing({ maxLines: 0, maxBytes: 10 })).toThrow(/maxLines/);
  });
});

describe('LineRing bounds', () => {
  it('holds the newest lines within both bounds while 20 000 lines stream through', () => {
    const ring = new LineRing({ maxLines: 1_000, maxBytes: 4_096 });
    for (let i = 0; i < 20_000; i++) {
      ring.text(`line ${i} ${'é'.repeat(i % 7)}`);
      ring.newline();
      expect(ring.totalLines).toBeLessThanOrEqual(1_000);
      expect(ring.byteLength).toBeLessThanOrEqual(4_096);
    }
    const text = ring.toString();
    expect(utf8(text)).toBe(ring.byteLength);
    expect(text.endsWith(`line 19999 ${'é'.repeat(19_999 % 7)}\n`)).toBe(true);
    expect(ring.byteLength).toBeGreaterThan(4_096 - 30); // only whole lines were evicted
  });

  it('keeps the tail of a huge open line (yes | tr -d "\\n") within maxBytes', () => {
    const maxBytes = 256 * 1024;
    const ring = new LineRing({ maxLines: 100, maxBytes });
    ring.text('older line');
    ring.newline();
    const chunk = 'y'.repeat(65_536);
    for (let i = 0; i < 160; i++) {
      ring.text(chunk); // 10 MiB in all
      expect(ring.byteLength).toBeLessThanOrEqual(maxBytes);
    }
    ring.text('é😀end');
    expect(ring.totalLines).toBe(1);
    expect(ring.byteLength).toBe(maxBytes);
    expect(ring.toString().endsWith('yé😀end')).toBe(true);
    const page = ring.read({}, 100);
    expect(page.truncated).toBe(true);
    expect(page.text.endsWith('end')).toBe(true);
    expect(utf8(page.text)).toBeLessThanOrEqual(100);
  });

  it('keeps a huge line built from tiny multi-byte writes bounded, without splitting characters', () => {
    const ring = new LineRing({ maxLines: 10, maxBytes: 1_001 });
    for (let i = 0; i < 50_000; i++) ring.text(i % 2 === 0 ? '日' : '😀');
    expect(ring.byteLength).toBeLessThanOrEqual(1_001);
    expect(ring.byteLength).toBeGreaterThan(1_001 - 4);
    expect(ring.toString()).not.toMatch(/\uFFFD/);
    expect(utf8(ring.toString())).toBe(ring.byteLength);
    ring.newline();
    expect(ring.byteLength).toBeLessThanOrEqual(1_001);
  });

  it('does not pin the large chunks its lines were sliced from', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const ring = new LineRing({ maxLines: 10_000, maxBytes: 4 * 1024 * 1024 });
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 100; i++) {
      // A fresh 1 MB string each time; only a short slice of it is meant to be kept.
      const chunk = `${i} `.padEnd(1_000_000, 'x');
      ring.text(chunk.slice(0, 20)); // a completed line
      ring.newline();
      ring.text(chunk.slice(20, 40)); // and pieces of one long open line
      ring.text(chunk.slice(40, 60));
    }
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    expect(ring.totalLines).toBe(101);
    // Pinning every chunk would hold 100 MB; the ring's batching pins at most a few dozen at a time.
    expect(grown).toBeLessThan(30 * 1024 * 1024);
  });
});

describe('LineRing deltas (readSince)', () => {
  it('returns each completed line once and the open line until it completes', () => {
    const ring = new LineRing({ maxLines: 100, maxBytes: 10_000 });
    const start = ring.headSeq;
    ring.text('a');
    ring.newline();
    ring.text('b');
    ring.newline();
    ring.text('part');
    let delta = ring.readSince(start, 10_000);
    expect(delta).toEqual({ text: 'a\nb\npart', nextSeq: start + 2, truncated: false });
    ring.text('ial');
    ring.newline();
    ring.text('c');
    ring.newline();
    delta = ring.readSince(delta.nextSeq, 10_000);
    expect(delta).toEqual({ text: 'partial\nc\n', nextSeq: start + 4, truncated: false }); // repeated in full
    expect(ring.readSince(delta.nextSeq, 10_000)).toEqual({ text: '', nextSeq: start + 4, truncated: false });
  });

  it('shows only the final content of a line rewritten after it was returned', () => {
    const ring = new LineRing({ maxLines: 100, maxBytes: 10_000 });
    ring.text(' 10%');
    const first = ring.readSince(0, 10_000);
    expect(first.text).toBe(' 10%');
    ring.rewriteLine();
    ring.text('100%');
    ring.newline();
    expect(ring.readSince(first.nextSeq, 10_000)).toEqual({ text: '100%\n', nextSeq: 1, truncated: false });
  });

  it('reports truncation when lines since fromSeq were evicted or the delta was cut', () => {
    const ring = new LineRing({ maxLines: 3, maxBytes: 10_000 });
    for (const line of ['1', '2', '3', '4', '5']) {
      ring.text(line);
      ring.newline();
    }
    expect(ring.readSince(0, 10_000)).toEqual({ text: '3\n4\n5\n', nextSeq: 5, truncated: true });
    expect(ring.readSince(2, 10_000)).toEqual({ text: '3\n4\n5\n', nextSeq: 5, truncated: false });
    expect(ring.readSince(2, 4)).toEqual({ text: '4\n5\n', nextSeq: 5, truncated: true });
  });

  it('feeds from the terminal model: a progress bar and a prompt', () => {
    const ring = new LineRing({ maxLines: 100, maxBytes: 10_000 });
    const model = new TerminalModel({
      rows: 24,
      cols: 80,
      ring,
      reply: () => undefined,
      marker: () => false,
    });
    const from = ring.headSeq;
    for (let i = 0; i <= 100; i += 10) model.write(`\r\x1b[Kdownloading ${i}%`);
    model.write('\r\n\x1b]133;D;0\x07$ ');
    model.sync();
    expect(ring.readSince(from, 10_000).text).toBe('downloading 100%\n$ ');
    model.dispose();
  });
});

describe('LineRing block appends at flood sizes', () => {
  const lineArb = fc.oneof(
    fc.string({ unit: 'binary-ascii', maxLength: 120 }).map((s) => s.replace(/[\n\r]/g, '')),
    fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s.replace(/[\n\r]/g, '')),
    // Lines longer than one run (64 KiB) and than the small ring's byte bound.
    fc.constantFrom('x'.repeat(70_000), 'é'.repeat(30_000), `${'a'.repeat(5_000)}😀`),
  );
  const bigBlock = fc
    .array(fc.tuple(lineArb, fc.constantFrom('\n', '\r\n')), { minLength: 1, maxLength: 3_000 })
    .map((lines) => lines.map(([line, end]) => line + end).join(''));

  it('equals text + newline per line for blocks of many runs, over-long lines and non-ASCII text', () => {
    fc.assert(
      fc.property(
        fc.constantFrom({ maxLines: 10_000, maxBytes: 4 * 1024 * 1024 }, { maxLines: 500, maxBytes: 50_000 }),
        fc.array(
          fc.tuple(
            bigBlock,
            fc.string({ maxLength: 8 }).map((s) => s.replace(/[\n\r]/g, '')),
          ),
          {
            minLength: 1,
            maxLength: 4,
          },
        ),
        (bounds, blocks) => {
          const fast = new LineRing(bounds);
          const slow = new LineRing(bounds);
          for (const [block, tail] of blocks) {
            fast.textBlock(block + tail);
            perLine(slow, block + tail);
          }
          expect(fast.headSeq).toBe(slow.headSeq);
          expect(fast.byteLength).toBe(slow.byteLength);
          expect(fast.totalLines).toBe(slow.totalLines);
          expect(fast.evicted).toBe(slow.evicted);
          expect(fast.toString()).toBe(slow.toString());
          expect(fast.read({ count: 100_000 }, 64 * 1024)).toEqual(slow.read({ count: 100_000 }, 64 * 1024));
          const since = Math.max(0, slow.headSeq - 50);
          expect(fast.readSince(since, 64 * 1024)).toEqual(slow.readSince(since, 64 * 1024));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('keeps what it holds off the JavaScript heap', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const ring = new LineRing({ maxLines: 100_000, maxBytes: 4 * 1024 * 1024 });
    const line = `${'2024-05-01T00:00:00.000Z INFO  [worker-10] GET /api/v1/items'.padEnd(96, '.')}\r\n`;
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 1_000; i++) ring.textBlock(line.repeat(50)); // ~4.9 MB, a fresh string each time
    gc();
    expect(ring.byteLength).toBeGreaterThan(4 * 1024 * 1024 - 200);
    // A ring of strings would keep ~4 MiB of them on the heap; here only the index (16 bytes a line).
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(1.5 * 1024 * 1024);
  });
});
