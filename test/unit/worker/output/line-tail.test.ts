import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineTail } from '../../../../src/worker/output/line-tail.js';

describe('line tail (the held head of a line without an end)', () => {
  it('reads as the newest maxChars characters of everything appended since the last clear', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.oneof(fc.string({ maxLength: 60 }), fc.constant(null)), { maxLength: 40 }),
        (maxChars, ops) => {
          const tail = new LineTail(maxChars);
          let whole = '';
          for (const op of ops) {
            if (op === null) {
              tail.clear();
              whole = '';
            } else {
              tail.append(op);
              whole += op;
            }
            const expected = whole.slice(Math.max(0, whole.length - maxChars));
            expect(tail.toString()).toBe(expected);
            expect(tail.length).toBe(expected.length);
            expect(tail.isEmpty).toBe(whole === '');
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('100 MB appended a row at a time is bounded and linear', () => {
    const tail = new LineTail(256 * 1024);
    const row = 'a'.repeat(80);
    const started = performance.now();
    for (let k = 0; k < 1_250_000; k++) tail.append(row);
    // The old head re-sliced the whole held tail for every row: minutes for this.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(tail.toString()).toBe('a'.repeat(256 * 1024));
  });
});
