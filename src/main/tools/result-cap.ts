/**
 * Caps a result's text to a byte budget keeping the tail (the newest output is what a model needs),
 * cutting at a line boundary when one is available, and never inside a UTF-8 character.
 */

/** A capped text and what was dropped. */
export interface CappedText {
  /** The kept tail. */
  text: string;
  /** True when anything was dropped. */
  truncated: boolean;
  /** Whole lines dropped from the front (a partially kept first line is not counted). */
  droppedLines: number;
}

/** Smallest budget honoured, so a cap can never produce an empty result for a non-empty text. */
const MIN_BUDGET_BYTES = 256;

/** Keeps at most `maxBytes` UTF-8 bytes of the end of `text`. */
export function capTail(text: string, maxBytes: number): CappedText {
  const budget = Math.max(MIN_BUDGET_BYTES, Math.floor(maxBytes));
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= budget) return { text, truncated: false, droppedLines: 0 };
  let start = bytes.length - budget;
  // Continuation bytes are 0b10xxxxxx: step forward to the first byte of a character.
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
  // Prefer to start at a line: the kept text then begins with a whole line, unless the last line
  // alone is larger than the budget.
  if (bytes[start - 1] !== 0x0a) {
    const newline = bytes.indexOf(0x0a, start);
    if (newline !== -1 && newline + 1 < bytes.length) start = newline + 1;
  }
  let droppedLines = 0;
  for (
    let index = bytes.indexOf(0x0a);
    index !== -1 && index < start;
    index = bytes.indexOf(0x0a, index + 1)
  ) {
    droppedLines++;
  }
  return { text: bytes.subarray(start).toString('utf8'), truncated: true, droppedLines };
}

/** Number of lines of a text as the scrollback counts them (a trailing newline ends the last line). */
export function countLines(text: string): number {
  if (text === '') return 0;
  let lines = 1;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) lines++;
  return text.endsWith('\n') ? lines - 1 : lines;
}
