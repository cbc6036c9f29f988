/**
 * The output model (SPEC §4.3): what the model reads is what a person would see. It sits between the
 * sanitizer and the scrollback. (The live stream gets the sanitized stream as it comes, `\r` rewrites
 * included: a person watching sees it scroll by, so it needs no model.)
 *
 * Plain output — text and line ends, which is what a flood is — passes straight through to the
 * scrollback, whose newest lines are then exactly the live region a terminal shows (the cursor at the
 * end of the open line). Only an edit that needs a cursor (a CR that overwrites, BS, a cursor move, an
 * erase, line insert/delete) engages the grid (screen-grid.ts): the newest lines are taken back from
 * the scrollback and replayed into a `rows × cols` grid, which from then on receives the output. Lines
 * that scroll off its top are committed to the scrollback and never change again. When a block of
 * many plain lines arrives while the cursor stands at the start of a blank row with nothing below, the grid commits what is above it and plain output passes through again, so a
 * flood after a progress bar is back on the fast path within one read.
 *
 * Readers see the grid through {@link sync}: the scrollback then holds the grid's lines provisionally
 * after the committed ones. When a redraw changed a line a reader may already have read (cursor-up
 * progress), {@link rewrittenSince} tells the output window to start there.
 *
 * Full-screen programs: while the alternate screen is active, nothing reaches the scrollback (the
 * screen itself is read from the replier's terminal); leaving it resumes where the main screen was.
 */

import { charWidth } from './char-width.js';
import type { LineFeeds } from './line-feeds.js';
import type { LineRing } from './line-ring.js';
import type { SanitizerSink } from './sanitizer.js';
import { ScreenGrid } from './screen-grid.js';

/** Options of {@link OutputModel}. */
export interface OutputModelOptions {
  rows: number;
  cols: number;
  /** The scrollback. */
  ring: LineRing;
  /** Most characters of one line the grid holds while its head scrolled off (the session's `maxReadBytes`). */
  maxLineChars: number;
}

/** Private-mode numbers that switch to the alternate screen (`CSI ? n h`) and back (`CSI ? n l`). */
const ALTERNATE_SCREEN_MODES = new Set(['?1049', '?1047', '?47']);
const LETTER_H = 0x68;
const LETTER_L = 0x6c;

/**
 * Rewrites remembered for {@link OutputModel.rewrittenSince}. A mark older than the oldest one kept is
 * answered conservatively (from the oldest kept rewrite's line or earlier), so the bound only matters
 * for sends that stay open across many redraws.
 */
const REWRITES_KEPT = 64;

/**
 * Line feeds in the rest of a block that make the grid let go (fewer when the screen has fewer rows).
 * A redraw's blocks hold one line each (its lines are cut apart by `\r` and erase sequences); a read of
 * plain output holds dozens. Taking the region back later replays at most `rows` lines, so letting go
 * for a block this long costs at most `rows / PLAIN_BLOCK_LINES` times its text.
 */
const PLAIN_BLOCK_LINES = 16;

/** A first retracted line longer than this many screens is replayed from its last screens only. */
const LONG_LINE_SCREENS = 2;

/** Only printable ASCII: one column per character, so rows can be skipped by counting. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** The output model: passthrough for plain lines, a grid for cursor edits, silence on the alternate screen. */
export class OutputModel implements Omit<SanitizerSink, 'osc'> {
  private rows: number;
  private cols: number;
  private readonly ring: LineRing;
  private readonly maxLineChars: number;
  /** The engaged grid, or undefined while output passes through. */
  private grid: ScreenGrid | undefined;
  /** Sequence number of the grid's first line in the scrollback. */
  private baseSeq = 0;
  /** The grid's lines as a reader may have seen them last (from `baseSeq` on; the last one open). */
  private shown: string[] = [];
  /**
   * Sequence number of the line at the top of the screen when the grid last let go: lines before it
   * had scrolled off (or were erased from view), so a rebuilt region never shows them again.
   */
  private screenTopSeq = 0;
  /** Characters of the line at `screenTopSeq` that were above the screen then (whole rows). */
  private screenTopSkip = 0;
  /** The scrollback holds `shown` provisionally after its committed lines. */
  private ringHoldsShown = false;
  /** The grid changed since the last {@link sync}. */
  private dirty = false;
  private alternate = false;
  /** Counts rewrites; `rewriteSeqs[k]` is the first line rewritten by rewrite `rewriteCount - n + k`. */
  private rewriteCount = 0;
  private rewriteSeqs: number[] = [];

  constructor(options: OutputModelOptions) {
    this.rows = options.rows;
    this.cols = options.cols;
    this.ring = options.ring;
    this.maxLineChars = options.maxLineChars;
  }

  /** Whether the grid is engaged (false: plain output passes straight through to the scrollback). */
  get engaged(): boolean {
    return this.grid !== undefined;
  }

  /** Whether a full-screen program has the alternate screen. */
  get alternateScreen(): boolean {
    return this.alternate;
  }

  /** A counter that {@link rewrittenSince} takes: read it when taking a mark. */
  get rewriteEpoch(): number {
    return this.rewriteCount;
  }

  /**
   * The lowest sequence number of a line that was rewritten after `epoch` (a {@link rewriteEpoch}
   * value), or Infinity when none was.
   */
  rewrittenSince(epoch: number): number {
    const newer = this.rewriteCount - epoch;
    if (newer <= 0) return Number.POSITIVE_INFINITY;
    const seqs = this.rewriteSeqs;
    let lowest = Number.POSITIVE_INFINITY;
    for (let k = Math.max(0, seqs.length - newer); k < seqs.length; k++) lowest = Math.min(lowest, seqs[k]!);
    return lowest;
  }

  text(s: string): void {
    if (this.alternate) return;
    if (this.grid === undefined) {
      this.ring.text(s);
      return;
    }
    this.grid.write(s);
    this.dirty = true;
  }

  newline(): void {
    if (this.alternate) return;
    if (this.grid === undefined) {
      this.ring.newline();
      return;
    }
    this.grid.newline();
    this.dirty = true;
  }

  textBlock(block: string, ascii: boolean, lineFeeds?: LineFeeds): void {
    if (this.alternate) return;
    if (this.grid === undefined) {
      this.ring.textBlock(block, ascii, lineFeeds);
      return;
    }
    // Line by line through the grid. Once the cursor stands on a blank row with nothing below and the
    // rest of the block holds many lines (a flood after a progress bar, see PLAIN_BLOCK_LINES), the
    // grid lets go and the rest passes through. A redraw that ends each frame with a line end
    // (cursor-up progress) keeps the grid: letting go and taking back the region every frame costs more.
    let from = 0;
    for (let lf = block.indexOf('\n'); lf !== -1; lf = block.indexOf('\n', from)) {
      const end = lf > from && block.charCodeAt(lf - 1) === 0x0d ? lf - 1 : lf;
      if (end > from) this.grid.write(block.slice(from, end));
      from = lf + 1;
      this.grid.newline();
      this.dirty = true;
      if (this.grid.atLineStart && holdsLineFeeds(block, from, Math.min(this.rows, PLAIN_BLOCK_LINES))) {
        this.disengage();
        break;
      }
    }
    if (from >= block.length) return;
    const rest = block.slice(from);
    if (this.grid === undefined) {
      const more = rest.indexOf('\n') !== -1;
      if (more) this.textBlock(rest, ascii);
      else this.text(rest);
    } else {
      this.grid.write(rest);
      this.dirty = true;
    }
  }

  /** A CR followed by more on the same line: the cursor returns to the start of the row. */
  rewriteLine(): void {
    if (this.alternate) return;
    this.engage().carriageReturn();
    this.dirty = true;
  }

  backspace(): void {
    if (this.alternate) return;
    this.engage().backspace();
    this.dirty = true;
  }

  csi(params: string, final: number): void {
    if ((final === LETTER_H || final === LETTER_L) && params.charCodeAt(0) === 0x3f) {
      if (ALTERNATE_SCREEN_MODES.has(params)) this.alternate = final === LETTER_H;
      return;
    }
    if (this.alternate) return;
    this.engage().csi(params, final);
    this.dirty = true;
  }

  escape(final: number): void {
    if (this.alternate) return;
    this.engage().escape(final);
    this.dirty = true;
  }

  /**
   * The shell printed its own prompt: whatever full-screen program had the alternate screen is gone
   * (one killed without restoring the screen leaves it on), so output is lines again.
   */
  shellPrompted(): void {
    this.alternate = false;
  }

  /** The terminal was resized: the live region is rebuilt at the new size from what it shows. */
  resize(rows: number, cols: number): void {
    if (rows === this.rows && cols === this.cols) return;
    if (this.grid !== undefined) {
      this.sync();
      this.grid = undefined;
      this.ringHoldsShown = false;
      this.shown = [];
    }
    this.rows = rows;
    this.cols = cols;
  }

  /** Brings the scrollback up to date with the grid, for a reader. Cheap when nothing changed. */
  sync(): void {
    const grid = this.grid;
    if (grid === undefined || !this.dirty) return;
    this.dirty = false;
    const lines = grid.lines();
    const shown = this.shown;
    let same = 0;
    while (same < lines.length && same < shown.length && lines[same] === shown[same]) same += 1;
    // A changed line that was complete when a reader saw it: the reader must be shown it again.
    if (same < shown.length - 1) this.noteRewrite(this.baseSeq + same);
    let from = 0;
    if (this.ringHoldsShown) {
      // The old open line may be complete now, and the new open line may have been complete before.
      from = Math.max(0, Math.min(same, shown.length - 1, lines.length - 1));
      this.ring.retract(this.baseSeq + from);
    }
    for (let k = from; k < lines.length; k++) {
      if (k > from) this.ring.newline();
      this.ring.text(lines[k]!);
    }
    this.shown = lines;
    this.ringHoldsShown = true;
  }

  /** The live region as a terminal shows it: `rows` rows, trailing blanks trimmed (for tests). */
  visibleRows(): string[] {
    if (this.alternate) return [];
    return this.engage().visibleRows();
  }

  /** The grid, engaging it first: the newest lines of the scrollback are replayed into it. */
  private engage(): ScreenGrid {
    if (this.grid !== undefined) return this.grid;
    const ring = this.ring;
    const head = ring.headSeq;
    const candidates = ring.linesFrom(Math.max(ring.oldestSeq, this.screenTopSeq, head - (this.rows - 1)));
    // Enough of the newest lines to fill the screen (a line takes at least one row per `cols` characters).
    let start = candidates.length - 1;
    for (let rowsLeft = this.rows; start >= 0; start--) {
      rowsLeft -= Math.max(1, Math.ceil(columnsAtLeast(candidates[start]!) / this.cols));
      if (rowsLeft <= 0) break;
    }
    start = Math.max(0, start);
    const lines = candidates.slice(start);
    this.baseSeq = head - (candidates.length - 1) + start;
    ring.retract(this.baseSeq);
    this.shown = lines.slice();
    this.ringHoldsShown = false;
    const grid = new ScreenGrid({
      rows: this.rows,
      cols: this.cols,
      commit: (line) => this.commit(line),
      maxLineChars: this.maxLineChars,
    });
    this.grid = grid;
    for (let k = 0; k < lines.length; k++) {
      let line = lines[k]!;
      const screen = this.rows * this.cols;
      if (k === 0 && this.baseSeq === this.screenTopSeq && this.screenTopSkip > 0) {
        // Its head was above the screen already: the rest starts at the top row.
        grid.setHeadOfTopLine(line.slice(0, this.screenTopSkip));
        line = line.slice(this.screenTopSkip);
      } else if (k === 0 && line.length > LONG_LINE_SCREENS * screen && PRINTABLE_ASCII.test(line)) {
        const skip = Math.floor((line.length - screen) / this.cols) * this.cols;
        grid.setHeadOfTopLine(line.slice(0, skip));
        line = line.slice(skip);
      }
      grid.write(line);
      if (k < lines.length - 1) grid.newline();
    }
    this.dirty = true;
    return grid;
  }

  /** Back to passthrough: every line above the cursor is committed; the open line is empty. */
  private disengage(): void {
    const grid = this.grid!;
    if (this.ringHoldsShown) {
      this.ring.retract(this.baseSeq);
      this.ringHoldsShown = false;
    }
    this.screenTopSeq = this.baseSeq;
    this.screenTopSkip = grid.headOfTopLineLength;
    grid.commitAboveCursor();
    this.grid = undefined;
    this.shown = [];
    this.dirty = false;
  }

  /** A line scrolled off the grid: it goes to the scrollback for good. */
  private commit(line: string): void {
    if (this.ringHoldsShown) {
      this.ring.retract(this.baseSeq);
      this.ringHoldsShown = false;
    }
    const before = this.shown.shift();
    if (before !== undefined && this.shown.length > 0 && before !== line) this.noteRewrite(this.baseSeq);
    this.ring.text(line);
    this.ring.newline();
    this.baseSeq += 1;
  }

  private noteRewrite(seq: number): void {
    this.rewriteCount += 1;
    this.rewriteSeqs.push(seq);
    if (this.rewriteSeqs.length > REWRITES_KEPT) this.rewriteSeqs.shift();
  }
}

/**
 * Columns `line` takes at least when printed from column 0: the cells skipped where a wide character
 * wraps or a TAB jumps are not counted. A line may so take more rows than this suggests; the region is
 * then rebuilt from a line too many, which only scrolls off again.
 */
function columnsAtLeast(line: string): number {
  if (PRINTABLE_ASCII.test(line)) return line.length;
  let columns = 0;
  for (const char of line) columns += charWidth(char.codePointAt(0)!);
  return columns;
}

/** Whether `block` holds at least `count` line feeds from index `from` on. */
function holdsLineFeeds(block: string, from: number, count: number): boolean {
  let at = from - 1;
  for (let seen = 0; seen < count; seen++) {
    at = block.indexOf('\n', at + 1);
    if (at === -1) return false;
  }
  return true;
}
