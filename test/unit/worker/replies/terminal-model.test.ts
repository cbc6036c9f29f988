import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineRing } from '../../../../src/worker/output/line-ring.js';
import { TerminalModel } from '../../../../src/worker/replies/terminal-model.js';
import { STREAM_FRAGMENTS } from '../stream-fragments.js';

function model(rows: number, cols: number) {
  const ring = new LineRing({ maxLines: 100_000, maxBytes: 1 << 24 });
  const m = new TerminalModel({
    rows,
    cols,
    ring,
    maxDeferredChars: 40,
    reply: () => undefined,
    marker: () => false,
  });
  return {
    m,
    text(): string {
      m.sync();
      return ring.toString();
    },
  };
}

function feed(stream: string, cuts: number[], rows: number, cols: number): string {
  const { m, text } = model(rows, cols);
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    m.write(stream.slice(at, cut));
    if (cut % 2 === 1) text(); // a reader in between changes nothing
    at = cut;
  }
  m.write(stream.slice(at));
  const t = text();
  m.dispose();
  return t;
}

describe('terminal model split', () => {
  it('counterexample', () => {
    const s = 'aaaaaa\r[###   ] 10%\raaaaaa\r[######] 100%中中中\x1b[0méaaaa';
    const whole = feed(s, [], 2, 3);
    for (let i = 0; i <= s.length; i++)
      for (let j = i; j <= s.length; j++) expect(feed(s, [i, j], 2, 3), `${i},${j}`).toBe(whole);
  });
});

const FRAGMENTS = STREAM_FRAGMENTS;
describe('terminal model split property', () => {
  it('any split gives the same text', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 40 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 2, max: 12 }),
        (parts, cuts, rows, cols) => {
          const s = parts.join('');
          const whole = feed(s, [], rows, cols);
          expect(
            feed(
              s,
              cuts.map((c) => c % (s.length + 1)),
              rows,
              cols,
            ),
          ).toBe(whole);
        },
      ),
      { numRuns: Number(process.env.RUNS ?? 3000) },
    );
  });
});
