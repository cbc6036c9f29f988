/**
 * Cursor-up frame collapse, part of the replier's fast path (SPEC §4.3, §9 flood target; see
 * plain-text-skip.ts and carriage-return-collapse.ts). Multi-line progress (docker pull) moves the
 * cursor up over its block and redraws every line, thousands of times: such output is not plain, so
 * xterm parsed every frame. Consecutive complete frames are replaced by the last one.
 *
 * A *frame* is `ESC [ n A` (CUU; digits only, `ESC [ A` and `ESC [ 0 A` mean 1) with 1 ≤ n < rows,
 * followed by exactly n lines, each `\r ESC[2K T \r\n`, where `\r ESC[2K` may also be `ESC[2K \r`,
 * the line may end with `\n` alone, and T is printable ASCII (U+0020–U+007E) shorter than `cols`.
 *
 * Preconditions, checked against the idle terminal before a write (the replier's `frameCols`): parser
 * in GROUND, scroll region = the whole screen, insert mode off, the default character set. Frames are
 * collapsed only in input the terminal reaches with these intact: frames, and plain runs between them
 * (plain-text-skip.ts: a plain run changes no mode, no region, no charset, and leaves the parser in
 * GROUND at its end), from the start of the write on. The first other character ends the search.
 *
 * Why F_a F_b (two frames with the same n, in a row) leave exactly the state F_b alone leaves from any
 * state S meeting the preconditions — xterm 6.0's `cursorUp`, `_moveCursor`, `_restrictCursor`,
 * `eraseInLine`, `print`, `carriageReturn`, `lineFeed`, read for this:
 * - CUU from row y0 (0 ≤ y0 < rows; scrollTop = 0, so `diffToTop` = y0) clamps x to ≤ cols - 1 (no
 *   pending wrap) and moves to u = max(y0 - n, 0). Origin mode would add scrollTop (0) and clamp to the
 *   scroll region (the whole screen): it changes nothing, so it need not be checked.
 * - Each line, at row u + i: CR sets x = 0 and resets the parser's join state; EL 2 replaces every cell
 *   of the row by a blank with the current erase attributes and clears the row's wrap flag (it reads
 *   neither x nor the row); T prints from x = 0 fewer than `cols` one-cell characters (default charset),
 *   overwriting cells (insert mode off), never wrapping and leaving no pending wrap; the cell after T is
 *   a blank, so the wide-character repair does nothing. The line feed (from a row < rows - 1, see next)
 *   moves down one row and clears that row's wrap flag; x stays below cols.
 * - u + n ≤ rows - 1 (if y0 ≥ n, u + n = y0; else u + n = n < rows), so no line feed is on the bottom
 *   row: nothing scrolls, the line ring is untouched, and rows outside u…u + n stay as they were.
 * - After F_a the cursor is on row u + n, so F_b's CUU returns to u — the row F_b reaches from S too.
 *   From there both runs execute F_b's same input; every cell, wrap flag, x, y and the join state F_a
 *   wrote (rows u…u+n-1, the wrap flag of row u + n) is written again by F_b with values that do not
 *   depend on what was there. No attribute, mode, tab stop, saved cursor or charset changes in a frame.
 * So a run F_1 … F_k with the same n is replaced by F_k, and the preconditions hold after it. The
 * differential property test in test/unit/worker/replies/terminal-replier.test.ts checks this against an xterm fed every
 * byte.
 */
import { PlainRunScanner } from './plain-text-skip.js';

const ESC = 0x1b;
const LEFT_BRACKET = 0x5b;
const DIGIT_ZERO = 0x30;
const DIGIT_NINE = 0x39;
const LETTER_A = 0x41;
const CR = 0x0d;
const LF = 0x0a;

/** The erase that opens each frame line: EL 2, the whole row. */
const ERASE_LINE = '\x1b[2K';

/** The two ways a frame line opens: a CR and an erase of the row, in either order. */
const LINE_OPENINGS = [`\r${ERASE_LINE}`, `${ERASE_LINE}\r`];

/** Characters in a line's opening. */
const LINE_OPENING_CHARS = ERASE_LINE.length + 1;

/** Whether `text[at, to)`, shorter than a line's opening, is the start of one. */
function opensLine(text: string, at: number, to: number): boolean {
  const cut = text.slice(at, to);
  return LINE_OPENINGS.some((opening) => opening.startsWith(cut));
}

/** Longest CUU parameter admitted: rows are far fewer than 10 000. */
const MAX_COUNT_DIGITS = 4;

/** A frame line's text: printable ASCII. */
const LINE_TEXT = /[\x20-\x7e]*/y;

/** {@link FrameCollapser.frameEnd}'s answer for a frame start cut off at the end of the input. */
const CUT_OFF = -2;

/** Replaces runs of consecutive cursor-up frames in a write's input by their last frame. */
export class FrameCollapser {
  /** Frames dropped so far (for the replier's stats). */
  collapsedFrames = 0;
  private readonly scanner = new PlainRunScanner();
  /**
   * Where the output of the last {@link collapse} ends: its `to`, or the start of a frame that the text
   * cuts off there (when anything precedes it), which is better written with the output that completes it.
   * `text[end, to)` is then the start of a frame and nothing else — a cursor-up, line openings (CR, EL 2),
   * printable ASCII and line feeds, the last of them possibly cut off — so it holds nothing xterm answers.
   */
  end = 0;
  /** The CUU count of the frame the last {@link frameEnd} matched. */
  private count = 0;

  /**
   * `text[from, to)` with its frame runs collapsed, for a terminal `rows` × `cols` that meets the
   * preconditions (see the file comment) when it reaches `from`.
   */
  collapse(text: string, from: number, to: number, rows: number, cols: number): string {
    const pieces: string[] = [];
    let emitted = from; // text[emitted, …) is not output yet
    let at = from;
    this.end = to;
    while (at < to) {
      let end = this.frameEnd(text, at, to, rows, cols);
      if (end === CUT_OFF && at > from) this.end = at;
      if (end < 0) {
        const runEnd = this.scanner.scan(text, at);
        if (runEnd === at) break; // neither a frame nor plain: the terminal's state after it is unknown
        at = runEnd;
        continue;
      }
      const count = this.count;
      let last = at;
      for (let next = this.frameEnd(text, end, to, rows, cols); next >= 0 && this.count === count; ) {
        last = end;
        end = next;
        this.collapsedFrames += 1;
        next = this.frameEnd(text, end, to, rows, cols);
      }
      if (last > at) {
        pieces.push(text.slice(emitted, at));
        emitted = last;
      }
      at = end;
    }
    if (emitted === from) return text.slice(from, this.end);
    pieces.push(text.slice(emitted, this.end));
    return pieces.join('');
  }

  /**
   * End of the frame that starts at `at` and ends by `to`, -1 if none does, {@link CUT_OFF} if `to` cuts
   * off what may still become one; sets {@link count}.
   */
  private frameEnd(text: string, at: number, to: number, rows: number, cols: number): number {
    if (text.charCodeAt(at) !== ESC) return -1;
    if (at + 1 >= to) return CUT_OFF;
    if (text.charCodeAt(at + 1) !== LEFT_BRACKET) return -1;
    let p = at + 2;
    let count = 0;
    for (let code = text.charCodeAt(p); code >= DIGIT_ZERO && code <= DIGIT_NINE; code = text.charCodeAt(p)) {
      if (p - at - 2 >= MAX_COUNT_DIGITS) return -1;
      count = count * 10 + code - DIGIT_ZERO;
      p += 1;
    }
    if (p >= to) return CUT_OFF;
    if (text.charCodeAt(p) !== LETTER_A) return -1;
    p += 1;
    if (count === 0) count = 1;
    if (count >= rows) return -1;
    for (let line = 0; line < count; line++) {
      // Past `to`, the text may hold anything (or nothing): a frame cut off there is not matched. What
      // the text holds up to `to` must still begin a line, or it is no frame (a query where the next
      // line would start, `ESC[6n`, is shorter than a line's opening: it must not pass for a cut-off one).
      if (p + LINE_OPENING_CHARS > to) return opensLine(text, p, to) ? CUT_OFF : -1;
      if (text.charCodeAt(p) === CR && text.startsWith(ERASE_LINE, p + 1)) p += 1 + ERASE_LINE.length;
      else if (text.startsWith(ERASE_LINE, p) && text.charCodeAt(p + ERASE_LINE.length) === CR)
        p += ERASE_LINE.length + 1;
      else return -1;
      LINE_TEXT.lastIndex = p;
      LINE_TEXT.test(text);
      const textEnd = Math.min(LINE_TEXT.lastIndex, to);
      if (textEnd - p >= cols) return -1;
      p = textEnd;
      if (p < to && text.charCodeAt(p) === CR) p += 1;
      if (p >= to) return CUT_OFF;
      if (text.charCodeAt(p) !== LF) return -1;
      p += 1;
    }
    this.count = count;
    return p;
  }
}
