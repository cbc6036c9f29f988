/**
 * The newest characters of a line that only grows at its end (SPEC §4.3 "Bounds under hostile
 * output"): the head of a line that scrolled off the live region while its tail did not. A line that
 * never ends must cost O(piece) per append, not O(line): the pieces are kept as they came and joined
 * only when the text is read, and the oldest pieces are dropped once the newer ones alone reach the
 * bound. So at most `maxChars` plus one piece are held, and the text read is cut to `maxChars`.
 */

/** Dropped pieces are compacted out of the array once they are this many and half of it. */
const COMPACT_AFTER_PIECES = 64;

/** A line's newest `maxChars` characters, appended to piece by piece. */
export class LineTail {
  private readonly maxChars: number;
  private pieces: string[] = [];
  /** Index of the oldest piece still held. */
  private first = 0;
  /** Characters in the pieces held. */
  private held = 0;
  /** The text as last read, until the next change. */
  private joined: string | undefined = '';

  constructor(maxChars: number) {
    this.maxChars = maxChars;
  }

  /** Characters the text has (at most `maxChars`). */
  get length(): number {
    return Math.min(this.held, this.maxChars);
  }

  /** Whether the text is empty. */
  get isEmpty(): boolean {
    return this.held === 0;
  }

  /** Appends `piece` at the end; the oldest characters go once more than `maxChars` are held. */
  append(piece: string): void {
    if (piece.length === 0) return;
    const kept = piece.length > this.maxChars ? piece.slice(piece.length - this.maxChars) : piece;
    this.pieces.push(kept);
    this.held += kept.length;
    this.joined = undefined;
    // Drop the oldest piece while the newer ones alone still hold `maxChars`.
    while (this.held - this.pieces[this.first]!.length >= this.maxChars) {
      this.held -= this.pieces[this.first]!.length;
      this.pieces[this.first] = ''; // released now, not at the next compaction
      this.first += 1;
    }
    if (this.first >= COMPACT_AFTER_PIECES && this.first * 2 >= this.pieces.length) {
      this.pieces = this.pieces.slice(this.first);
      this.first = 0;
    }
  }

  /** Empties the text. */
  clear(): void {
    this.pieces = [];
    this.first = 0;
    this.held = 0;
    this.joined = '';
  }

  /** The text: the newest `maxChars` characters appended since the last {@link clear}. */
  toString(): string {
    if (this.joined !== undefined) return this.joined;
    const pieces = this.pieces;
    let text = pieces.length === this.first + 1 ? pieces[this.first]! : pieces.slice(this.first).join('');
    if (text.length > this.maxChars) text = text.slice(text.length - this.maxChars);
    this.joined = text;
    return text;
  }
}
