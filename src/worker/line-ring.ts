/**
 * The scrollback (SPEC §4.3): a bounded ring of lines fed by the sanitizer. It keeps the newest
 * `maxLines` lines within `maxBytes` UTF-8 bytes, and every append costs O(size of the appended text):
 * completed lines sit in a circular buffer with a running byte count, the open (last, unterminated)
 * line is a short queue of pieces, and nothing ever re-splits or re-joins the whole store.
 *
 * Byte accounting: a line costs its UTF-8 length, plus 1 for its `\n` once completed, so
 * `byteLength` equals the UTF-8 length of `toString()`.
 *
 * Memory: the sanitizer hands over slices of the chunks it was pushed, and in V8 a slice keeps its
 * whole parent string alive. Held text is therefore copied out of those chunks in batches (completed
 * lines every {@link DETACH_BATCH_LINES} lines or {@link DETACH_BATCH_CHARS} characters, open-line
 * pieces as they age), so that sparse text cut from huge chunks full of escape sequences cannot pin
 * more than a few chunks beyond `maxBytes`.
 */
import { TerminalError } from '../shared/errors.js';
import type { ReadResult } from '../shared/types.js';
import type { SanitizerSink } from './sanitizer.js';

/** Lines a page holds when the request names no count (SPEC §4.3). */
export const DEFAULT_READ_COUNT = 500;

/** Completed-line slots allocated up front; the buffer doubles up to `maxLines` so idle sessions stay small. */
const INITIAL_CAPACITY = 64;

/**
 * Completed lines are copied out of their chunks (joined into one block) once this many are waiting:
 * bounds the chunks they can pin, while one join per batch costs far less than a copy per line.
 */
const DETACH_BATCH_LINES = 16;

/** ... or once the waiting lines hold this many characters (bounds the size of one block). */
const DETACH_BATCH_CHARS = 16 * 1024;

/**
 * Pieces of the open line merge while the last one is shorter than this, so a line built from many
 * tiny writes (a spinner, `yes | tr -d '\n'` read byte by byte) stays a short queue of pieces.
 */
const OPEN_PIECE_MERGE_BYTES = 8 * 1024;

/** The merged last piece of the open line is copied after this many merges (bounds the chunks it pins). */
const OPEN_PIECE_MAX_MERGES = 8;

/** V8 copies substrings shorter than this anyway (its SlicedString minimum is 13). */
const DETACH_MIN_LENGTH = 13;

/** Options of {@link LineRing}. */
export interface LineRingOptions {
  /** Most lines held (the open line counts when it is not empty). */
  maxLines: number;
  /** Most UTF-8 bytes held (each `\n` counts as 1). */
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
 * Bounded line store that implements the text half of {@link SanitizerSink}. Lines are indexed two
 * ways: `read` pages by position among the held lines (0 = oldest), `readSince` by a monotonic
 * sequence number that survives eviction (for deltas of a send's output).
 */
export class LineRing implements Pick<SanitizerSink, 'text' | 'newline' | 'rewriteLine' | 'textBlock'> {
  private readonly maxLines: number;
  private readonly maxBytes: number;

  // Completed lines: a circular buffer of slots, oldest at `head`. A slot holds either the line itself
  // (`lineStart` -1, still waiting to be copied) or the block it was copied into, with its offset.
  private lines: string[];
  private lineStart: number[];
  private lineChars: number[];
  private lineBytes: number[];
  private head = 0;
  private count = 0;
  /** Sum over completed lines of (UTF-8 bytes + 1 for the `\n`). */
  private completedBytes = 0;
  /** Sequence number of the oldest completed line held. */
  private firstSeq = 0;
  /** The newest `waiting` completed lines are not copied into a block yet; they hold `waitingChars`. */
  private waiting = 0;
  private waitingChars = 0;

  private readonly open = new OpenLine();
  /** Sequence number of the newest completed line that lost its head to the byte bound (-1: none). */
  private lastTrimmedSeq = -1;
  private dropped = false;
  /** Scratch of {@link appendLines}: start, UTF-8 size and length of each kept line, newest first. */
  private readonly scratchStarts: number[] = [];
  private readonly scratchBytes: number[] = [];
  private readonly scratchChars: number[] = [];
  private scratchEnds: Int32Array | undefined;

  constructor(options: LineRingOptions) {
    this.maxLines = requireCount(options.maxLines, 'maxLines', 1);
    this.maxBytes = requireCount(options.maxBytes, 'maxBytes', 1);
    const capacity = Math.min(INITIAL_CAPACITY, this.maxLines);
    this.lines = new Array<string>(capacity).fill('');
    this.lineStart = new Array<number>(capacity).fill(-1);
    this.lineChars = new Array<number>(capacity).fill(0);
    this.lineBytes = new Array<number>(capacity).fill(0);
  }

  /** Lines held, counting a non-empty open line. */
  get totalLines(): number {
    return this.count + (this.open.bytes > 0 ? 1 : 0);
  }

  /** UTF-8 bytes held (each `\n` counts as 1). */
  get byteLength(): number {
    return this.completedBytes + this.open.bytes;
  }

  /** True once anything was dropped to respect the bounds. */
  get evicted(): boolean {
    return this.dropped;
  }

  /**
   * Several lines at once: exactly `text` + `newline` for each `\n`-terminated piece (without the CR of
   * a CRLF line end), then `text` of the rest, but the lines after the first `\n` cost O(1) each and
   * only those that can survive the bounds are stored (see {@link appendLines}).
   */
  textBlock(block: string): void {
    const first = block.indexOf('\n');
    if (first === -1) {
      this.text(block);
      return;
    }
    const firstEnd = contentEnd(block, 0, first);
    if (firstEnd > 0) this.text(block.slice(0, firstEnd));
    this.newline();
    let end = first + 1;
    if (end < block.length) {
      end = this.appendLines(block, end, block.length, Buffer.byteLength(block, 'utf8') === block.length);
    }
    if (end < block.length) this.text(block.slice(end));
  }

  /** The open (last, unterminated) line as it is now. */
  openLine(): string {
    return this.open.text();
  }

  /** Monotonic sequence number of the open line (every completed line increments it). */
  get headSeq(): number {
    return this.firstSeq + this.count;
  }

  /** Appends printable text to the open line. */
  text(s: string): void {
    if (s.length === 0) return;
    const open = this.open;
    open.append(s, Buffer.byteLength(s, 'utf8'));
    if (open.bytes > this.maxBytes) {
      open.trimHead(open.bytes - this.maxBytes);
      this.dropped = true;
    }
    this.enforceBounds();
  }

  /** Completes the open line. */
  newline(): void {
    const open = this.open;
    // A completed line also costs its `\n`: keep the line's tail so line plus `\n` fit the byte bound.
    if (open.bytes + 1 > this.maxBytes) {
      open.trimHead(open.bytes + 1 - this.maxBytes);
      this.dropped = true;
    }
    if (open.trimmed) this.lastTrimmedSeq = this.headSeq;
    const bytes = open.bytes;
    const line = open.take();
    // The new line would exceed maxLines: evict first, so the buffer never needs maxLines + 1 slots.
    if (this.count === this.maxLines) this.evictOldest();
    if (this.count === this.lines.length) this.grow();
    const slot = this.slot(this.count);
    this.lines[slot] = line;
    this.lineStart[slot] = -1;
    this.lineChars[slot] = line.length;
    this.lineBytes[slot] = bytes;
    this.count += 1;
    this.completedBytes += bytes + 1;
    this.waiting += 1;
    this.waitingChars += line.length;
    this.enforceBounds();
    if (this.waiting >= DETACH_BATCH_LINES || this.waitingChars >= DETACH_BATCH_CHARS) this.detachWaiting();
  }

  /** A carriage-return rewrite: clears the open line (what follows replaces it). */
  rewriteLine(): void {
    this.open.take();
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
    for (let i = 0; i < this.count; i++) out.push(this.lineAt(i), '\n');
    out.push(this.open.text());
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
      (this.open.trimmed && fromSeq <= nextSeq);
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
      const bytes = (isOpen ? this.open.bytes : this.lineBytes[this.slot(i)]!) + (newline ? 1 : 0);
      const fits = used + bytes <= maxBytes;
      if (!fits && parts.length > 0) {
        cut = true;
        break;
      }
      const whole = isOpen ? this.open.text() : this.lineAt(i);
      const line = fits ? whole : keepTailBytes(whole, maxBytes - (newline ? 1 : 0));
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

  /** The completed line at index `i` (0 = oldest held). */
  private lineAt(i: number): string {
    const slot = this.slot(i);
    const start = this.lineStart[slot]!;
    const line = this.lines[slot]!;
    return start < 0 ? line : line.slice(start, start + this.lineChars[slot]!);
  }

  /** Buffer slot of the completed line at index `i` (0 = oldest held). */
  private slot(i: number): number {
    const slot = this.head + i;
    return slot >= this.lines.length ? slot - this.lines.length : slot;
  }

  /**
   * Completes the `\n`-terminated lines of `block[from, limit)` (the open line is empty; a CR right
   * before a `\n` belongs to the line end) and returns the index after the last such `\n` (`from` if
   * none). Equivalent to `text` + `newline` per line:
   * the ring ends up with the newest lines that fit both bounds, and a line that would be evicted
   * within the block is never stored. One forward `indexOf` pass finds the line ends (only the newest
   * `maxLines + 1` are remembered), then the newest lines are taken while they fit. UTF-8 sizes come
   * from one `Buffer.byteLength` of the block when it is ASCII (`ascii`). Kept lines point into the
   * block when they are a large share of it, else into one copy of their part (a few lines must not
   * pin a big block).
   */
  private appendLines(block: string, from: number, limit: number, ascii: boolean): number {
    // `ends` is circular; indices wrap by comparison (an integer `%` per line costs more than the rest).
    const ends = this.lineEnds();
    const cap = ends.length;
    let n = 0;
    let write = 0;
    for (let i = block.indexOf('\n', from); i !== -1 && i < limit; i = block.indexOf('\n', i + 1)) {
      ends[write] = i;
      write = write + 1 === cap ? 0 : write + 1;
      n += 1;
    }
    if (n === 0) return from;
    let end = write === 0 ? cap - 1 : write - 1; // slot of the newest line's `\n`
    const to = ends[end]! + 1;
    const starts = this.scratchStarts;
    const sizes = this.scratchBytes;
    const chars = this.scratchChars;
    let kept = 0;
    let keptBytes = 0;
    while (kept < n && kept < this.maxLines) {
      const k = n - 1 - kept;
      const previous = end === 0 ? cap - 1 : end - 1;
      const lineStart = k === 0 ? from : ends[previous]! + 1;
      const lineFeed = ends[end]!;
      end = previous;
      const lineEnd = contentEnd(block, lineStart, lineFeed);
      const bytes = ascii ? lineEnd - lineStart : Buffer.byteLength(block.slice(lineStart, lineEnd), 'utf8');
      if (keptBytes + bytes + 1 > this.maxBytes) {
        if (bytes + 1 > this.maxBytes) {
          // A line over the byte bound by itself is trimmed, and where a character boundary leaves it
          // a few bytes short, lines before and after it may still fit: take the exact slow path for
          // it alone, the fast one for the lines on either side (computed before `ends` is reused).
          if (lineStart > from) this.appendLines(block, from, lineStart, ascii);
          this.text(block.slice(lineStart, lineEnd));
          this.newline();
          if (lineFeed + 1 < to) this.appendLines(block, lineFeed + 1, to, ascii);
          return to;
        }
        break;
      }
      starts[kept] = lineStart;
      sizes[kept] = bytes;
      chars[kept] = lineEnd - lineStart;
      kept += 1;
      keptBytes += bytes + 1;
    }
    this.detachWaiting();
    if (kept < n) {
      this.skipLines(n - kept);
    } else {
      while (
        this.count > 0 &&
        (this.count + kept > this.maxLines || this.completedBytes + keptBytes > this.maxBytes)
      ) {
        this.evictOldest();
      }
    }
    while (this.count + kept > this.lines.length) this.grow();
    const begin = starts[kept - 1]!;
    let store = block;
    let base = 0;
    if ((to - begin) * 2 < block.length) {
      store = detach(block.slice(begin, to));
      base = begin;
    }
    for (let k = kept - 1; k >= 0; k--) {
      const slot = this.slot(this.count);
      const lineStart = starts[k]!;
      this.lines[slot] = store;
      this.lineStart[slot] = lineStart - base;
      this.lineChars[slot] = chars[k]!;
      this.lineBytes[slot] = sizes[k]!;
      this.count += 1;
    }
    this.completedBytes += keptBytes;
    return to;
  }

  /** Scratch of {@link appendLines}: the newest `maxLines + 1` line ends of a block (circular). */
  private lineEnds(): Int32Array {
    if (this.scratchEnds === undefined) this.scratchEnds = new Int32Array(this.maxLines + 1);
    return this.scratchEnds;
  }

  /**
   * Accounts `n` lines that were completed and evicted within one block: everything held is older than
   * they are, so it goes too.
   */
  private skipLines(n: number): void {
    if (n === 0) return;
    this.detachWaiting();
    while (this.count > 0) this.evictOldest();
    this.firstSeq += n;
    this.dropped = true;
  }

  /** Copies the waiting lines into one block string and points their slots at it. */
  private detachWaiting(): void {
    const first = this.count - this.waiting;
    if (this.waiting === 1) {
      const slot = this.slot(first);
      this.lines[slot] = detach(this.lines[slot]!);
    } else if (this.waiting > 1) {
      const parts = new Array<string>(this.waiting);
      for (let k = 0; k < this.waiting; k++) parts[k] = this.lines[this.slot(first + k)]!;
      const block = parts.join(''); // one new flat string: the copy
      let offset = 0;
      for (let k = 0; k < this.waiting; k++) {
        const slot = this.slot(first + k);
        this.lines[slot] = block;
        this.lineStart[slot] = offset;
        offset += this.lineChars[slot]!;
      }
    }
    this.waiting = 0;
    this.waitingChars = 0;
  }

  /** Evicts the oldest completed lines until both bounds hold. */
  private enforceBounds(): void {
    const openLines = this.open.bytes > 0 ? 1 : 0;
    while (
      this.count > 0 &&
      (this.count + openLines > this.maxLines || this.completedBytes + this.open.bytes > this.maxBytes)
    ) {
      this.evictOldest();
    }
  }

  /** Drops the oldest completed line. */
  private evictOldest(): void {
    const slot = this.head;
    this.completedBytes -= this.lineBytes[slot]! + 1;
    this.lines[slot] = ''; // release the string (or the block's share) now, not when the slot is reused
    this.head = slot + 1 === this.lines.length ? 0 : slot + 1;
    this.count -= 1;
    if (this.waiting > this.count) {
      this.waitingChars -= this.lineChars[slot]!;
      this.waiting = this.count;
    }
    this.firstSeq += 1;
    this.dropped = true;
  }

  /** Doubles the completed-line buffer (up to maxLines), unrolling the ring so the oldest is at 0. */
  private grow(): void {
    const capacity = Math.min(this.lines.length * 2, this.maxLines);
    const lines = new Array<string>(capacity).fill('');
    const lineStart = new Array<number>(capacity).fill(-1);
    const lineChars = new Array<number>(capacity).fill(0);
    const lineBytes = new Array<number>(capacity).fill(0);
    for (let i = 0; i < this.count; i++) {
      const slot = this.slot(i);
      lines[i] = this.lines[slot]!;
      lineStart[i] = this.lineStart[slot]!;
      lineChars[i] = this.lineChars[slot]!;
      lineBytes[i] = this.lineBytes[slot]!;
    }
    this.lines = lines;
    this.lineStart = lineStart;
    this.lineChars = lineChars;
    this.lineBytes = lineBytes;
    this.head = 0;
  }
}

/**
 * The open (last, unterminated) line: a queue of pieces with their UTF-8 sizes. Appends merge into
 * the last piece while it is small, so a line built from many tiny writes stays a short queue, and a
 * long line is trimmed from the head piece by piece — both in O(size of the change). Pieces leaving
 * the merge slot are copied out of their chunks (each character at most once).
 */
class OpenLine {
  /** UTF-8 bytes of the whole line. */
  bytes = 0;
  /** The line lost its head to the byte bound. */
  trimmed = false;
  /** Pieces before `last`, oldest at `start`; empty unless the line outgrew one merge unit. */
  private older: string[] = [];
  private olderBytes: number[] = [];
  private start = 0;
  private last = '';
  private lastBytes = 0;
  private lastMerges = 0;

  /** Appends `s` (`bytes` UTF-8 bytes). */
  append(s: string, bytes: number): void {
    if (this.lastBytes === 0) {
      this.last = s;
      this.lastBytes = bytes;
    } else if (this.lastBytes + bytes <= OPEN_PIECE_MERGE_BYTES) {
      this.last += s;
      this.lastBytes += bytes;
      this.lastMerges += 1;
      if (this.lastMerges >= OPEN_PIECE_MAX_MERGES) {
        this.last = detach(this.last);
        this.lastMerges = 0;
      }
    } else {
      this.older.push(detach(this.last));
      this.olderBytes.push(this.lastBytes);
      this.last = s;
      this.lastBytes = bytes;
      this.lastMerges = 0;
    }
    this.bytes += bytes;
  }

  /** The whole line; collapses the pieces into one so repeated reads stay cheap. */
  text(): string {
    if (this.start < this.older.length) {
      this.older.push(this.last);
      this.last = this.older.slice(this.start).join('');
      this.lastBytes = this.bytes;
      this.lastMerges = 0;
      this.older = [];
      this.olderBytes = [];
      this.start = 0;
    }
    return this.last;
  }

  /** Returns the whole line and empties it. */
  take(): string {
    const line = this.text();
    this.last = '';
    this.lastBytes = 0;
    this.lastMerges = 0;
    this.bytes = 0;
    this.trimmed = false;
    return line;
  }

  /** Drops at least `excess` bytes (whole characters) from the head of the line. */
  trimHead(excess: number): void {
    let remaining = excess;
    while (remaining > 0 && this.start < this.older.length) {
      const bytes = this.olderBytes[this.start]!;
      if (bytes > remaining) {
        const kept = dropHead(this.older[this.start]!, bytes, remaining);
        this.older[this.start] = kept.text;
        this.olderBytes[this.start] = kept.bytes;
        this.bytes -= bytes - kept.bytes;
        remaining = 0;
        break;
      }
      this.older[this.start] = '';
      this.start += 1;
      this.bytes -= bytes;
      remaining -= bytes;
    }
    if (remaining > 0) {
      const kept = dropHead(this.last, this.lastBytes, remaining);
      this.bytes -= this.lastBytes - kept.bytes;
      this.last = kept.text;
      this.lastBytes = kept.bytes;
    }
    // Compact once the dropped prefix dominates, so the queue stays proportional to the line.
    if (this.start > 32 && this.start * 2 > this.older.length) {
      this.older = this.older.slice(this.start);
      this.olderBytes = this.olderBytes.slice(this.start);
      this.start = 0;
    }
    this.trimmed = true;
  }
}

/** `piece` (of `bytes` UTF-8 bytes) without at least `excess` bytes at its head. */
function dropHead(piece: string, bytes: number, excess: number): { text: string; bytes: number } {
  if (excess >= bytes) return { text: '', bytes: 0 };
  const kept =
    piece.length === bytes
      ? { text: piece.slice(excess), bytes: bytes - excess }
      : dropHeadBytes(piece, bytes, excess);
  // A short slice of a long piece would pin the long one: copy it (costs no more than the drop did).
  if (kept.text.length * 2 < piece.length) kept.text = detach(kept.text);
  return kept;
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

/**
 * `s` (of `bytes` UTF-8 bytes) without its first characters that make up at least `excess` bytes.
 * Walks only the dropped characters, so trimming costs what it removes.
 */
function dropHeadBytes(s: string, bytes: number, excess: number): { text: string; bytes: number } {
  let dropped = 0;
  let i = 0;
  while (dropped < excess && i < s.length) {
    const code = s.charCodeAt(i);
    if (code < 0x80) dropped += 1;
    else if (code < 0x800) dropped += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < s.length) {
      const low = s.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        dropped += 4;
        i += 1;
      } else dropped += 3;
    } else dropped += 3; // BMP character, or a lone surrogate (encoded as U+FFFD)
    i += 1;
  }
  return { text: s.slice(i), bytes: bytes - dropped };
}

/**
 * A copy of `s` that shares no memory with the string it was sliced from. A slice keeps its whole
 * parent alive; lines of sparse text cut from big chunks full of escape sequences could otherwise pin
 * far more memory than `maxBytes`. (Concatenating builds a new flat string; V8 has no direct copy.)
 */
function detach(s: string): string {
  return s.length < DETACH_MIN_LENGTH ? s : ` ${s}`.slice(1);
}

/** End of the content of the line `block[lineStart, lineFeed)`: before the CR of a CRLF line end. */
function contentEnd(block: string, lineStart: number, lineFeed: number): number {
  return lineFeed > lineStart && block.charCodeAt(lineFeed - 1) === 0x0d ? lineFeed - 1 : lineFeed;
}
