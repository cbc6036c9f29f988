/**
 * The terminal model's lazy feed (terminal-model.ts, pass-through): text the scrollback already has,
 * waiting for xterm, which is parsed only when xterm is needed. Only its last `rows` lines can stay on
 * screen, so it keeps at most a few hundred lines more than that: whole pieces are dropped from its head
 * once it holds more, and a line longer than the screen keeps only its last rows. What it drops it
 * replaces with a fresh line and the SGRs (the pen) still in effect, so screen, cursor and pen end the
 * same as after the full feed; only xterm's own scrollback differs, which nothing reads.
 */

/** Lazily fed text is compacted (its head dropped) once it holds this many line feeds beyond `rows`. */
const COMPACT_EXTRA_LINES = 256;
/** An SGR sequence (the only sequence pass-through takes). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: SGR is defined by ESC
export const SGR = /\x1b\[[0-9;:]*m/g;
/** Printable ASCII only: one column per character. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** What the feed needs of the screen it feeds, read when it needs it (a resize flushes the feed first). */
export interface LazyFeedScreen {
  readonly rows: number;
  readonly cols: number;
  /** xterm's cursor column now (it holds xterm's state when the feed begins). */
  readonly cursorX: number;
}

/** The feed taken for parsing: `head` (a fresh line and the pen, when its head was dropped), then `text`. */
export interface LazyFeedText {
  head: string;
  text: string;
}

/** Text waiting for xterm: pieces with their line-feed counts, compacted as it grows. */
export class LazyFeed {
  private pieces: string[] = [];
  private lineFeedCounts: number[] = [];
  private lineFeeds = 0;
  private waitingChars = 0;
  /** SGRs in effect before `pieces[0]` that xterm has not parsed (its head was dropped). */
  private pen = '';
  /** Part of the feed was dropped: the rest is fed after a fresh line, from its first line start. */
  private cut = false;
  /** The head of a line longer than the screen was dropped: the rest is fed after a fresh line, whole. */
  private atRowStart = false;
  /** xterm's cursor column when the feed began. */
  private startCol = 0;

  /**
   * @param screen the screen fed, read at each push.
   * @param maxChars a feed without enough line feeds to compact (a line longer than the screen) is
   *   parsed once it holds this many characters, so it stays bounded.
   */
  constructor(
    private readonly screen: LazyFeedScreen,
    private readonly maxChars: number,
  ) {}

  /** Characters waiting. */
  get chars(): number {
    return this.waitingChars;
  }

  /**
   * Queues `raw` (holding `lineFeeds` line feeds). True when the feed must be parsed now: it holds more
   * than `maxChars` that no compaction can drop.
   */
  push(raw: string, lineFeeds: number): boolean {
    const { rows } = this.screen;
    if (this.pieces.length === 0) this.startCol = this.screen.cursorX;
    this.pieces.push(raw);
    this.lineFeedCounts.push(lineFeeds);
    this.lineFeeds += lineFeeds;
    this.waitingChars += raw.length;
    if (this.lineFeeds > rows + COMPACT_EXTRA_LINES) this.compactPieces();
    return this.waitingChars > this.maxChars && !this.compactLongLine();
  }

  /** Takes what waits for parsing (undefined when nothing does) and empties the feed. */
  take(): LazyFeedText | undefined {
    if (this.pieces.length === 0) return undefined;
    let text = this.pieces.length === 1 ? this.pieces[0]! : this.pieces.join('');
    let head = '';
    if (this.cut) {
      const lineStart = text.indexOf('\n') + 1;
      head = `\r\n${penAfter(this.pen, text.slice(0, lineStart))}`;
      text = text.slice(lineStart);
    } else if (this.atRowStart) head = `\r\n${this.pen}`;
    this.clear();
    return { head, text };
  }

  /** Forgets what waits. */
  clear(): void {
    this.pieces = [];
    this.lineFeedCounts = [];
    this.lineFeeds = 0;
    this.waitingChars = 0;
    this.pen = '';
    this.cut = false;
    this.atRowStart = false;
  }

  /**
   * A line longer than the screen, of printable ASCII (one column each), that waits (50 MB without a
   * line feed): only its last rows can stay on screen, so its head is dropped at a row boundary, keeping
   * the last `rows + 1` rows and more. Fed after a fresh line, the kept text starts a row as it did in
   * the full feed, and the row that is no continuation in the cut feed scrolls off, so screen, cursor and
   * pen end the same. False: not such a line (then it is parsed).
   */
  private compactLongLine(): boolean {
    if (this.cut) return false;
    const { rows, cols } = this.screen;
    const text = this.pieces.join('');
    const lineFeed = text.lastIndexOf('\n');
    if (lineFeed !== -1 && text.charCodeAt(lineFeed - 1) !== 0x0d) return false; // a bare LF keeps the column
    const start = lineFeed + 1;
    // Where the line's kept text begins: after a CRLF, or where the feed begins (a row start when cut).
    const startCol = lineFeed === -1 && !this.atRowStart ? this.startCol : 0;
    const line = text.slice(start);
    const keep = (rows + 1) * cols;
    if (line.length < keep + cols || !PRINTABLE_ASCII.test(line)) return false;
    const drop = line.length - keep - ((startCol + line.length - keep) % cols);
    const kept = line.slice(drop);
    this.pen = penAfter(this.pen, text.slice(0, start));
    this.pieces = [kept];
    this.lineFeedCounts = [0];
    this.lineFeeds = 0;
    this.waitingChars = kept.length;
    this.atRowStart = true;
    return true;
  }

  /**
   * Drops waiting pieces whose rows would scroll off anyway, keeping the pen they leave. What is kept
   * holds more than `rows` line feeds, so after cutting its first piece at a line start (take) at least
   * `rows` remain.
   */
  private compactPieces(): void {
    const { rows } = this.screen;
    let drop = 0;
    let lineFeeds = this.lineFeeds;
    let chars = this.waitingChars;
    while (drop < this.pieces.length - 1 && lineFeeds - this.lineFeedCounts[drop]! > rows + 1) {
      this.pen = penAfter(this.pen, this.pieces[drop]!);
      lineFeeds -= this.lineFeedCounts[drop]!;
      chars -= this.pieces[drop]!.length;
      drop++;
    }
    if (drop === 0) return;
    this.atRowStart = false;
    this.pieces.splice(0, drop);
    this.lineFeedCounts.splice(0, drop);
    this.lineFeeds = lineFeeds;
    this.waitingChars = chars;
    this.cut = true;
  }
}

/** The pen (SGRs) in effect at the end of `text`; `pen` is what held before. */
function penAfter(pen: string, text: string): string {
  if (text.indexOf('\x1b') === -1) return pen;
  const resetAt = Math.max(text.lastIndexOf('\x1b[0m'), text.lastIndexOf('\x1b[m'));
  const tail = (resetAt >= 0 ? text.slice(resetAt) : text).match(SGR);
  const before = resetAt >= 0 ? '' : pen;
  return tail === null ? before : before + tail.join('');
}
