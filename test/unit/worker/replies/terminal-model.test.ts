import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineRing } from '../../../../src/worker/output/line-ring.js';
import { TerminalModel } from '../../../../src/worker/replies/terminal-model.js';

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

const FRAGMENTS = [
  'a',
  'bcd',
  ' ',
  '\r',
  '\r\n',
  '\b',
  '[###   ] 10%',
  '中',
  '😀',
  'é',
  'e\u0301',
  '\x1b[0m',
  '\x1b[31m',
  '\x1b[1A',
  '\x1b[K',
  '\x1b[2J',
  '\x1b[H',
  '\x1b[?1049h',
  '\x1b[?1049l',
  '\x1b[3',
  '\x1b',
  'xyzxyzxyz',
  '\x1b[2;3H',
  '\x1b[1;2r',
  '\x1b[r',
  '\x1b[4h',
  '\x1b[4l',
  '\x1b(0',
  '\x1b(B',
  '\x1b]0;t\x07',
  '\x1b[6n',
  '\x1b[1;31m',
  'hello world ',
  '\x1bM',
  '\x1b[2K',
  'a'.repeat(37),
  'b'.repeat(23),
];
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
