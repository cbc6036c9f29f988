/**
 * The scrollback (SPEC §4.3): a bounded ring of lines fed by the terminal model. It keeps the newest
 * `maxLines` lines within `maxBytes` UTF-8 bytes, and every append costs O(size of the appended text).
 *
 * Storage is off the JavaScript heap: the lines' UTF-8 bytes sit back to back in one circular byte
 * buffer, and a circular index holds where each completed line starts. Strings are made only when
 * something is read. Under a flood this matters more than it seems: a ring of strings keeps every read
 * it holds alive through the young-generation collections, and the lines' bookkeeping (a string, a
 * size and an offset per line, released again per evicted line) costs more per line than finding it.
 * Here appending a block of lines is one copy plus two numbers per line, and evicting a line is O(1).
 *
 * Positions are monotonic byte offsets (doubles, exact far beyond any session's output); the buffer
 * holds position `p` at `p % data.length`. The index records two offsets per line: where its bytes
 * start (`stored`) and how many bytes the lines before it count for (`counted`). They differ because
 * a CRLF line end from `textBlock` is stored as is, CR included, yet counts as one byte like `\n`:
 * the ring never copies a block just to drop its CRs.
 *
 * Byte accounting: a line counts its UTF-8 length, plus 1 for its line end once completed, so
 * `byteLength` equals the UTF-8 length of `toString()`. A lone surrogate is stored (and read back) as
 * U+FFFD, 3 bytes, as UTF-8 encodes it.
 */
import { TerminalError } from '../../shared/errors.js';
import type { ReadResult } from '../../shared/types.js';
import type { LineFeeds } from './line-feeds.js';

/** A character beyond ASCII (its UTF-8 takes more than one byte). */
const BEYOND_ASCII = /[\u0080-\uffff]/;
/** Lines a page holds when the request names no count (SPEC §4.3). */
export const DEFAULT_READ_COUNT = 500;

/** Index slots allocated up front; the index doubles up to `maxLines` so idle sessions stay small. */
const INITIAL_LINE_SLOTS = 4;

/** Bytes of storage allocated up front; it doubles up to its capacity as output arrives. */
const INITIAL_DATA_BYTES = 64;

/**
 * The lines of a block are copied and indexed in runs of at most this many bytes (also at most
 * `maxBytes`, so no line of a run needs trimming). A run is written before the lines it evicts are
 * dropped, so the storage has room for one run beyond the bounds.
 */
const RUN_BYTES = 64 * 1024;

const LF = 0x0a;
const CR = 0x0d;

/** Options of {@link LineRing}. */
export interface LineRingOptions {
  /** Most lines held (the open line counts when it is not empty). */
  maxLines: number;
  /** Most UTF-8 bytes held (each line end counts as 1). */
  maxBytes: number;
}

/** What {@link LineRing.readSince} returns. */
export interface LineDelta {
  /** Completed lines each followed by `\n`, then the open line as it is now (provisional). */
  text: string;
  /** Pass this as `fromSeq` next time: the sequence number of the open line. */
  nextSeq: number;
  /** Something at or after `fromSeq` was dropped: evicted, cut to `maxBytes`, or the head of an over-long line. */
  truncated: boolean;
}

/**
 * Bounded line store of the scrollback, filled by the terminal model. Lines are indexed two
 * ways: `read` pages by position among the held lines (0 = oldest), `readSince` by a monotonic
 * sequence number that survives eviction (for deltas of a send's output).
 */
export class LineRing {
  private readonly maxLines: number;
  private readonly maxBytes: number;
  /** Most bytes the storage ever needs: the bounds, the CRs of CRLF line ends, and one run. */
  private readonly capacity: number;
  private data: Buffer;

  // Completed lines: a circular index, oldest at `head`. Line i (0 = oldest) starts at stored position
  // `lineStored[slot(i)]` and at counted position `lineCounted[slot(i)]`; it ends where line i + 1
  // starts, the newest one where the open line starts.
  private lineStored: Float64Array;
  private lineCounted: Float64Array;
  private head = 0;
  private count = 0;
  /** Sequence number of the oldest completed line held. */
  private firstSeq = 0;
  /** Counted position of the open line's start (the end of the completed lines). */
  private countedEnd = 0;

  /** Stored position of the open (last, unterminated) line; it runs to `writeEnd`, with no CRs that do not count. */
  private openStart = 0;
  private writeEnd = 0;
  /** The open line lost its head to the byte bound. */
  private openTrimmed = false;
  /** Sequence number of the newest completed line that lost its head to the byte bound (-1: none). */
  private lastTrimmedSeq = -1;
  private dropped = false;
  /** The UTF-8 of a non-ASCII run, copied in and scanned for its line ends; allocated on first use. */
  private runScratch: Buffer | undefined;

  constructor(options: LineRingOptions) {
    this.maxLines = requireCount(options.maxLines, 'maxLines', 1);
    this.maxBytes = requireCount(options.maxBytes, 'maxBytes', 1);
    // Held bytes count at most maxBytes; the uncounted CRs add at most one per completed line, and a
    // CRLF line counts at least 1, so at most min(maxLines, maxBytes) of them.
    this.capacity = this.maxBytes + Math.min(this.maxLines, this.maxBytes) + this.runLimit();
    this.data = Buffer.allocUnsafeSlow(Math.min(INITIAL_DATA_BYTES, this.capacity));
    const slots = Math.min(INITIAL_LINE_SLOTS, this.maxLines);
    this.lineStored = new Float64Array(slots);
    this.lineCounted = new Float64Array(slots);
  }

  /** Lines held, counting a non-empty open line. */
  get totalLines(): number {
    return this.count + (this.writeEnd > this.openStart ? 1 : 0);
  }

  /** UTF-8 bytes held (each line end counts as 1). */
  get byteLength(): number {
    return this.completedBytes() + this.openBytes();
  }

  /** True once anything was dropped to respect the bounds. */
  get evicted(): boolean {
    return this.dropped;
  }

  /** Monotonic sequence number of the open line (every completed line increments it). */
  get headSeq(): number {
    return this.firstSeq + this.count;
  }

  /** True when the open line holds no text (the output ends in a line end, or is empty). */
  get openLineEmpty(): boolean {
    return this.openStart === this.writeEnd;
  }

  /** The open (last, unterminated) line as it is now. */
  openLine(): string {
    return this.decode(this.openStart, this.writeEnd);
  }

  /** Appends printable text to the open line. */
  text(s: string): void {
    if (s.length === 0) return;
    let piece = s;
    let bytes = Buffer.byteLength(piece, 'utf8');
    const excess = this.openBytes() + bytes - this.maxBytes;
    if (excess > 0) {
      // Keep the tail of (open line + s) within maxBytes, cut at a character boundary.
      if (bytes >= this.maxBytes) {
        piece = keepTailBytes(piece, this.maxBytes);
        bytes = Buffer.byteLength(piece, 'utf8');
        this.openStart = this.writeEnd; // the whole open line goes
      } else {
        this.trimOpenHead(excess);
      }
      this.openTrimmed = true;
      this.dropped = true;
    }
    const open = this.openBytes() + bytes;
    this.evictFor(open > 0 ? 1 : 0, open); // what is left may be empty: a character wider than maxBytes
    if (excess > 0) this.closeGap();
    this.writeString(piece, bytes);
  }

  /** Completes the open line. */
  newline(): void {
    // A completed line also counts its line end: keep the line's tail so both fit the byte bound.
    const excess = this.openBytes() + 1 - this.maxBytes;
    if (excess > 0) {
      this.trimOpenHead(excess);
      this.openTrimmed = true;
      this.dropped = true;
    }
    if (this.openTrimmed) this.lastTrimmedSeq = this.headSeq;
    const bytes = this.openBytes() + 1;
    this.evictFor(1, bytes);
    if (excess > 0) this.closeGap();
    this.pushLine(this.openStart, this.countedEnd);
    this.makeRoom(1);
    this.data[this.writeEnd % this.data.length] = LF;
    this.writeEnd += 1;
    this.countedEnd += bytes;
    this.openStart = this.writeEnd;
    this.openTrimmed = false;
  }

  /** Sequence number of the oldest completed line held. */
  get oldestSeq(): number {
    return this.firstSeq;
  }

  /**
   * The lines from sequence number `fromSeq` on (those still held), oldest first, the open line last.
   * The terminal model reads the newest lines back when it takes the screen's lines from the ring.
   */
  linesFrom(fromSeq: number): string[] {
    const lines: string[] = [];
    for (let i = Math.max(0, fromSeq - this.firstSeq); i < this.count; i++)
      lines.push(this.decode(this.lineStart(i), this.lineContentEnd(i)));
    lines.push(this.openLine());
    return lines;
  }

  /**
   * Takes back the lines from sequence number `fromSeq` on, completed ones and the open line: what
   * follows is appended as if they had never arrived. Lines of the live region (SPEC §4.3) are held
   * here until they scroll off, and the terminal model retracts them when the screen changes them.
   */
  retract(fromSeq: number): void {
    const keep = Math.min(this.count, Math.max(0, fromSeq - this.firstSeq));
    if (keep < this.count) {
      this.openStart = this.lineStart(keep);
      this.countedEnd = this.lineCounted[this.slot(keep)]!;
      this.count = keep;
    }
    this.writeEnd = this.openStart;
    this.openTrimmed = false;
  }

  /** A carriage-return rewrite: clears the open line (what follows replaces it). */
  rewriteLine(): void {
    this.writeEnd = this.openStart;
    this.openTrimmed = false;
  }

  /**
   * Several lines at once: exactly `text` + `newline` for each `\n`-terminated piece (without the CR of
   * a CRLF line end), then `text` of the rest — but copied in runs (see {@link appendRun}), at the cost
   * of two numbers per line. `ascii`: the caller knows the block is ASCII (else it is checked).
   * `lineFeeds`: where the block's line feeds are, when the caller knows (else they are searched).
   * `utf8`: the block's UTF-8, when the caller has it (the pty's bytes): copied instead of encoded.
   */
  textBlock(block: string, ascii = false, lineFeeds?: LineFeeds, utf8?: Uint8Array): void {
    const to =
      lineFeeds === undefined
        ? block.lastIndexOf('\n') + 1
        : lineFeeds.count === 0
          ? 0
          : lineFeeds.positions[lineFeeds.count - 1]! + 1;
    if (to === 0) {
      this.text(block);
      return;
    }
    // A search for the first character beyond ASCII stops early in text that has them (where the UTF-8
    // length would have been computed over the whole block for nothing).
    const isAscii = ascii || (utf8 === undefined ? !BEYOND_ASCII.test(block) : utf8.length === block.length);
    // The common case, one read of a flood: the whole block is one run that continues the open line.
    if (isAscii && !this.openTrimmed && this.openBytes() + block.length <= this.runLimit()) {
      this.appendRun(block, 0, block.length, true, lineFeeds);
      return;
    }
    if (utf8 !== undefined && !this.openTrimmed && this.openBytes() + utf8.length <= this.runLimit()) {
      this.appendUtf8Run(utf8, utf8.length);
      return;
    }
    const first = block.indexOf('\n');
    const firstEnd = contentEnd(block, 0, first);
    if (firstEnd > 0) this.text(block.slice(0, firstEnd));
    this.newline();
    // A run's UTF-8 must fit runLimit(); a UTF-16 unit encodes to at most 3 bytes.
    const runChars = isAscii ? this.runLimit() : Math.floor(this.runLimit() / 3);
    let from = first + 1;
    while (from < to) {
      const runEnd = runChars > 0 ? block.lastIndexOf('\n', Math.min(from + runChars, to) - 1) + 1 : 0;
      if (runEnd > from) {
        this.appendRun(block, from, runEnd, isAscii);
        from = runEnd;
      } else {
        // A line too long for a run: the exact per-line path trims it.
        const lineFeed = block.indexOf('\n', from);
        const end = contentEnd(block, from, lineFeed);
        if (end > from) this.text(block.slice(from, end));
        this.newline();
        from = lineFeed + 1;
      }
    }
    if (to < block.length) this.text(block.slice(to));
  }

  /**
   * A page per SPEC §4.3: the `count` lines (default 500) that end `offset` lines back from the newest
   * (default 0), cut to `maxBytes` by dropping the page's oldest lines (`truncated`); when even the
   * newest line of the page does not fit, its tail is returned. `lineBegin`/`lineEnd` index held lines
   * (0 = oldest); an `offset` past the oldest line gives an empty page at 0.
   */
  read(request: { offset?: number; count?: number }, maxBytes: number): ReadResult {
    const offset = requireCount(request.offset ?? 0, 'offset', 0);
    const count = requireCount(request.count ?? DEFAULT_READ_COUNT, 'count', 0);
    requireCount(maxBytes, 'maxBytes', 1);
    const totalLines = this.totalLines;
    const lineEnd = Math.max(0, totalLines - offset);
    const page = this.collectNewest(Math.max(0, lineEnd - count), lineEnd, maxBytes, false);
    return { text: page.text, totalLines, lineBegin: page.begin, lineEnd, truncated: page.cut };
  }

  /** Everything held, lines joined with `\n`: each completed line followed by `\n`, then the open line. */
  toString(): string {
    const out: string[] = [];
    for (let i = 0; i < this.count; i++)
      out.push(this.decode(this.lineStart(i), this.lineContentEnd(i)), '\n');
    out.push(this.openLine());
    return out.join('');
  }

  /**
   * Output since sequence number `fromSeq`, for deltas: the completed lines with seq >= fromSeq, each
   * followed by `\n`, then the open line as it is now — at most `maxBytes`, keeping the newest (the tail
   * of the newest line when even that does not fit).
   *
   * `nextSeq` is the open line's sequence number, so the open line is returned again by the next call:
   * the text after the last `\n` of a delta is provisional. When that line grows, is rewritten by a CR
   * or completes, the next delta carries its whole current content (a partial line is repeated in full
   * once it completes; a rewritten one shows only its final content). A caller that concatenates deltas
   * should replace the previous delta's provisional tail rather than append to it.
   */
  readSince(fromSeq: number, maxBytes: number): LineDelta {
    requireCount(fromSeq, 'fromSeq', 0);
    requireCount(maxBytes, 'maxBytes', 1);
    const nextSeq = this.headSeq;
    // Index space of collectNewest: 0..count-1 completed lines, count = the open line (if non-empty).
    const first = Math.min(Math.max(0, fromSeq - this.firstSeq), this.count + 1);
    const end = fromSeq <= nextSeq ? this.totalLines : first;
    const delta = this.collectNewest(first, end, maxBytes, true);
    const truncated =
      delta.cut ||
      fromSeq < this.firstSeq ||
      this.lastTrimmedSeq >= fromSeq ||
      (this.openTrimmed && fromSeq <= nextSeq);
    return { text: delta.text, nextSeq, truncated };
  }

  /**
   * Held lines [first, end) (index `count` is the open line), newest first until `maxBytes`.
   * `terminated`: every completed line carries its `\n` (delta format); otherwise lines are joined
   * with `\n`. When not even the newest line fits, its tail is returned.
   */
  private collectNewest(
    first: number,
    end: number,
    maxBytes: number,
    terminated: boolean,
  ): { text: string; begin: number; cut: boolean } {
    const parts: string[] = [];
    let used = 0;
    let begin = end;
    let cut = false;
    for (let i = end - 1; i >= first; i--) {
      const isOpen = i === this.count;
      const newline = terminated ? !isOpen : i !== end - 1;
      const start = isOpen ? this.openStart : this.lineStart(i);
      const contentEnd = isOpen ? this.writeEnd : this.lineContentEnd(i);
      const bytes = (isOpen ? this.openBytes() : this.lineContentBytes(i)) + (newline ? 1 : 0);
      const fits = used + bytes <= maxBytes;
      if (!fits && parts.length > 0) {
        cut = true;
        break;
      }
      const from = fits
        ? start
        : this.charStartAtOrAfter(contentEnd - (maxBytes - (newline ? 1 : 0)), contentEnd);
      const line = this.decode(from, contentEnd);
      parts.push(newline ? `${line}\n` : line);
      used += bytes;
      begin = i;
      if (!fits) {
        cut = true;
        break;
      }
    }
    return { text: parts.reverse().join(''), begin, cut };
  }

  /** Counted bytes of the completed lines. */
  private completedBytes(): number {
    return this.count === 0 ? 0 : this.countedEnd - this.lineCounted[this.head]!;
  }

  /** Bytes of the open line (all of them count). */
  private openBytes(): number {
    return this.writeEnd - this.openStart;
  }

  /** Buffer slot of the completed line at index `i` (0 = oldest held). */
  private slot(i: number): number {
    const slot = this.head + i;
    return slot >= this.lineStored.length ? slot - this.lineStored.length : slot;
  }

  /** Stored position where the completed line `i` starts. */
  private lineStart(i: number): number {
    return this.lineStored[this.slot(i)]!;
  }

  /** Counted position where the completed line `i` ends, line end included. */
  private lineCountedEnd(i: number): number {
    return i + 1 === this.count ? this.countedEnd : this.lineCounted[this.slot(i + 1)]!;
  }

  /** UTF-8 bytes of the content of the completed line `i` (without its line end). */
  private lineContentBytes(i: number): number {
    return this.lineCountedEnd(i) - this.lineCounted[this.slot(i)]! - 1;
  }

  /** Stored position where the content of the completed line `i` ends (before its LF or CRLF). */
  private lineContentEnd(i: number): number {
    return this.lineStart(i) + this.lineContentBytes(i);
  }

  /** Stored position where the completed line `i` ends, its LF or CRLF included. */
  private lineStoredEnd(i: number): number {
    const end = this.lineContentEnd(i);
    return this.byteAt(end) === CR ? end + 2 : end + 1;
  }

  /**
   * After the open line lost its head, the bytes it lost lie between the completed lines and the open
   * line, still inside the span the storage must keep. Moves the completed lines up against the open
   * line, so the span is again only what is held. They are a few bytes: the open line and the new text
   * fill the byte bound to within one character (at most 3 bytes), so at most 3 completed lines of 1
   * counted byte each can remain beside them.
   */
  private closeGap(): void {
    if (this.count === 0) return;
    const start = this.lineStart(0);
    const end = this.lineStoredEnd(this.count - 1);
    const shift = this.openStart - end;
    if (shift === 0) return;
    const bytes = Buffer.from(this.copyOut(start, end)); // a copy: source and target may overlap
    const saved = this.writeEnd;
    this.writeEnd = start + shift;
    this.writeBytes(bytes, bytes.length);
    this.writeEnd = saved;
    for (let i = 0; i < this.count; i++) this.lineStored[this.slot(i)]! += shift;
  }

  /** The byte at stored position `p`. */
  private byteAt(p: number): number {
    return this.data[p % this.data.length]!;
  }

  /** The first character boundary at or after `p` (and not past `end`): skips UTF-8 continuation bytes. */
  private charStartAtOrAfter(p: number, end: number): number {
    let at = p;
    while (at < end && (this.byteAt(at) & 0xc0) === 0x80) at += 1;
    return at;
  }

  /** Drops at least `excess` bytes (whole characters) from the head of the open line. */
  private trimOpenHead(excess: number): void {
    this.openStart = this.charStartAtOrAfter(this.openStart + excess, this.writeEnd);
  }

  /**
   * Evicts the oldest completed lines until `lines` more lines and `bytes` more counted bytes (than the
   * completed lines) fit both bounds. Called before writing, so the storage never holds more than the
   * bounds allow plus the uncounted CRs plus one run.
   */
  private evictFor(lines: number, bytes: number): void {
    while (
      this.count > 0 &&
      (this.count + lines > this.maxLines || this.completedBytes() + bytes > this.maxBytes)
    ) {
      this.evictOldest();
    }
  }

  /** Drops the oldest completed line: O(1), its bytes are simply no longer referenced. */
  private evictOldest(): void {
    this.head = this.head + 1 === this.lineStored.length ? 0 : this.head + 1;
    this.count -= 1;
    this.firstSeq += 1;
    this.dropped = true;
  }

  /** Adds a completed line starting at the given positions (the index has room for `maxLines`). */
  private pushLine(stored: number, counted: number): void {
    if (this.count === this.lineStored.length) this.growIndex();
    const slot = this.slot(this.count);
    this.lineStored[slot] = stored;
    this.lineCounted[slot] = counted;
    this.count += 1;
  }

  /**
   * Appends `block[from, end)` in one copy: its first line continues the open line, each `\n` completes
   * a line (recording its two start positions, evicting as lines arrive), and what follows the last
   * `\n` is the new open line — exactly as `text` + `newline` per line would. The caller makes sure
   * nothing needs trimming and the storage has room: the open line (not trimmed) and the run are at
   * most `runLimit()` bytes together. `lineFeeds`: the line feeds of `block` (used when the run is all of it).
   */
  private appendRun(block: string, from: number, end: number, ascii: boolean, lineFeeds?: LineFeeds): void {
    const base = this.writeEnd;
    // Only a CR right before an LF belongs to the line end; the open line never ends in a CR.
    if (ascii) {
      const run = from === 0 && end === block.length ? block : block.slice(from, end);
      this.makeRoom(run.length);
      this.writeLatin1(run);
      // One byte per character: a line feed at `lf` ends its line at stored position base + lf + 1.
      // The caller's line feeds index `block`, so they serve only a run of all of it.
      if (lineFeeds !== undefined && run === block) {
        const { positions, count } = lineFeeds;
        for (let k = 0; k < count; k++) {
          const lf = positions[k]!;
          this.endRunLine(base + lf + 1, lf > 0 && run.charCodeAt(lf - 1) === CR);
        }
      } else {
        for (let lf = run.indexOf('\n'); lf !== -1; lf = run.indexOf('\n', lf + 1))
          this.endRunLine(base + lf + 1, lf > 0 && run.charCodeAt(lf - 1) === CR);
      }
      const open = this.openBytes();
      this.evictFor(open > 0 ? 1 : 0, open);
    } else {
      const scratch = this.scratch();
      this.appendUtf8Run(scratch, scratch.write(block.slice(from, end), 0, 'utf8'));
    }
  }

  /** {@link appendRun} of the UTF-8 `bytes[0, size)`, under the same conditions. */
  private appendUtf8Run(bytes: Uint8Array, size: number): void {
    const base = this.writeEnd;
    this.makeRoom(size);
    this.writeBytes(bytes, size);
    for (let lf = bytes.indexOf(LF); lf !== -1 && lf < size; lf = bytes.indexOf(LF, lf + 1))
      this.endRunLine(base + lf + 1, lf > 0 && bytes[lf - 1] === CR);
    const open = this.openBytes();
    this.evictFor(open > 0 ? 1 : 0, open);
  }

  /**
   * A line of a run ends at stored position `lineEnd` (just past its LF); `crlf`: it ends in CRLF, which
   * counts as one byte. At `maxLines` the oldest line goes first, else the index grows as needed.
   */
  private endRunLine(lineEnd: number, crlf: boolean): void {
    if (this.count === this.lineStored.length) this.makeIndexRoom();
    this.pushLine(this.openStart, this.countedEnd);
    this.countedEnd += lineEnd - this.openStart - (crlf ? 1 : 0);
    this.openStart = lineEnd;
  }

  /** Room in the index for one more line of a run: it grows, or at `maxLines` the oldest line goes. */
  private makeIndexRoom(): void {
    if (this.count === this.maxLines) this.evictOldest();
    else this.growIndex();
  }

  /** Scratch for the UTF-8 of one run. */
  private scratch(): Buffer {
    if (this.runScratch === undefined) this.runScratch = Buffer.allocUnsafeSlow(this.runLimit());
    return this.runScratch;
  }

  /** Most bytes of one run. */
  private runLimit(): number {
    return Math.min(RUN_BYTES, this.maxBytes);
  }

  /** Appends `s` (`bytes` UTF-8 bytes) at `writeEnd`. */
  private writeString(s: string, bytes: number): void {
    this.makeRoom(bytes);
    if (bytes === s.length) this.writeLatin1(s);
    else this.writeBytes(Buffer.from(s, 'utf8'), bytes);
  }

  /** Appends ASCII `s` at `writeEnd` (the room was made). */
  private writeLatin1(s: string): void {
    const size = this.data.length;
    const at = this.writeEnd % size;
    const first = Math.min(s.length, size - at);
    this.data.write(first === s.length ? s : s.slice(0, first), at, 'latin1');
    if (first < s.length) this.data.write(s.slice(first), 0, 'latin1');
    this.writeEnd += s.length;
  }

  /** Appends `bytes[0, length)` at `writeEnd` (the room was made). */
  private writeBytes(bytes: Uint8Array, length: number): void {
    const size = this.data.length;
    const at = this.writeEnd % size;
    const first = Math.min(length, size - at);
    this.data.set(bytes.subarray(0, first), at);
    if (first < length) this.data.set(bytes.subarray(first, length), 0);
    this.writeEnd += length;
  }

  /**
   * Makes sure `bytes` more fit after `writeEnd` without overwriting a held byte, growing the storage
   * (doubling, up to `capacity`) when they do not. The bounds guarantee the capacity suffices.
   */
  private makeRoom(bytes: number): void {
    const oldest = this.count > 0 ? this.lineStart(0) : this.openStart;
    const needed = this.writeEnd - oldest + bytes;
    if (needed <= this.data.length) return;
    if (needed > this.capacity)
      throw new Error(`LineRing: ${needed} bytes exceed the capacity ${this.capacity}`);
    const grown = Buffer.allocUnsafeSlow(Math.min(this.capacity, Math.max(this.data.length * 2, needed)));
    const live = this.copyOut(oldest, this.writeEnd);
    const at = oldest % grown.length;
    const first = Math.min(live.length, grown.length - at);
    grown.set(live.subarray(0, first), at);
    grown.set(live.subarray(first), 0);
    this.data = grown;
  }

  /** The stored bytes [from, to) as one contiguous view (a copy only where they wrap). */
  private copyOut(from: number, to: number): Buffer {
    const size = this.data.length;
    const at = from % size;
    const length = to - from;
    if (at + length <= size) return this.data.subarray(at, at + length);
    return Buffer.concat([this.data.subarray(at), this.data.subarray(0, length - (size - at))]);
  }

  /** The text of the stored bytes [from, to). */
  private decode(from: number, to: number): string {
    if (to <= from) return '';
    return this.copyOut(from, to).toString('utf8');
  }

  /** Doubles the index (up to maxLines), unrolling it so the oldest line is at slot 0. */
  private growIndex(): void {
    const slots = Math.min(this.lineStored.length * 2, this.maxLines);
    const stored = new Float64Array(slots);
    const counted = new Float64Array(slots);
    for (let i = 0; i < this.count; i++) {
      const slot = this.slot(i);
      stored[i] = this.lineStored[slot]!;
      counted[i] = this.lineCounted[slot]!;
    }
    this.lineStored = stored;
    this.lineCounted = counted;
    this.head = 0;
  }
}

/** Validates a non-negative integer argument (at least `min`). */
function requireCount(value: number, name: string, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new TerminalError('INVALID_ARGUMENT', `${name} must be an integer >= ${min}, got ${String(value)}`);
  }
  return value;
}

/**
 * The longest suffix of `s` that is at most `maxBytes` UTF-8 bytes, cut at a character boundary
 * (a surrogate pair is never split).
 */
function keepTailBytes(s: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  let bytes = 0;
  let i = s.length;
  while (i > 0) {
    const code = s.charCodeAt(i - 1);
    let width = 1;
    let units = 1;
    if (code >= 0x80) {
      if (code < 0x800) width = 2;
      else if (code >= 0xdc00 && code <= 0xdfff && i >= 2) {
        const high = s.charCodeAt(i - 2);
        if (high >= 0xd800 && high <= 0xdbff) {
          width = 4;
          units = 2;
        } else width = 3;
      } else width = 3; // BMP character, or a lone surrogate (encoded as U+FFFD)
    }
    if (bytes + width > maxBytes) break;
    bytes += width;
    i -= units;
  }
  return i === 0 ? s : s.slice(i);
}

/** End of the content of the line `block[lineStart, lineFeed)`: before the CR of a CRLF line end. */
function contentEnd(block: string, lineStart: number, lineFeed: number): number {
  return lineFeed > lineStart && block.charCodeAt(lineFeed - 1) === CR ? lineFeed - 1 : lineFeed;
}
