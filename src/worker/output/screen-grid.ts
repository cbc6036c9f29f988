/**
 * The live region of the output model (SPEC §4.3): a `rows × cols` grid of cells with a cursor and
 * auto-wrap, edited the way xterm edits its screen — print with overwrite, CR, BS, cursor moves, erase
 * in line and display, insert/delete of lines and characters, scroll region, save/restore cursor.
 *
 * Differences from a terminal, on purpose: LF is a new line (CR LF), as the pty's output processing
 * makes it for everything but raw-mode programs; colors and other attributes are not kept. Rows that
 * scroll off the top are handed to `commit` as text, soft-wrapped rows joined back into one line; a row
 * pushed out of a scroll region that does not start at the top, or erased, is gone, as on a screen.
 *
 * Cells hold the character drawn there (with its combining marks), or one of the markers below. A tab
 * over blank cells is remembered as a tab, so a line read back keeps its TAB where nothing overwrote it.
 */
import { charWidth } from './char-width.js';
import { LineTail } from './line-tail.js';

/** A cell nothing was drawn in (or erased). */
const EMPTY = '';
/** The right half of a wide character drawn in the cell before. */
const WIDE_TAIL = '\u0000';
/** A TAB drawn over blank cells starts here; the cells up to the tab stop are {@link TAB_FILL}. */
const TAB_HEAD = '\t';
/** The last cell of a row, left blank because the wide character printed there did not fit. */
const WRAP_SKIP = '\u0002';
/** A cell a TAB moved over while it was blank. */
const TAB_FILL = '\u0001';
/** Tab stops every this many columns, as every terminal sets them at start. */
const TAB_WIDTH = 8;

const CSI_CUU = 0x41; // A
const CSI_CUD = 0x42; // B
const CSI_CUF = 0x43; // C
const CSI_CUB = 0x44; // D
const CSI_CNL = 0x45; // E
const CSI_CPL = 0x46; // F
const CSI_CHA = 0x47; // G
const CSI_CUP = 0x48; // H
const CSI_ED = 0x4a; // J
const CSI_EL = 0x4b; // K
const CSI_IL = 0x4c; // L
const CSI_DL = 0x4d; // M
const CSI_DCH = 0x50; // P
const CSI_SU = 0x53; // S
const CSI_SD = 0x54; // T
const CSI_ECH = 0x58; // X
const CSI_ICH = 0x40; // @
const CSI_HPA = 0x60; // `
const CSI_VPA = 0x64; // d
const CSI_HVP = 0x66; // f
const CSI_DECSTBM = 0x72; // r
const CSI_SCOSC = 0x73; // s
const CSI_SCORC = 0x75; // u
const ESC_DECSC = 0x37; // 7
const ESC_DECRC = 0x38; // 8
const ESC_IND = 0x44; // D
const ESC_NEL = 0x45; // E
const ESC_RI = 0x4d; // M

/** One screen row. */
interface Row {
  cells: string[];
  /** Every cell from this column on is blank: blank rows are told apart without a scan. */
  extent: number;
  /** Auto-wrap continued this row on the next one: they are one line. */
  continues: boolean;
}

/** Options of {@link ScreenGrid}. */
export interface ScreenGridOptions {
  rows: number;
  cols: number;
  /** Receives each line that scrolls off the top, soft-wrapped rows joined. */
  commit: (line: string) => void;
  /** Most characters of one line held back while its head has scrolled off and its tail has not. */
  maxLineChars: number;
}

/** The live region: a grid with a cursor. */
export class ScreenGrid {
  private rowCount: number;
  private cols: number;
  private grid: Row[];
  private readonly commit: (line: string) => void;
  /** Cursor column: 0…cols; `cols` means the last column was written and the next print wraps. */
  private x = 0;
  private y = 0;
  private top = 0;
  private bottom: number;
  private saved = { x: 0, y: 0 };
  /** Rows of the line at the top that already scrolled off (it continues on row 0), its newest `maxLineChars`. */
  private readonly headOfTopLine: LineTail;

  constructor(options: ScreenGridOptions) {
    this.rowCount = options.rows;
    this.cols = options.cols;
    this.commit = options.commit;
    this.headOfTopLine = new LineTail(options.maxLineChars);
    this.bottom = this.rowCount - 1;
    this.grid = Array.from({ length: this.rowCount }, () => this.blankRow());
  }

  /** Whether the region is empty with the cursor home: nothing to show, nothing to commit. */
  get isBlank(): boolean {
    return this.x === 0 && this.y === 0 && this.headOfTopLine.isEmpty && this.rowsBlankFrom(0);
  }

  /**
   * Whether the cursor sits at the start of a blank row with only blank rows below it and no scroll
   * region: then everything above is plain lines, and further plain output only appends.
   */
  get atLineStart(): boolean {
    if (this.x !== 0 || this.top !== 0 || this.bottom !== this.rowCount - 1) return false;
    if (this.y > 0 && this.grid[this.y - 1]!.continues) return false;
    return this.rowsBlankFrom(this.y);
  }

  /** Characters of the line at the top whose rows scrolled off before row 0 ('' when none did). */
  get headOfTopLineLength(): number {
    return this.headOfTopLine.length;
  }

  /** Sets the text of the line whose head scrolled off before row 0 (used when the region is rebuilt). */
  setHeadOfTopLine(head: string): void {
    this.headOfTopLine.clear();
    this.headOfTopLine.append(head);
  }

  /** Prints printable text (TAB allowed; no other control) at the cursor. */
  write(text: string): void {
    const end = text.length;
    for (let i = 0; i < end; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x20 && code < 0x7f) {
        let runEnd = i + 1;
        while (runEnd < end && isPrintableAscii(text.charCodeAt(runEnd))) runEnd += 1;
        this.putAscii(text, i, runEnd);
        i = runEnd - 1;
        continue;
      }
      if (code === 0x09) {
        this.tab();
        continue;
      }
      let char = text[i]!;
      let point = code;
      if (code >= 0xd800 && code <= 0xdbff && i + 1 < end) {
        const low = text.charCodeAt(i + 1);
        if (low >= 0xdc00 && low <= 0xdfff) {
          point = ((code - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
          char = text.slice(i, i + 2);
          i += 1;
        }
      }
      const width = charWidth(point);
      if (width === 0) this.combine(char);
      else this.put(char, width);
    }
  }

  /** CR LF. */
  newline(): void {
    this.x = 0;
    this.lineFeed();
  }

  /** CR. */
  carriageReturn(): void {
    this.x = 0;
  }

  /** BS: one column left, not past the start of the row (no reverse wrap); a pending wrap is cancelled. */
  backspace(): void {
    if (this.x >= this.cols) this.x = this.cols - 1;
    if (this.x > 0) this.x -= 1;
  }

  /** A CSI sequence (SGR excluded): `params` as collected, `final` its final byte. Others are ignored. */
  csi(params: string, final: number): void {
    if (params !== '' && !isPlainParameters(params)) return; // private (`?…`) or with intermediates
    this.edit(params, final);
    this.breakJoinsToBlankRows();
  }

  private edit(params: string, final: number): void {
    const first = params === '' ? 0 : leadingNumber(params);
    const count = Math.max(1, first);
    switch (final) {
      case CSI_CUU:
        this.moveUp(count);
        return;
      case CSI_CUD:
        this.moveDown(count);
        return;
      case CSI_CUF:
        this.x = Math.min(this.cols - 1, this.clampedX() + count);
        return;
      case CSI_CUB:
        this.x = Math.max(0, this.clampedX() - count);
        return;
      case CSI_CNL:
        this.moveDown(count);
        this.x = 0;
        return;
      case CSI_CPL:
        this.moveUp(count);
        this.x = 0;
        return;
      case CSI_CHA:
      case CSI_HPA:
        this.x = Math.min(this.cols - 1, count - 1);
        return;
      case CSI_CUP:
      case CSI_HVP: {
        const second = secondNumber(params);
        this.y = Math.min(this.rowCount - 1, count - 1);
        this.x = Math.min(this.cols - 1, Math.max(1, second) - 1);
        return;
      }
      case CSI_VPA:
        this.y = Math.min(this.rowCount - 1, count - 1);
        return;
      case CSI_EL:
        this.eraseInLine(first);
        return;
      case CSI_ED:
        this.eraseInDisplay(first);
        return;
      case CSI_IL:
        this.insertLines(count);
        return;
      case CSI_DL:
        this.deleteLines(count);
        return;
      case CSI_ICH:
        this.insertChars(count);
        return;
      case CSI_DCH:
        this.deleteChars(count);
        return;
      case CSI_ECH:
        this.eraseChars(count);
        return;
      case CSI_SU:
        this.scrollUp(count);
        return;
      case CSI_SD:
        this.scrollDown(count);
        return;
      case CSI_DECSTBM:
        this.setScrollRegion(first, secondNumber(params));
        return;
      case CSI_SCOSC:
        if (params === '') this.saved = { x: this.x, y: this.y };
        return;
      case CSI_SCORC:
        if (params === '') this.restoreCursor();
        return;
    }
  }

  /** A two-character escape: DECSC/DECRC (save/restore cursor), IND, NEL, RI. Others are ignored. */
  escape(final: number): void {
    switch (final) {
      case ESC_DECSC:
        this.saved = { x: this.x, y: this.y };
        return;
      case ESC_DECRC:
        this.restoreCursor();
        return;
      case ESC_IND:
        this.lineFeed();
        return;
      case ESC_NEL:
        this.newline();
        return;
      case ESC_RI:
        if (this.y === this.top) this.scrollDown(1);
        else if (this.y > 0) this.y -= 1;
        return;
    }
  }

  /**
   * The region as lines: from row 0 through the last row that holds something or the cursor, wrapped
   * rows joined (the head of a line that scrolled off included). The last line is the open one.
   */
  lines(): string[] {
    let last = this.y;
    for (let r = this.rowCount - 1; r > last; r--) {
      if (!this.rowBlank(r)) {
        last = r;
        break;
      }
    }
    const lines: string[] = [];
    let line = this.headOfTopLine.toString();
    for (let r = 0; r <= last; r++) {
      const row = this.grid[r]!;
      const joined = row.continues && r < last;
      line += rowText(row, joined, joined && isWide(this.grid[r + 1]!.cells[0]!));
      if (row.continues && r < last) continue;
      lines.push(line);
      line = '';
    }
    return lines;
  }

  /** Each row as a terminal shows it, trailing blanks trimmed (wide characters once, tabs as spaces). */
  visibleRows(): string[] {
    return this.grid.map((row) => renderRow(row.cells, true));
  }

  /** The cursor: column (0-based, at most cols - 1) and row. */
  get cursor(): { x: number; y: number } {
    return { x: this.clampedX(), y: this.y };
  }

  /** Commits every row above the cursor as lines and empties the grid (see {@link atLineStart}). */
  commitAboveCursor(): void {
    for (let r = 0; r < this.y; r++) this.commitRow(this.grid[r]!, this.grid[r + 1]!);
    for (let r = 0; r < this.rowCount; r++) this.grid[r] = this.blankRow();
    this.x = 0;
    this.y = 0;
    this.headOfTopLine.clear();
  }

  private put(char: string, width: number): void {
    if (this.x + width > this.cols) {
      if (width > this.cols) return; // a wide character on a one-column screen cannot be drawn
      const row = this.grid[this.y]!;
      // A wide character that does not fit in the last column blanks it and goes to the next row.
      if (this.x < this.cols) {
        this.eraseCells(row, this.x, this.cols);
        row.cells[this.x] = WRAP_SKIP;
        row.extent = Math.max(row.extent, this.cols);
      }
      row.continues = true;
      this.x = 0;
      this.lineFeed();
    }
    const row = this.grid[this.y]!;
    const cells = row.cells;
    const x = this.x;
    if (cells[x] === WIDE_TAIL && x > 0) cells[x - 1] = EMPTY; // overwriting the right half of a wide one
    cells[x] = char;
    if (width === 2) cells[x + 1] = WIDE_TAIL;
    const after = x + width;
    if (after > row.extent) row.extent = after;
    if (after < this.cols && cells[after] === WIDE_TAIL) cells[after] = EMPTY; // its left half was overwritten
    this.x = after;
  }

  /**
   * Prints `text[from, to)`, printable ASCII only: what {@link put} does character by character, a
   * row's worth at a time (a line without an end is mostly this).
   */
  private putAscii(text: string, from: number, to: number): void {
    let i = from;
    while (i < to) {
      if (this.x >= this.cols) {
        if (to - i > (this.rowCount + 1) * this.cols && this.scrollsWholeScreen()) {
          i = this.scrollPast(text, i, to);
          continue;
        }
        this.grid[this.y]!.continues = true;
        this.x = 0;
        this.lineFeed();
      }
      const row = this.grid[this.y]!;
      const cells = row.cells;
      const x = this.x;
      const after = Math.min(this.cols, x + (to - i));
      if (cells[x] === WIDE_TAIL && x > 0) cells[x - 1] = EMPTY; // overwriting the right half of a wide one
      for (let c = x; c < after; c++) cells[c] = text[i++]!;
      if (after > row.extent) row.extent = after;
      if (after < this.cols && cells[after] === WIDE_TAIL) cells[after] = EMPTY; // its left half was overwritten
      this.x = after;
    }
  }

  /** Whether a line feed at the cursor scrolls the whole screen: the cursor on the last row, no scroll region. */
  private scrollsWholeScreen(): boolean {
    return this.y === this.bottom && this.top === 0 && this.bottom === this.rowCount - 1;
  }

  /**
   * The wrap at a pending wrap (see {@link scrollsWholeScreen}) that more than a screen of `text[i,
   * to)` (printable ASCII) follows: every row on the screen scrolls off, and so do the rows of the text
   * that leave a screenful after them. Those are never drawn: the screen's rows are committed as
   * scrolling would, the text's go to the head of the top line at once (a line without an end costs
   * O(length) here, not a grid row each), and the screen is left blank with the cursor home, the rest
   * of the text (more than a screen) still to print. Returns where the rest starts.
   */
  private scrollPast(text: string, i: number, to: number): number {
    const grid = this.grid;
    const last = this.rowCount - 1;
    grid[last]!.continues = true;
    for (let r = 0; r < last; r++) this.commitRow(grid[r]!, grid[r + 1]!);
    this.commitRow(grid[last]!, blanked(grid[0]!)); // the text goes on after it: ASCII, not wide
    for (let r = 1; r <= last; r++) blanked(grid[r]!);
    const skipped = Math.floor((to - i - this.rowCount * this.cols) / this.cols) * this.cols;
    this.headOfTopLine.append(text.slice(i, i + skipped));
    this.x = 0;
    this.y = 0;
    return i + skipped;
  }

  /** A zero-width character joins the character before the cursor. */
  private combine(char: string): void {
    const cells = this.grid[this.y]!.cells;
    let at = Math.min(this.x, this.cols) - 1;
    if (at >= 0 && cells[at] === WIDE_TAIL) at -= 1;
    if (at < 0) {
      this.put(char, 1);
      return;
    }
    const base = cells[at]!;
    cells[at] = base === EMPTY || base === TAB_FILL || base === TAB_HEAD ? ` ${char}` : base + char;
  }

  /** TAB: to the next tab stop (the last column at most); blank cells it crosses remember the tab. */
  private tab(): void {
    const from = this.clampedX();
    const stop = Math.min(this.cols - 1, (Math.floor(from / TAB_WIDTH) + 1) * TAB_WIDTH);
    if (stop <= from) return;
    const cells = this.grid[this.y]!.cells;
    let blank = true;
    for (let c = from; c < stop && blank; c++) blank = cells[c] === EMPTY;
    if (blank) {
      cells[from] = TAB_HEAD;
      for (let c = from + 1; c < stop; c++) cells[c] = TAB_FILL;
      const row = this.grid[this.y]!;
      if (stop > row.extent) row.extent = stop;
    }
    this.x = stop;
  }

  private lineFeed(): void {
    if (this.y === this.bottom) this.scrollUp(1);
    else if (this.y < this.rowCount - 1) this.y += 1;
  }

  private moveUp(count: number): void {
    const limit = this.y >= this.top ? this.top : 0;
    this.y = Math.max(limit, this.y - count);
    this.x = this.clampedX();
  }

  private moveDown(count: number): void {
    const limit = this.y <= this.bottom ? this.bottom : this.rowCount - 1;
    this.y = Math.min(limit, this.y + count);
    this.x = this.clampedX();
  }

  private restoreCursor(): void {
    this.x = Math.min(this.saved.x, this.cols);
    this.y = Math.min(this.saved.y, this.rowCount - 1);
  }

  private setScrollRegion(topParam: number, bottomParam: number): void {
    const top = Math.max(1, topParam) - 1;
    const bottom = (bottomParam > 0 ? Math.min(bottomParam, this.rowCount) : this.rowCount) - 1;
    if (top >= bottom) return;
    this.top = top;
    this.bottom = bottom;
    this.x = 0;
    this.y = 0;
  }

  /**
   * Rows scroll up within the region; a row leaving the top of the screen is committed. The row that
   * leaves comes back blank at the bottom: a flood scrolls a row per `cols` characters, and a new row
   * each time would live long enough to be promoted, filling the old generation with garbage.
   */
  private scrollUp(count: number): void {
    for (let k = 0; k < count; k++) {
      const [gone] = this.grid.splice(this.top, 1);
      // A one-row screen has no row below: its line goes on in the row that comes back blank.
      if (this.top === 0) this.commitRow(gone!, this.grid[0]);
      this.grid.splice(this.bottom, 0, blanked(gone!));
    }
  }

  private scrollDown(count: number): void {
    if (this.top === 0) this.settleHead();
    for (let k = 0; k < count; k++) {
      const [gone] = this.grid.splice(this.bottom, 1);
      this.grid.splice(this.top, 0, blanked(gone!));
    }
  }

  private insertLines(count: number): void {
    if (this.y < this.top || this.y > this.bottom) return;
    if (this.y === 0) this.settleHead();
    for (let k = 0; k < Math.min(count, this.bottom - this.y + 1); k++) {
      const [gone] = this.grid.splice(this.bottom, 1);
      this.grid.splice(this.y, 0, blanked(gone!));
    }
    this.x = 0;
  }

  private deleteLines(count: number): void {
    if (this.y < this.top || this.y > this.bottom) return;
    if (this.y === 0) this.settleHead();
    for (let k = 0; k < Math.min(count, this.bottom - this.y + 1); k++) {
      const [gone] = this.grid.splice(this.y, 1);
      this.grid.splice(this.bottom, 0, blanked(gone!));
    }
    this.x = 0;
  }

  private eraseInLine(mode: number): void {
    const row = this.grid[this.y]!;
    if (mode === 0) this.eraseCells(row, this.x, this.cols);
    else if (mode === 1) this.eraseCells(row, 0, this.x + 1);
    else if (mode === 2) this.eraseCells(row, 0, this.cols);
  }

  private eraseInDisplay(mode: number): void {
    if (mode === 0) {
      this.eraseInLine(0);
      for (let r = this.y + 1; r < this.rowCount; r++) this.grid[r] = this.blankRow();
    } else if (mode === 1) {
      for (let r = 0; r < this.y; r++) this.grid[r] = this.blankRow();
      this.eraseInLine(1);
    } else if (mode === 2) {
      for (let r = 0; r < this.rowCount; r++) this.grid[r] = this.blankRow();
    }
  }

  private insertChars(count: number): void {
    const x = this.clampedX();
    this.x = x; // cancels a pending wrap, as xterm does
    const cells = this.grid[this.y]!.cells;
    const n = Math.min(count, this.cols - x);
    this.splitWideAt(cells, x);
    this.splitWideAt(cells, this.cols - n); // a wide character pushed half off the row goes
    cells.splice(this.cols - n, n);
    cells.splice(x, 0, ...new Array<string>(n).fill(EMPTY));
    const row = this.grid[this.y]!;
    row.extent = Math.min(this.cols, row.extent + n);
  }

  private deleteChars(count: number): void {
    const x = this.clampedX();
    this.x = x; // cancels a pending wrap, as xterm does
    const cells = this.grid[this.y]!.cells;
    const n = Math.min(count, this.cols - x);
    this.splitWideAt(cells, x);
    this.splitWideAt(cells, x + n);
    cells.splice(x, n);
    cells.push(...new Array<string>(n).fill(EMPTY));
  }

  /** A wide character with one half on each side of the boundary before column `at` is blanked. */
  private splitWideAt(cells: string[], at: number): void {
    if (at > 0 && at < this.cols && cells[at] === WIDE_TAIL) {
      cells[at] = EMPTY;
      cells[at - 1] = EMPTY;
    }
  }

  private eraseChars(count: number): void {
    const x = this.clampedX();
    this.x = x; // cancels a pending wrap, as xterm does
    this.eraseCells(this.grid[this.y]!, x, Math.min(this.cols, x + count));
  }

  /** Blanks cells [from, to), and the other half of a wide character cut at either end. */
  private eraseCells(row: Row, from: number, to: number): void {
    const cells = row.cells;
    const start = Math.max(0, from);
    const end = Math.min(this.cols, to, row.extent);
    if (start >= end) return;
    for (let c = start; c < end; c++) cells[c] = EMPTY;
    if (end >= row.extent) row.extent = start;
    if (start > 0 && isWide(cells[start - 1]!)) cells[start - 1] = EMPTY;
    if (end < this.cols && cells[end] === WIDE_TAIL) cells[end] = EMPTY;
  }

  /**
   * A row that continued onto a row now blank (erased, deleted, or replaced by an inserted one) is a
   * line of its own (only rows that continue are looked at, so this costs little): joined, the blank row would vanish from the text, and the region rebuilt from
   * that text would lose a row.
   */
  private breakJoinsToBlankRows(): void {
    if (!this.headOfTopLine.isEmpty && cellsBlank(this.grid[0]!)) this.settleHead();
    for (let r = 0; r + 1 < this.rowCount; r++) {
      const row = this.grid[r]!;
      if (row.continues && cellsBlank(this.grid[r + 1]!)) row.continues = false;
    }
  }

  /**
   * The line whose head scrolled off no longer goes on in row 0 (row 0 was removed, pushed down or
   * erased): its head is a line of its own.
   */
  private settleHead(): void {
    if (this.headOfTopLine.isEmpty) return;
    const head = this.headOfTopLine.toString();
    this.headOfTopLine.clear();
    this.commit(head);
  }

  /**
   * Commits `row`, the top row; `next` is the row below it (none on a one-row screen), where its line
   * goes on if it `continues`.
   */
  private commitRow(row: Row, next: Row | undefined): void {
    const text = rowText(row, row.continues, row.continues && next !== undefined && isWide(next.cells[0]!));
    if (row.continues) {
      // A line that never ends is held only up to its newest maxLineChars characters.
      this.headOfTopLine.append(text);
      return;
    }
    this.commit(this.headOfTopLine.toString() + text);
    this.headOfTopLine.clear();
  }

  private clampedX(): number {
    return this.x >= this.cols ? this.cols - 1 : this.x;
  }

  private rowBlank(r: number): boolean {
    const row = this.grid[r]!;
    return !row.continues && cellsBlank(row);
  }

  private rowsBlankFrom(from: number): boolean {
    for (let r = from; r < this.rowCount; r++) if (!this.rowBlank(r)) return false;
    return true;
  }

  private blankRow(): Row {
    return { cells: new Array<string>(this.cols).fill(EMPTY), extent: 0, continues: false };
  }
}

function isPrintableAscii(code: number): boolean {
  return code >= 0x20 && code < 0x7f;
}

/** `row` emptied for reuse. */
function blanked(row: Row): Row {
  row.cells.fill(EMPTY);
  row.extent = 0;
  row.continues = false;
  return row;
}

/** True when no cell holds anything. */
function cellsBlank(row: Row): boolean {
  const cells = row.cells;
  for (let c = 0; c < row.extent; c++) {
    const cell = cells[c];
    if (cell !== EMPTY && cell !== WRAP_SKIP) return false;
  }
  return true;
}

/** Whether a cell holds a wide character (its first character decides). */
function isWide(cell: string): boolean {
  if (cell === EMPTY || cell.charCodeAt(0) < 0x300) return false;
  return charWidth(cell.codePointAt(0)!) === 2;
}

/**
 * A row's text as a line holds it ({@link renderRow} without expanding tabs). A row of plain
 * characters only — what a flood fills — is joined in one go: a flat string, where appending cell by
 * cell would build a chain of `cols` string pieces that a held line tail keeps alive.
 */
function rowText(row: Row, continues: boolean, nextStartsWide: boolean): string {
  const cells = row.cells;
  const extent = row.extent;
  let plain = extent > 0 && (extent === cells.length || !continues);
  for (let c = 0; plain && c < extent; c++) {
    const cell = cells[c]!;
    plain =
      cell !== EMPTY && cell !== TAB_FILL && cell !== TAB_HEAD && cell !== WIDE_TAIL && cell !== WRAP_SKIP;
  }
  if (plain) return extent === cells.length ? cells.join('') : cells.slice(0, extent).join('');
  return renderRow(cells, false, continues, nextStartsWide);
}

/**
 * A row's text: blank cells inside it as spaces, trailing ones dropped (kept when the row `continues`
 * on the next: they are inside its line), the right halves of wide characters skipped, and so is the
 * last cell a wide character skipped while that character still starts the next row. A tab whose cells are still all its own reads as TAB (unless `expandTabs`).
 */
function renderRow(cells: string[], expandTabs = false, continues = false, nextStartsWide = false): string {
  let out = '';
  let spaces = 0;
  const cols = cells.length;
  for (let c = 0; c < cols; c++) {
    const cell = cells[c]!;
    if (cell === EMPTY || cell === TAB_FILL) {
      spaces += 1;
      continue;
    }
    if (cell === WIDE_TAIL) continue;
    if (cell === WRAP_SKIP) {
      // Skipped for the wide character that starts the next row; once that is overwritten, a blank.
      if (!nextStartsWide) spaces += 1;
      continue;
    }
    if (cell === TAB_HEAD) {
      let end = c + 1;
      while (end < cols && cells[end] === TAB_FILL) end += 1;
      const intact = end % TAB_WIDTH === 0 || end === cols - 1 || end === cols;
      if (intact && !expandTabs) {
        if (spaces > 0) out += ' '.repeat(spaces);
        spaces = 0;
        // A tab that ends the row's content is kept: the line read back then ends in TAB, as written.
        out += '\t';
        c = end - 1;
        continue;
      }
      spaces += 1;
      continue;
    }
    if (spaces > 0) {
      out += ' '.repeat(spaces);
      spaces = 0;
    }
    out += cell;
  }
  return continues && spaces > 0 ? out + ' '.repeat(spaces) : out;
}

/** True when `params` holds only digits, `;` and `:` (no private marker, no intermediate). */
function isPlainParameters(params: string): boolean {
  for (let i = 0; i < params.length; i++) {
    const code = params.charCodeAt(i);
    if (code < 0x30 || code > 0x3b) return false;
  }
  return true;
}

/** The first parameter (0 when empty). */
function leadingNumber(params: string): number {
  let value = 0;
  for (let i = 0; i < params.length; i++) {
    const code = params.charCodeAt(i);
    if (code < 0x30 || code > 0x39) break;
    value = Math.min(value * 10 + (code - 0x30), 0xffff);
  }
  return value;
}

/** The second parameter (0 when absent or empty). */
function secondNumber(params: string): number {
  const semicolon = params.indexOf(';');
  return semicolon === -1 ? 0 : leadingNumber(params.slice(semicolon + 1));
}
