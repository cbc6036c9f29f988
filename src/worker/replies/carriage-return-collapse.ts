/**
 * Carriage-return collapse, part of the replier's fast path (SPEC §4.3, §9 flood target; see
 * plain-text-skip.ts). A progress bar redraws its line with `\r` a hundred times before each line feed,
 * so its lines are thousands of characters long and the suffix that plain-text-skip.ts keeps (about
 * `2 × rows` lines) is too long to hold. Held plain output is therefore collapsed as it is appended: a
 * line's redraws are replaced by an input that leaves the terminal in the same state.
 *
 * A *window* starts at a CR and holds segments, `\r S1 \r S2 … \r Sk`, each made only of printable
 * ASCII (U+0020–U+007E). It ends before the first other character (LF, VT, FF, TAB, BS, BEL, ESC, a
 * character beyond ASCII) or where the held run ends. Text before a window (it may start at an unknown
 * column, or with a wrap pending) is never touched. Preconditions, checked against the idle terminal
 * before anything is held (the terminal then parses nothing until the held run): insert mode off (it
 * would shift cells right instead of overwriting them) and the default character set (so each of
 * these characters is printed as itself: one cell wide, never joining the previous one, in every
 * xterm Unicode version). SO and SI are not plain output, so the character set cannot change inside.
 *
 * Why `\r S1 \r … \r S(k-1) \r` may be replaced by `\r O \r`, O being the overlay of the segments
 * (column i holds the character of the last segment at least i + 1 long), when each Si is at most
 * `cols` wide — xterm 6.0's `print`, `carriageReturn` and parser, read for this:
 * - CR sets x to 0 whatever came before (a pending wrap is x = cols), and, as every C0 control does,
 *   resets the parser's join state (what REP and combining characters look back at).
 * - From x = 0, printing at most `cols` one-cell characters never wraps (the wrap test is x + 1 > cols,
 *   and x ≤ cols - 1 before each of them), so y, every wrap flag and every other row stay as they are,
 *   with autowrap on or off. Each character overwrites one cell (content, width, and the current
 *   attributes, which nothing in a window changes). A print that starts at x = 0 has no cell to its left
 *   to repair; at its end, if the cell at x is the right half of a wide character, it becomes a blank
 *   with the current attributes (idempotent). A segment split across parser writes prints in parts: a
 *   later part finds on its left a one-cell character the segment just wrote (nothing to repair), and an
 *   earlier part repairs a cell the rest of the segment then overwrites.
 * - So after the segments, column i < W (W the widest segment) holds the overlay's character; the cell
 *   at W is repaired if it was a right half (the widest segment's print ended there; a shorter segment's
 *   repair at w < W lands on a cell the widest one overwrites later, or already wrote as one cell
 *   earlier, so it does nothing); no other cell changed; x is 0 and the join state reset after the last
 *   CR. `\r O \r` does exactly this. Nothing of the replaced text is read later.
 * - The segment after the last CR, Sk (the text ends there or goes on with another character), is kept
 *   as it is, so x, a pending wrap (x = cols) and the join state after it are the original ones.
 * - When Sk's first `w` characters are printable ASCII and `|O| < w` or `w ≥ cols`, Sk overwrites every
 *   cell O wrote and the cell O repaired (|O| < cols) before anything else happens: O is dropped,
 *   `\r Sk`.
 * A window is never longer than its original, and a rewritten one holds at most `cols + 2` characters
 * before its last segment. The differential property test in test/unit/worker/replies/terminal-replier.test.ts checks this
 * against an xterm fed every byte.
 */

const CR = 0x0d;
const LF = 0x0a;

/** The characters a collapsible segment may hold: printable ASCII. */
const SEGMENT_CHARS = /[\x20-\x7e]*/y;

/**
 * Collapses the windows of a plain run appended text by text. A window still open at the end of the
 * appended text is held back (its overlay and the start of its last segment) until more text, or the
 * caller, ends it. Reuses its fields, so appending allocates only the pieces it outputs.
 */
export class CarriageReturnCollapser {
  /** Segments replaced by an overlay so far (for the replier's stats). */
  collapsedSegments = 0;
  /** A window is open at the end of what was appended. */
  private open = false;
  /** The open window is held back here, not in the output: it was rewritten or crosses an append. */
  private withheld = false;
  /** Width of the overlay of the open window's completed segments (those followed by a CR). */
  private overlayLength = 0;
  /** The overlay as a string, when known: a segment as wide as the overlay or wider is the overlay. */
  private overlayText: string | undefined = '';
  /**
   * The overlay as codes (the first `overlayLength`), when `codesValid`. A narrower segment is written
   * over them in place, so it costs its own width, however wide the overlay is (`\r|\r/\r-` after a
   * long line would otherwise copy the line per redraw).
   */
  private overlayCodes = new Uint16Array(0);
  private codesValid = false;
  /** The open window holds at least one completed segment. */
  private rewritten = false;
  /** The open window's last segment, as far as earlier appends held it. */
  private carried = '';
  /** Terminal width the open window was collapsed for. */
  private cols = 0;

  /**
   * Collapses `text[0, end)`, which continues the run appended so far, and pushes its output pieces to
   * `out` in order. Returns the characters pushed. `cols` is the terminal width (≥ 1).
   */
  collapse(text: string, end: number, cols: number, out: string[]): number {
    let pushed = this.open && cols !== this.cols ? this.close(out) : 0;
    this.cols = cols;
    let emitted = 0; // text[emitted, …) is not output yet
    let windowStart = -1; // the opening CR of a window opened in this text
    let segmentFrom = 0; // where the open window's last segment continues in this text
    let at = 0;
    for (;;) {
      if (!this.open) {
        let cr = text.indexOf('\r', at);
        // A CR right before a line feed opens a window that ends at once (most lines end so).
        while (cr !== -1 && cr + 1 < end && text.charCodeAt(cr + 1) === LF) cr = text.indexOf('\r', cr + 2);
        if (cr === -1 || cr >= end) break;
        this.reset();
        this.open = true;
        windowStart = cr;
        segmentFrom = cr + 1;
        at = segmentFrom;
      }
      SEGMENT_CHARS.lastIndex = at;
      SEGMENT_CHARS.test(text);
      const stop = Math.min(SEGMENT_CHARS.lastIndex, end);
      const width = this.carried.length + stop - segmentFrom;
      if (stop === end && width <= cols) {
        // The text ends inside the segment: the window is held back until it ends.
        if (!this.withheld) {
          pushed += pushPiece(text, emitted, windowStart, out);
          this.withheld = true;
        }
        this.carried += text.slice(segmentFrom, end);
        emitted = end;
        break;
      }
      if (width <= cols && text.charCodeAt(stop) === CR) {
        this.overlaySegment(text, segmentFrom, stop);
        this.rewritten = true;
        this.collapsedSegments += 1;
        if (!this.withheld) {
          pushed += pushPiece(text, emitted, windowStart, out);
          this.withheld = true;
        }
        this.carried = '';
        segmentFrom = stop + 1;
        at = segmentFrom;
        continue;
      }
      // Another character, or a segment too wide (it wraps): the window ends, its last segment and the
      // rest of the text are kept as they are.
      if (this.withheld) {
        const head = this.head(width);
        out.push(head + this.carried);
        pushed += head.length + this.carried.length;
        emitted = segmentFrom;
      }
      this.open = false;
      this.carried = '';
      at = stop;
    }
    return pushed + pushPiece(text, emitted, end, out);
  }

  /** Characters held back: the open window's output so far. */
  get pendingLength(): number {
    if (!this.open) return 0;
    const width = this.carried.length;
    return (this.keepsOverlay(width) ? this.overlayLength + 2 : 1) + width;
  }

  /** The open window's output so far, without ending it (more text may still collapse into it). */
  pendingText(): string {
    return this.open ? this.head(this.carried.length) + this.carried : '';
  }

  /** Ends the open window, pushing its output to `out`; returns the characters pushed. */
  close(out: string[]): number {
    const pending = this.pendingText();
    this.reset();
    if (pending !== '') out.push(pending);
    return pending.length;
  }

  /** Forgets the open window (its output was taken with {@link pendingText} or is no longer needed). */
  reset(): void {
    this.open = false;
    this.withheld = false;
    this.rewritten = false;
    this.overlayLength = 0;
    this.overlayText = '';
    this.codesValid = false;
    this.carried = '';
  }

  /** Overlays the completed segment `carried + text[from, to)` (at most `cols` wide) at column 0. */
  private overlaySegment(text: string, from: number, to: number): void {
    const width = this.carried.length + to - from;
    if (width >= this.overlayLength) {
      const own = text.slice(from, to);
      this.overlayText = this.carried === '' ? own : this.carried + own;
      this.overlayLength = width;
      this.codesValid = false;
      return;
    }
    if (!this.codesValid) {
      if (this.overlayCodes.length < this.cols) this.overlayCodes = new Uint16Array(this.cols);
      const known = this.overlayText ?? '';
      for (let column = 0; column < known.length; column++)
        this.overlayCodes[column] = known.charCodeAt(column);
      this.codesValid = true;
    }
    const codes = this.overlayCodes;
    let column = 0;
    for (let at = 0; at < this.carried.length; at++) codes[column++] = this.carried.charCodeAt(at);
    for (let at = from; at < to; at++) codes[column++] = text.charCodeAt(at);
    if (width > 0) this.overlayText = undefined;
  }

  /** What replaces the window up to its last segment, `width` printable characters wide so far. */
  private head(width: number): string {
    if (!this.keepsOverlay(width)) return '\r';
    const codes = this.overlayCodes.subarray(0, this.overlayLength) as unknown as number[];
    this.overlayText ??= String.fromCharCode.apply(null, codes);
    return `\r${this.overlayText}\r`;
  }

  /** Whether the overlay must be printed before a last segment `width` printable characters wide. */
  private keepsOverlay(width: number): boolean {
    const length = this.overlayLength;
    return this.rewritten && length > 0 && length >= width && width < this.cols;
  }
}

/** Pushes `text[from, to)` when it is not empty (the whole text itself, unsliced); returns its length. */
function pushPiece(text: string, from: number, to: number, out: string[]): number {
  if (to <= from) return 0;
  out.push(from === 0 && to === text.length ? text : text.slice(from, to));
  return to - from;
}
