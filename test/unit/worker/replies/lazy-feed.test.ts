/**
 * The terminal model's lazy feed: what it keeps of a long feed, parsed by a real xterm after its head,
 * leaves the screen, the cursor and the pen exactly as the whole feed does, while it stays bounded.
 */
import xtermHeadless from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import { LazyFeed, type LazyFeedScreen } from '../../../../src/worker/replies/lazy-feed.js';

const ROWS = 6;
const COLS = 20;

/** A fresh xterm of the test's size. */
function terminal(): InstanceType<typeof xtermHeadless.Terminal> {
  return new xtermHeadless.Terminal({ rows: ROWS, cols: COLS, allowProposedApi: true, logLevel: 'off' });
}

/** Screen rows (with the pen of each cell's foreground), and the cursor, after parsing `text`. */
async function screenAfter(text: string): Promise<{ rows: string[]; cursor: [number, number] }> {
  const term = terminal();
  await new Promise<void>((resolve) => term.write(text, resolve));
  const buffer = term.buffer.active;
  const rows: string[] = [];
  for (let y = 0; y < ROWS; y++) {
    const line = buffer.getLine(buffer.baseY + y)!;
    let row = '';
    for (let x = 0; x < COLS; x++) {
      const cell = line.getCell(x)!;
      row += `${cell.getChars() || ' '}${cell.getFgColor()}`;
    }
    rows.push(row);
  }
  const cursor: [number, number] = [buffer.cursorX, buffer.cursorY];
  term.dispose();
  return { rows, cursor };
}

/** A feed on a screen of ROWS × COLS whose cursor stands at column 0 (a fresh terminal). */
function feed(maxChars = 4096): LazyFeed {
  const screen: LazyFeedScreen = { rows: ROWS, cols: COLS, cursorX: 0 };
  return new LazyFeed(screen, maxChars);
}

/** Pushes `pieces` and returns whether any push asked for a parse. */
function pushAll(lazy: LazyFeed, pieces: string[]): boolean {
  let parseNow = false;
  for (const piece of pieces) {
    const lineFeeds = piece.split('\n').length - 1;
    if (lazy.push(piece, lineFeeds)) parseNow = true;
  }
  return parseNow;
}

describe('LazyFeed', () => {
  it('keeps a bounded tail of many lines that parses to the same screen, cursor and pen as all of them', async () => {
    const pieces: string[] = [];
    for (let i = 0; i < 2_000; i++) {
      // A colour set early and changed now and then: the kept tail must start with the pen in effect.
      const colour = i === 3 ? '\x1b[31m' : i === 1_200 ? '\x1b[32m' : '';
      pieces.push(`${colour}line ${i}\r\n`);
    }
    pieces.push('open row');
    const lazy = feed();
    expect(pushAll(lazy, pieces)).toBe(false);
    // Compacted as it grew: a few hundred lines beyond the screen, not 2 000.
    expect(lazy.chars).toBeLessThan(300 * 14);
    const kept = lazy.take()!;
    expect(kept.head).toBe('\r\n\x1b[31m\x1b[32m');
    expect(lazy.chars).toBe(0);
    expect(lazy.take()).toBeUndefined();
    expect(await screenAfter(kept.head + kept.text)).toEqual(await screenAfter(pieces.join('')));
  });

  it('drops a pen that a reset ended before the kept tail', async () => {
    const pieces = ['\x1b[31mred\r\n', '\x1b[0m'];
    for (let i = 0; i < 600; i++) pieces.push(`plain ${i}\r\n`);
    const lazy = feed();
    pushAll(lazy, pieces);
    const kept = lazy.take()!;
    expect(kept.head.startsWith('\r\n')).toBe(true);
    expect(kept.head).not.toContain('\x1b[31m');
    expect(await screenAfter(kept.head + kept.text)).toEqual(await screenAfter(pieces.join('')));
  });

  it('keeps only the last rows of a line longer than the screen, aligned as in the whole feed', async () => {
    const digits = '0123456789';
    // 10 001 printable characters after a line of text: not a multiple of the row, so alignment matters.
    const pieces = ['before\r\n'];
    for (let i = 0; i < 1_000; i++) pieces.push(digits);
    pieces.push('x');
    const lazy = feed(4096);
    expect(pushAll(lazy, pieces)).toBe(false);
    // Cut each time it passed its bound: never the whole line.
    expect(lazy.chars).toBeLessThanOrEqual(4096 + digits.length);
    const kept = lazy.take()!;
    expect(kept.head).toBe('\r\n');
    expect(await screenAfter(kept.head + kept.text)).toEqual(await screenAfter(pieces.join('')));
  });

  it('asks for a parse once a long line it cannot cut exceeds its bound', () => {
    // Not printable ASCII (a wide character takes two columns): the row boundaries are unknown.
    const wide = feed(1024);
    expect(pushAll(wide, ['界'.repeat(400)])).toBe(false);
    expect(pushAll(wide, ['界'.repeat(700)])).toBe(true);
    // A bare LF keeps the column: where the kept text would start a row is unknown too.
    const bareLf = feed(1024);
    expect(pushAll(bareLf, ['ab\n', 'c'.repeat(2_000)])).toBe(true);
  });

  it('forgets everything on clear', () => {
    const lazy = feed();
    pushAll(lazy, ['some text\r\n', 'more']);
    lazy.clear();
    expect(lazy.chars).toBe(0);
    expect(lazy.take()).toBeUndefined();
  });
});
