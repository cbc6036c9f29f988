/**
 * Row-edit text: ASCII whose CRs and BSs move the cursor within the open row (a `\r` progress bar, a
 * backspace spinner). The terminal model hands a read's row-edit text to its listener in one call; a
 * consumer that follows the text stream line by line (a send's `waitFor`, the live stream) splits it
 * here into the calls it would have had one by one.
 */

/** What row-edit text is told as. */
export interface RowEditSink {
  /** Text of the current line. */
  text(s: string): void;
  /** End of line (a CRLF). */
  newline(): void;
  /** The current line is written again from its start (a CR that is no line end). */
  rewriteLine(): void;
}

/**
 * Tells `sink` row-edit `data` as it was written: text as it comes, a CR that is no line end as a rewrite
 * of the line, a CRLF as its end (a backspace only moves the cursor: nothing to tell).
 */
export function tellRowEdits(sink: RowEditSink, data: string): void {
  let from = 0;
  for (let i = 0; i < data.length; i++) {
    const c = data.charCodeAt(i);
    if (c !== 0x0d && c !== 0x08) continue;
    if (i > from) sink.text(data.slice(from, i));
    from = i + 1;
    if (c === 0x08) continue;
    if (data.charCodeAt(i + 1) === 0x0a) {
      sink.newline();
      from = ++i + 1;
    } else sink.rewriteLine();
  }
  if (from < data.length) sink.text(data.slice(from));
}

/** Whether `tellRowEdits` tells `data` as anything at all (backspaces alone are told as nothing). */
export function rowEditsTellSomething(data: string): boolean {
  for (let i = 0; i < data.length; i++) if (data.charCodeAt(i) !== 0x08) return true;
  return false;
}
