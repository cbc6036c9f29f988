// capTail: the byte cap of tool results keeps the tail, starts at a whole line when it can, and never
// splits a UTF-8 character. Pure function: property-checked with fast-check.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capTail, countLines } from '../../../../src/main/tools/result-cap.js';

describe('capTail', () => {
  it('returns short text unchanged', () => {
    expect(capTail('a\nb\n', 1024)).toEqual({ text: 'a\nb\n', truncated: false, droppedLines: 0 });
  });

  it('keeps the newest whole lines and counts the dropped ones', () => {
    const text = Array.from(
      { length: 100 },
      (_, index) => `${String(index).padStart(3, '0')}${'.'.repeat(60)}`,
    ).join('\n');
    const capped = capTail(text, 300);
    expect(capped.truncated).toBe(true);
    expect(capped.text.startsWith(`${String(capped.droppedLines).padStart(3, '0')}.`)).toBe(true);
    expect(text.endsWith(capped.text)).toBe(true);
    expect(Buffer.byteLength(capped.text)).toBeLessThanOrEqual(300);
  });

  it('does not drop a whole extra line when the cut already falls on a line start', () => {
    const line = `${'x'.repeat(255)}\n`;
    expect(capTail(line.repeat(3), 512)).toEqual({ text: line.repeat(2), truncated: true, droppedLines: 1 });
  });

  it('keeps the tail of one huge line without splitting characters', () => {
    const capped = capTail('€'.repeat(1000), 301);
    expect(capped.text).toBe('€'.repeat(100));
    expect(capped.droppedLines).toBe(0);
  });

  it('property: the result is a suffix within budget, valid UTF-8, and truncated iff over budget', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 400 }),
        fc.integer({ min: 256, max: 600 }),
        (text, max) => {
          const capped = capTail(text, max);
          expect(text.endsWith(capped.text)).toBe(true);
          expect(Buffer.byteLength(capped.text)).toBeLessThanOrEqual(max);
          expect(capped.truncated).toBe(Buffer.byteLength(text) > max);
          const dropped = text.slice(0, text.length - capped.text.length);
          expect(capped.droppedLines).toBe(dropped.split('\n').length - 1);
        },
      ),
    );
  });
});

describe('countLines', () => {
  it('counts a trailing newline as the end of the last line', () => {
    expect([countLines(''), countLines('a'), countLines('a\n'), countLines('a\nb')]).toEqual([0, 1, 1, 2]);
  });
});
