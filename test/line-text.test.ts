import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLineText } from '../src/worker/line-text.js';

/** The definition, as one plain regex: printable characters, TAB, LF and CR. */
const LINE_TEXT = /^[\t\n\r\x20-\x7e\xa0-\uffff]*$/;

describe('isLineText', () => {
  it('accepts printable text with TAB, LF and CR line ends, in ASCII and beyond', () => {
    expect(isLineText('')).toBe(true);
    expect(isLineText('2026-11-30 INFO ok\r\n\tat x\n')).toBe(true);
    expect(isLineText('naïve — 日本語 😀\r\n')).toBe(true);
    expect(isLineText('progress 10%\rprogress 20%')).toBe(true);
  });

  it('rejects escape sequences, C0 and C1 controls, DEL, VT and FF anywhere', () => {
    for (const control of ['\x1b', '\x07', '\x08', '\x00', '\x7f', '\x85', '\x9b', '\x0b', '\x0c']) {
      expect(isLineText(`abc${control}def`)).toBe(false);
      expect(isLineText(`é${control}`)).toBe(false); // after the ASCII scan hands over to the wide one
      expect(isLineText(control)).toBe(false);
    }
  });

  it('agrees with the definition on any string', () => {
    const unit = fc.oneof(
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
      fc.string({ unit: 'binary', maxLength: 3 }),
    );
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 40 }), (units) => {
        const text = units.join('');
        expect(isLineText(text)).toBe(LINE_TEXT.test(text));
      }),
      { numRuns: 2000 },
    );
  });
});
