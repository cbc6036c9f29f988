/**
 * The scrollback does not depend on how the stream was cut into reads: fed whole or cut anywhere —
 * inside a character, a combining sequence, a surrogate pair, an escape sequence, the pass-through's
 * row buffer — the real output pipeline gives the same scrollback and screen text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pipelineHarness } from './pipeline-harness.js';
import { STREAM_FRAGMENTS } from './stream-fragments.js';

/** The scrollback and the screen's lines as a reader gets them, after `stream` cut at `cuts`. */
function textAfter(stream: string, cuts: number[], rows: number, cols: number): string {
  const h = pipelineHarness(rows, cols);
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    h.write(stream.slice(at, cut));
    if (cut % 2 === 1) h.text(); // a reader in between changes nothing
    at = cut;
  }
  h.write(stream.slice(at));
  const text = h.text();
  h.dispose();
  return text;
}

const FRAGMENTS = STREAM_FRAGMENTS;

describe('output pipeline: the scrollback of a stream cut anywhere', () => {
  it('the counterexample that turned é into e', () => {
    const stream = 'aaaaaa\r[###   ] 10%\raaaaaa\r[######] 100%中中中\x1b[0méaaaa';
    const whole = textAfter(stream, [], 2, 3);
    expect(whole).toContain('é');
    for (let i = 0; i <= stream.length; i++) {
      expect(textAfter(stream, [i], 2, 3), `cut at ${i}`).toBe(whole);
      for (let j = i; j <= stream.length; j += 3)
        expect(textAfter(stream, [i, j], 2, 3), `cuts ${i}, ${j}`).toBe(whole);
    }
  });

  it('the same with the é decomposed, and the pair of an emoji cut', () => {
    for (const stream of ['ab\r[##] 1%\re\u0301x\r\n', 'x😀y\r\n😀\x1b[1A😀']) {
      const whole = textAfter(stream, [], 2, 3);
      for (let i = 0; i <= stream.length; i++)
        expect(textAfter(stream, [i], 2, 3), `cut at ${i}`).toBe(whole);
    }
  });

  it('any split of the stream gives the same text', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 40 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 2, max: 12 }),
        (parts, cuts, rows, cols) => {
          const stream = parts.join('');
          const whole = textAfter(stream, [], rows, cols);
          expect(
            textAfter(
              stream,
              cuts.map((c) => c % (stream.length + 1)),
              rows,
              cols,
            ),
          ).toBe(whole);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
