/**
 * The pass-through's open row: CR, BS and CRLF edits of printable ASCII give what a real xterm shows
 * (finished lines and the open row with its cursor), and an edit it cannot compute exactly changes nothing.
 */
import xtermHeadless from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import { OpenRow } from '../../../../src/worker/replies/open-row.js';

const COLS = 12;

/** What xterm shows after `text` from a fresh screen: each row's text (trailing blanks cut) and the cursor column. */
async function xtermAfter(text: string): Promise<{ rows: string[]; col: number }> {
  const term = new xtermHeadless.Terminal({ rows: 10, cols: COLS, allowProposedApi: true, logLevel: 'off' });
  await new Promise<void>((resolve) => term.write(text, resolve));
  const buffer = term.buffer.active;
  const rows: string[] = [];
  for (let y = 0; y <= buffer.baseY + buffer.cursorY; y++)
    rows.push(buffer.getLine(y)!.translateToString(true));
  const col = buffer.cursorX;
  term.dispose();
  return { rows, col };
}

/** A deterministic stream of edits: letters, CR, BS and CRLF, short enough never to reach the last column. */
function edits(seed: number): string[] {
  let state = seed;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
  const pieces: string[] = [];
  let col = 0;
  for (let p = 0; p < 4; p++) {
    let piece = '';
    for (let i = 0; i < 14; i++) {
      const pick = next();
      if (pick < 0.15) {
        piece += '\r';
        col = 0;
      } else if (pick < 0.3) {
        piece += '\b';
        col = Math.max(0, col - 1);
      } else if (pick < 0.38) {
        piece += '\r\n';
        col = 0;
      } else if (col < COLS - 2) {
        piece += String.fromCharCode(97 + Math.floor(next() * 26));
        col++;
      }
    }
    pieces.push(piece);
  }
  return pieces;
}

describe('OpenRow', () => {
  it('gives the lines and the open row xterm shows for CR, BS and CRLF edits', async () => {
    for (let seed = 1; seed <= 60; seed++) {
      const pieces = edits(seed);
      const row = new OpenRow(COLS);
      const finished: string[] = [];
      for (const piece of pieces) finished.push(...row.edit(piece)!);
      const shown = await xtermAfter(pieces.join(''));
      expect([...finished, row.text().trimEnd()], `seed ${seed}: ${JSON.stringify(pieces)}`).toEqual(
        shown.rows,
      );
      expect(row.col, `seed ${seed}`).toBe(shown.col);
    }
  });

  it('refuses an edit that would reach the last column or holds a bare LF, and keeps the row as it was', () => {
    const row = new OpenRow(COLS);
    row.append('progress', false, true);
    expect(row.edit('\rabcdefghijkl')).toBeUndefined(); // the 12th character reaches the last column
    expect(row.edit('\rdone\nnext')).toBeUndefined(); // a bare LF keeps the column
    expect(row.text()).toBe('progress');
    expect(row.col).toBe(8);
    expect(row.atEnd).toBe(true);
  });

  it('knows only printable ASCII rows shorter than the screen', () => {
    const row = new OpenRow(COLS);
    row.append('héllo', false, false);
    expect(row.edit('\rx')).toBeUndefined();
    row.append('fresh', true, true); // a line feed before it: a new, known row
    expect(row.edit('\rF')).toEqual([]);
    expect(row.text()).toBe('Fresh');
    expect(row.col).toBe(1);
    expect(row.atEnd).toBe(false);
    row.append('x'.repeat(COLS), true, true); // as wide as the screen: it wraps
    expect(row.edit('\ry')).toBeUndefined();
    row.reset('from xterm', true);
    expect(row.edit('\b\b\b!')).toEqual([]);
    expect(row.text()).toBe('from xt!rm');
    row.reset('wrapped', false);
    expect(row.edit('\r')).toBeUndefined();
    row.reset('before resize', true);
    row.resize(40);
    expect(row.edit('\rx')).toBeUndefined(); // unknown until taken from xterm again
    row.reset('after', true);
    expect(row.edit('!')).toEqual([]);
    expect(row.text()).toBe('after!');
  });
});
