/**
 * The terminal model's open row in pass-through (terminal-model.ts): the row the cursor stands on, as
 * shown, when it holds printable ASCII only and is shorter than the screen. Text whose CRs and BSs only
 * move the cursor within that row (a progress bar, a spinner) is applied here, character by character,
 * as xterm would: characters overwrite, nothing erases, a CRLF finishes the line. Exact while no
 * character reaches the last column (wrapping would take the cursor to another row).
 */

/** Anything but printable ASCII. */
const NOT_PRINTABLE_ASCII = /[^\x20-\x7e]/;

/** The open row's characters, its length and the cursor column in it. */
export class OpenRow {
  private row: Uint16Array;
  /** A copy of the row taken before an edit, to undo one that turns out not to be exact. */
  private saved: Uint16Array;
  private length = 0;
  private cursor = 0;
  /** The buffer holds the row (printable ASCII, shorter than the screen); false: it is unknown here. */
  private known = true;

  constructor(private cols: number) {
    this.row = new Uint16Array(cols);
    this.saved = new Uint16Array(cols);
  }

  /** The cursor column in the row. */
  get col(): number {
    return this.cursor;
  }

  /** Whether the cursor stands at the row's end (nothing at or after it). */
  get atEnd(): boolean {
    return this.cursor === this.length;
  }

  /** The row as shown (meaningful only while it is known: printable ASCII). */
  text(): string {
    return String.fromCharCode.apply(null, this.row.subarray(0, this.length) as unknown as number[]);
  }

  /** A new width: the row is unknown until it is taken from xterm again ({@link reset}). */
  resize(cols: number): void {
    this.cols = cols;
    this.row = new Uint16Array(cols);
    this.saved = new Uint16Array(cols);
    this.length = 0;
    this.cursor = 0;
    this.known = false;
  }

  /**
   * Line text was appended at the row's end. `open` is its text after its last line feed (all of it when
   * it has none, then `newRow` is false); `ascii`: it is printable ASCII. The cursor ends at the row's end.
   */
  append(open: string, newRow: boolean, ascii: boolean): void {
    if (newRow) {
      this.length = 0;
      this.known = true;
    }
    if (!ascii || this.length + open.length >= this.cols) this.known = false;
    if (this.known) {
      const row = this.row;
      let length = this.length;
      for (let k = 0; k < open.length; k++) row[length++] = open.charCodeAt(k);
      this.length = length;
    }
    this.cursor = this.length;
  }

  /**
   * Takes the row from xterm: `open` as xterm shows it, the cursor at its end when `exact` (the row is
   * no continuation and the cursor stands right after its text); known when it is also printable ASCII.
   */
  reset(open: string, exact: boolean): void {
    this.known = exact && !NOT_PRINTABLE_ASCII.test(open);
    this.length = 0;
    if (this.known) for (let k = 0; k < open.length; k++) this.row[this.length++] = open.charCodeAt(k);
    this.cursor = this.length;
  }

  /**
   * Applies printable ASCII, CR, CRLF and BS to the row: returns the lines each CRLF finished (as shown),
   * or undefined when the result is not exact here (the row is unknown, a bare LF, a character reaching
   * the last column) — then nothing changed.
   */
  edit(data: string): string[] | undefined {
    if (!this.known) return undefined;
    const row = this.row;
    const savedLength = this.length;
    this.saved.set(row.subarray(0, savedLength));
    let length = this.length;
    let col = this.cursor;
    const done: string[] = [];
    const limit = this.cols - 1;
    for (let i = 0; i < data.length; i++) {
      const c = data.charCodeAt(i);
      if (c === 0x0d) {
        if (data.charCodeAt(i + 1) === 0x0a) {
          done.push(String.fromCharCode.apply(null, row.subarray(0, length) as unknown as number[]));
          length = 0;
          col = 0;
          i++;
        } else col = 0;
      } else if (c === 0x08) {
        if (col > 0) col--;
      } else if (c === 0x0a || col >= limit) {
        // A bare LF keeps the column; the next character would reach the last column (wrapping).
        row.set(this.saved.subarray(0, savedLength));
        return undefined;
      } else {
        // The cursor never stands past the row's end (CR and BS only move it back), so a character
        // overwrites one or extends the row by one.
        row[col++] = c;
        if (col > length) length = col;
      }
    }
    this.length = length;
    this.cursor = col;
    return done;
  }
}
