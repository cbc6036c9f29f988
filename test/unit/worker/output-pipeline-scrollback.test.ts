/**
 * The scrollback does not depend on how the stream was cut into reads: fed whole or cut anywhere —
 * inside a character, a combining sequence, a surrogate pair, an escape sequence, the pass-through's
 * row buffer — the real output pipeline gives the same scrollback and screen text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pipelineHarness } from './pipeline-harness.js';
import { STREAM_FRAGMENTS } from './stream-fragments.js';

/**
 * The scrollback and the screen's lines as a reader gets them, after `stream` cut at `cuts`. `withUtf8`:
 * each read also brings its UTF-8, as the session passes the pty's bytes along (only a read without a
 * lone surrogate has one); `following`: a send listens, and what it heard is appended.
 */
function textAfter(
  stream: string,
  cuts: number[],
  rows: number,
  cols: number,
  { withUtf8 = false, following = false } = {},
): string {
  const h = pipelineHarness(rows, cols, following);
  const write = (read: string) =>
    h.write(read, withUtf8 && !/\p{Cs}/u.test(read) ? Buffer.from(read, 'utf8') : undefined);
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    write(stream.slice(at, cut));
    if (cut % 2 === 1) h.text(); // a reader in between changes nothing
    at = cut;
  }
  write(stream.slice(at));
  const text = h.text() + (following ? `\n--- heard ---\n${h.heard.text}` : '');
  h.dispose();
  return text;
}

const FRAGMENTS = STREAM_FRAGMENTS;

/** A stream of fragments, where to cut it into reads, and the terminal's size. */
const cutStream = fc
  .record({
    parts: fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 40 }),
    rawCuts: fc.array(fc.nat(), { maxLength: 8 }),
    rows: fc.integer({ min: 1, max: 5 }),
    cols: fc.integer({ min: 2, max: 12 }),
  })
  .map(({ parts, rawCuts, rows, cols }) => {
    const stream = parts.join('');
    return { stream, cuts: rawCuts.map((c) => c % (stream.length + 1)), rows, cols };
  });

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
      fc.property(cutStream, ({ stream, cuts, rows, cols }) => {
        expect(textAfter(stream, cuts, rows, cols)).toBe(textAfter(stream, [], rows, cols));
      }),
      { numRuns: 2000 },
    );
  });

  it("the pty's bytes of a read whose end is held back (a CR, an SGR's start) serve only the rest", () => {
    for (const stream of ['中文\r\n中文\r\nnext-中\r\n', '中文\r\n中\x1b[1mB\x1b[0m\r\n']) {
      for (let cut = 1; cut < stream.length; cut++)
        expect(textAfter(stream, [cut], 3, 20, { withUtf8: true }), `cut at ${cut}`).toBe(
          textAfter(stream, [], 3, 20),
        );
    }
  });

  it("the pty's bytes passed along with the reads change nothing", () => {
    fc.assert(
      fc.property(cutStream, fc.boolean(), ({ stream, cuts, rows, cols }, following) => {
        expect(textAfter(stream, cuts, rows, cols, { withUtf8: true, following })).toBe(
          textAfter(stream, cuts, rows, cols, { following }),
        );
      }),
      { numRuns: 2000 },
    );
  });
});
