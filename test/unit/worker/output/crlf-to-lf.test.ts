/**
 * CRLF → LF for live output, as the engine writes a record: the WebAssembly compaction against the
 * plain regex on any text, one call after another (nothing of a longer earlier text may leak into a
 * later one).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utf8WithoutCrlf } from '../../../../src/worker/output/crlf-to-lf.js';

const isAscii = (text: string): boolean => Buffer.byteLength(text, 'utf8') === text.length;

/** The parts through the function, decoded (ASCII parts take the copying route). */
const decodedRecord = (parts: readonly string[]): string =>
  Buffer.from(utf8WithoutCrlf(parts, parts.every(isAscii))).toString('utf8');

/** One text through the function (what a single-piece batch is). */
const crlfToLf = (text: string): string => decodedRecord([text]);

/** What subscribers must get: CRLF replaced, and (as UTF-8 does) a lone surrogate made U+FFFD. */
const byRegex = (text: string): string => Buffer.from(text.replace(/\r\n/g, '\n'), 'utf8').toString('utf8');

/** Lines with every kind of CR/LF neighbourhood, mostly ASCII (the compacted case), sometimes wider. */
const text = fc
  .array(
    fc.oneof(
      { weight: 6, arbitrary: fc.string({ unit: fc.constantFrom(...'abc xyz-'), maxLength: 40 }) },
      { weight: 6, arbitrary: fc.constantFrom('\r\n', '\n', '\r', '\r\r\n', '\n\r', '\r\r') },
      { weight: 1, arbitrary: fc.constantFrom('é', '日本', '\ud83d', '😀', '\t') },
    ),
    { maxLength: 200 },
  )
  .map((pieces) => pieces.join(''));

describe('utf8WithoutCrlf', () => {
  it('equals the regex replace on any text, call after call', () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 6 }), (texts) => {
        for (const each of texts) expect(crlfToLf(each)).toBe(byRegex(each));
      }),
      { numRuns: 3000 },
    );
  });

  it('joins pieces first: a CRLF split between two pieces is one line end, wide pieces anywhere', () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 20 }), (parts) => {
        expect(decodedRecord(parts)).toBe(byRegex(parts.join('')));
      }),
      { numRuns: 2000 },
    );
    expect(decodedRecord(['a\r', '\nb'])).toBe('a\nb');
    // A wide piece whose UTF-8 length happens to equal the characters of all pieces together.
    expect(decodedRecord(['日', '\r\n'])).toBe('日\n');
    expect(decodedRecord(['日', 'ab'])).toBe('日ab');
    // A surrogate pair split between two pieces is one character.
    expect(decodedRecord(['a\ud83d', '\ude00\r\n'])).toBe('a😀\n');
    expect(decodedRecord([])).toBe('');
  });

  it('handles a CRLF at every place of the 16-byte steps, and texts past the window', () => {
    for (let at = 0; at < 40; at++) {
      const line = `${'x'.repeat(at)}\r\n${'y'.repeat(40 - at)}\r`;
      expect(crlfToLf(line)).toBe(byRegex(line));
      expect(crlfToLf(line.repeat(7))).toBe(byRegex(line.repeat(7)));
    }
    // A long text first, then short ones: the bytes it left behind must not pair with theirs.
    const long = 'ab\r\n'.repeat(50_000);
    expect(crlfToLf(long)).toBe(byRegex(long));
    expect(crlfToLf('z\r')).toBe('z\r');
    expect(crlfToLf('\r\nq\r')).toBe('\nq\r');
    // Beyond the 512 KiB window the regex does it.
    const huge = `${'line\r\n'.repeat(100_000)}end`;
    expect(crlfToLf(huge)).toBe(byRegex(huge));
    expect(crlfToLf('日\r\n本\r\n')).toBe('日\n本\n');
    // Wide text is encoded (up to 3 bytes a character), so it takes the regex sooner.
    const wide = '日本\r\n'.repeat(50_000);
    expect(crlfToLf(wide)).toBe(byRegex(wide));
    // A lone surrogate becomes U+FFFD, as any UTF-8 encoding makes it.
    expect(crlfToLf('a\ud83d\r\n')).toBe('a\ufffd\n');
  });

  it('returns text without a CRLF as it is', () => {
    const plain = 'no line end here\rjust a CR';
    expect(crlfToLf(plain)).toBe(plain);
    expect(crlfToLf('')).toBe('');
  });
});
