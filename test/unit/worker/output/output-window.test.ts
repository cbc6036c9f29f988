// The output window's reads since a mark (SPEC §4.2): what a result holds, and how many lines since
// the mark it holds nothing of when it had to cut (`omittedLines`, which a daemon's reattach reports
// as `missedLines`, SPEC §12).
import { describe, expect, it } from 'vitest';
import { LineRing } from '../../../../src/worker/output/line-ring.js';
import { OutputWindow } from '../../../../src/worker/output/output-window.js';

function printLines(ring: LineRing, from: number, to: number): void {
  for (let i = from; i <= to; i++) {
    ring.text(`line-${i}`);
    ring.newline();
  }
}

describe('OutputWindow.since', () => {
  it('omits nothing when everything since the mark fits', () => {
    const ring = new LineRing({ maxLines: 1000, maxBytes: 1 << 20 });
    const window = new OutputWindow(ring);
    printLines(ring, 1, 5);
    const mark = window.mark();
    printLines(ring, 6, 10);
    ring.text('$ ');
    const since = window.since(mark, 10_000);
    expect(since.text).toBe(`${Array.from({ length: 5 }, (_, i) => `line-${i + 6}`).join('\n')}\n$ `);
    expect(since).toMatchObject({ truncated: false, omittedLines: 0 });
  });

  it('counts the lines the byte bound dropped', () => {
    const ring = new LineRing({ maxLines: 1000, maxBytes: 1 << 20 });
    const window = new OutputWindow(ring);
    const mark = window.mark();
    printLines(ring, 100, 199); // 100 lines of 9 bytes: "line-NNN\n"
    // 45 bytes keep the last 5 lines whole (and the empty open line).
    const whole = window.since(mark, 45);
    expect(whole.text.split('\n').slice(0, -1)).toEqual([
      'line-195',
      'line-196',
      'line-197',
      'line-198',
      'line-199',
    ]);
    expect(whole).toMatchObject({ truncated: true, omittedLines: 95 });
    // The ring hands over whole lines: 48 bytes hold no part of line-194 either.
    expect(window.since(mark, 48)).toMatchObject({ text: whole.text, omittedLines: 95 });
  });

  it('counts lines the scrollback evicted since the mark', () => {
    const ring = new LineRing({ maxLines: 10, maxBytes: 1 << 20 });
    const window = new OutputWindow(ring);
    const mark = window.mark();
    printLines(ring, 1, 30);
    const since = window.since(mark, 1 << 20);
    // The ring holds its last 10 lines (the open one among them): 21 of the 31 are gone.
    expect(since.truncated).toBe(true);
    expect(since.omittedLines).toBe(31 - since.text.split('\n').length);
    expect(since.text.split('\n').at(-2)).toBe('line-30');
  });
});
