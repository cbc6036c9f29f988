import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asciiLineTextEnd } from '../../../../src/worker/output/ascii-line-scan.js';
import { LineFeeds } from '../../../../src/worker/output/line-feeds.js';
import { LineTextKind, lineTextKind, lineTextKindByRegex } from '../../../../src/worker/output/line-text.js';
import { wideLineTextEnd } from '../../../../src/worker/output/wide-line-scan.js';

/** The definition, as one plain regex: printable characters, TAB, LF and CR. */
const LINE_TEXT = /^[\t\n\r\x20-\x7e\xa0-\uffff]*$/;

/** Both implementations: the SIMD scan where available (it is on our machines) and the regex fallback. */
const implementations = [
  { name: 'lineTextKind', kind: lineTextKind },
  { name: 'lineTextKindByRegex', kind: lineTextKindByRegex },
].map(({ name, kind }) => ({ name, kind, check: (text: string) => kind(text) !== LineTextKind.None }));

/** ASCII only (what lets the scrollback copy a block as Latin-1). */
const ASCII = /^\p{ASCII}*$/u;

/** Any string: ASCII, controls, C1, Latin-1, wide characters, surrogate halves, long runs. */
const anyText = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        'a',
        ' ',
        '~',
        '\t',
        '\n',
        '\r',
        '\x0b',
        '\x0c',
        '\x1b',
        '\x7f',
        '\x85',
        '\xa0',
        'é',
        '日',
      ),
      fc.constantFrom('\u0100', '\u0141', '\u0a0d', '\u2020', '\ud83d', 'x'.repeat(40)),
      fc.string({ unit: 'binary', maxLength: 3 }),
    ),
    { maxLength: 60 },
  )
  .map((units) => units.join(''));

describe.each(implementations)('$name', ({ kind, check }) => {
  it('accepts printable text with TAB, LF and CR line ends, in ASCII and beyond', () => {
    expect(kind('')).toBe(LineTextKind.Ascii);
    expect(kind(`${'x'.repeat(100_000)}\r\n`)).toBe(LineTextKind.Ascii);
    expect(kind(`${'x'.repeat(100_000)}\xa0`)).toBe(LineTextKind.Wide);
    expect(check('')).toBe(true);
    expect(check('2026-11-30 INFO ok\r\n\tat x\n')).toBe(true);
    expect(check('naïve — 日本語 😀\r\n')).toBe(true);
    expect(check('progress 10%\rprogress 20%')).toBe(true);
    expect(check(`${'x'.repeat(70_000)}\r\n${'y'.repeat(70_000)}`)).toBe(true);
  });

  it('rejects escape sequences, C0 and C1 controls, DEL, VT and FF anywhere', () => {
    for (const control of ['\x1b', '\x07', '\x08', '\x00', '\x7f', '\x85', '\x9b', '\x0b', '\x0c']) {
      expect(check(`abc${control}def`)).toBe(false);
      expect(check(`é${control}`)).toBe(false); // after the ASCII scan hands over to the wide one
      expect(check(`${'x'.repeat(17)}${control}`)).toBe(false); // in the second vector
      expect(check(`${'x'.repeat(100_000)}${control}`)).toBe(false); // in a later window
      expect(check(control)).toBe(false);
    }
  });

  it('agrees with the definition on any string', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const expected = !LINE_TEXT.test(text)
          ? LineTextKind.None
          : ASCII.test(text)
            ? LineTextKind.Ascii
            : LineTextKind.Wide;
        expect(kind(text)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('asciiLineTextEnd (SIMD)', () => {
  /** Printable ASCII, TAB, LF or CR: what the scan passes (no other unit, not even beyond ASCII). */
  const passes = (unit: number): boolean =>
    unit === 0x09 || unit === 0x0a || unit === 0x0d || (unit >= 0x20 && unit <= 0x7e);

  it('is available on this machine', () => {
    expect(asciiLineTextEnd).toBeDefined();
  });

  it('reports the position in the whole string when the stop lies in a later 64 Ki window', () => {
    const scan = asciiLineTextEnd!;
    expect(scan(`${'x'.repeat(70_000)}\x07tail`)).toBe(70_000);
    expect(scan(`${'y'.repeat(131_072)}\x1b`)).toBe(131_072);
    expect(scan('z'.repeat(131_073))).toBe(131_073);
    // Wide text before the stop fills the copy's memory faster than it fills a window.
    expect(scan(`${'x'.repeat(65_535)}${'日'.repeat(70_000)}`)).toBe(65_535);
    expect(scan(`${'x'.repeat(65_536)}${'日'.repeat(70_000)}`)).toBe(65_536);
  });

  /** The model: LF indices and the CR count before `end`. */
  const lineFeedsBefore = (text: string, end: number): { positions: number[]; crs: number } => {
    const positions: number[] = [];
    let crs = 0;
    for (let i = 0; i < end; i++) {
      if (text[i] === '\n') positions.push(i);
      if (text[i] === '\r') crs += 1;
    }
    return { positions, crs };
  };
  const recorded = (lineFeeds: LineFeeds) => ({
    positions: Array.from(lineFeeds.positions.subarray(0, lineFeeds.count)),
    crs: lineFeeds.crCount,
  });

  it('records every line feed and counts the CRs before where it stops, across windows', () => {
    const scan = asciiLineTextEnd!;
    const lineFeeds = new LineFeeds();
    const lines = fc
      .array(fc.tuple(fc.nat(200), fc.constantFrom('\n', '\r\n', '\r', '')), { maxLength: 40 })
      .map((parts) => parts.map(([length, end]) => 'x'.repeat(length) + end).join(''));
    fc.assert(
      fc.property(fc.oneof(anyText, lines), (text) => {
        const end = scan(text, lineFeeds);
        expect(recorded(lineFeeds)).toEqual(lineFeedsBefore(text, end));
      }),
      { numRuns: 2000 },
    );
    // Windows of 64 Ki characters: indices continue across them, and a stop in a later one counts.
    const long = `${'a\r\n'.repeat(30_000)}${'b\n'.repeat(20_000)}\x07${'c\n'.repeat(10)}`;
    const end = scan(long, lineFeeds);
    expect(end).toBe(130_000);
    expect(recorded(lineFeeds)).toEqual(lineFeedsBefore(long, end));
    expect(lineFeeds.count).toBe(50_000);
  });

  it('scans text that looks wide from a smaller first window: a stop and line feeds beyond it still count', () => {
    const scan = asciiLineTextEnd!;
    const lineFeeds = new LineFeeds();
    // Beyond ASCII at a quarter, half and three quarters (so the first window is the small one), ASCII
    // lines before the first of them, which lies past that window.
    const units: string[] = Array.from({ length: 8_000 }, (_, i) => (i % 10 === 9 ? '\n' : 'x'));
    for (const at of [2_000, 4_000, 6_000]) units[at] = 'é';
    const text = units.join('');
    expect(scan(text, lineFeeds)).toBe(2_000);
    expect(recorded(lineFeeds)).toEqual(lineFeedsBefore(text, 2_000));
    expect(lineTextKind(text)).toBe(LineTextKind.Wide);
    units[3_000] = '\x07';
    expect(lineTextKind(units.join(''))).toBe(LineTextKind.None);
  });

  it('leaves the line feeds known exactly when lineTextKind finds ASCII line text', () => {
    const lineFeeds = new LineFeeds();
    fc.assert(
      fc.property(anyText, (text) => {
        const kind = lineTextKind(text, lineFeeds);
        if (kind === LineTextKind.Ascii)
          expect(recorded(lineFeeds)).toEqual(lineFeedsBefore(text, text.length));
        else expect(lineFeeds.known).toBeUndefined();
      }),
      { numRuns: 2000 },
    );
  });

  it("reads the text's UTF-8 when given it, with the same stop and line feeds as from the text", () => {
    const scan = asciiLineTextEnd!;
    const fromText = new LineFeeds();
    const fromBytes = new LineFeeds();
    // Only text without a lone surrogate has a UTF-8 form; the pty's decoder never makes one.
    const wellFormed = anyText.filter((text) => !/\p{Cs}/u.test(text));
    fc.assert(
      fc.property(wellFormed, (text) => {
        const end = scan(text, fromText);
        expect(scan(text, fromBytes, Buffer.from(text, 'utf8'))).toBe(end);
        expect(recorded(fromBytes)).toEqual(recorded(fromText));
        expect(lineTextKind(text, fromBytes, Buffer.from(text, 'utf8'))).toBe(lineTextKind(text));
      }),
      { numRuns: 2000 },
    );
    // Across windows: a stop in a later one, and wide text after a whole ASCII window.
    const acrossWindows = [
      `${'a\r\n'.repeat(30_000)}\x07`,
      `${'x'.repeat(65_536)}${'日\n'.repeat(9)}`,
      `${'x'.repeat(65_535)}\x07`, // the last byte of the first window
      `${'y'.repeat(65_535)}\n${'z'.repeat(10)}\x1b`,
    ];
    for (const text of acrossWindows) {
      const end = scan(text, fromText);
      expect(scan(text, fromBytes, Buffer.from(text, 'utf8'))).toBe(end);
      expect(recorded(fromBytes)).toEqual(recorded(fromText));
    }
  });

  it('stops exactly at the first unit that is not line-text ASCII', () => {
    const scan = asciiLineTextEnd!;
    fc.assert(
      fc.property(anyText, (text) => {
        let expected = 0;
        while (expected < text.length && passes(text.charCodeAt(expected))) expected += 1;
        expect(scan(text)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('wideLineTextEnd (SIMD)', () => {
  /** The model: printable (ASCII or U+00A0 and up, surrogates too), TAB, LF or CR. */
  const passes = (unit: number): boolean =>
    unit === 0x09 || unit === 0x0a || unit === 0x0d || (unit >= 0x20 && unit <= 0x7e) || unit >= 0xa0;
  const modelEnd = (text: string, from: number): number => {
    let end = from;
    while (end < text.length && passes(text.charCodeAt(end))) end += 1;
    return end;
  };

  it('is available on this machine', () => {
    expect(wideLineTextEnd).toBeDefined();
  });

  it('stops exactly at the first unit that is not line text, from any start', () => {
    const scan = wideLineTextEnd!;
    fc.assert(
      fc.property(anyText, fc.nat(80), (text, start) => {
        const from = Math.min(start, text.length);
        expect(scan(text, from)).toBe(modelEnd(text, from));
      }),
      { numRuns: 3000 },
    );
  });

  it('reports the position in the whole string when the stop lies in a later 32 Ki window', () => {
    const scan = wideLineTextEnd!;
    const wide = '日本語'.repeat(15_000); // 45 000 units
    expect(scan(`${wide}\x85tail`, 0)).toBe(45_000);
    expect(scan(`${wide}\x0b`, 7)).toBe(45_000);
    expect(scan(wide, 0)).toBe(45_000);
    expect(scan(`ab${wide}\x07`, 2)).toBe(45_002);
  });
});
