/**
 * A send's view of the session's output: everything the scrollback received since a mark. The send's
 * viewport and its `readOutput()` deltas are read from the one scrollback ring instead of a second copy
 * of every line, so a flood pays for one ring, not two.
 */
import type { LineRing } from './line-ring.js';

/** What holds the screen's lines in the ring for readers (the terminal model). */
export interface OutputView {
  /** Makes the ring end with what the screen shows. */
  sync(): void;
  /** A counter that {@link rewrittenSince} takes. */
  readonly rewriteEpoch: number;
  /** The lowest sequence number of a line rewritten after `epoch`, or Infinity. */
  rewrittenSince(epoch: number): number;
}

/** A position in the output stream. */
export interface OutputMark {
  /** Sequence number of the line that was open at the mark. */
  readonly seq: number;
  /** That line's content at the mark: output from before the mark, not part of what follows it. */
  readonly prefix: string;
  /** The terminal model's rewrite count at the mark: lines redrawn since then are read again. */
  readonly epoch: number;
}

/** Text since a mark. */
export interface OutputSince {
  /** The text, newest kept within the byte bound. */
  text: string;
  /** Older output since the mark was dropped (byte bound, or evicted from the scrollback). */
  truncated: boolean;
  /** Lines since the mark of which `text` holds nothing (0 unless `truncated`; a line cut short counts as held). */
  omittedLines: number;
  /** Mark for the next read, right after this text. */
  next: OutputMark;
}

/** Reads output since marks from the session's scrollback. */
export class OutputWindow {
  constructor(
    private readonly ring: LineRing,
    private readonly model?: OutputView,
  ) {}

  /** True when the output ends in an unterminated line with text on it (a prompt, a partial line). */
  endsInPartialLine(): boolean {
    this.model?.sync(); // the live region may hold the open line until synced
    return !this.ring.openLineEmpty;
  }

  /** The current end of the output. */
  mark(): OutputMark {
    this.model?.sync();
    return this.markNow();
  }

  /**
   * Output after `mark`, at most `maxBytes` (newest kept). The line open at the mark is included from
   * where the mark left it — unless a carriage-return rewrite replaced it since, then in full.
   */
  since(mark: OutputMark, maxBytes: number): OutputSince {
    this.model?.sync();
    // A line of the live region redrawn since the mark (multi-line progress) is read again in full.
    const rewritten = this.model?.rewrittenSince(mark.epoch) ?? Number.POSITIVE_INFINITY;
    const fromSeq = Math.min(mark.seq, rewritten);
    const prefix = fromSeq < mark.seq ? '' : mark.prefix;
    const delta = this.ring.readSince(fromSeq, maxBytes + Buffer.byteLength(prefix));
    let text = delta.text;
    let truncated = delta.truncated;
    if (prefix !== '' && !truncated && text.startsWith(prefix)) text = text.slice(prefix.length);
    if (Buffer.byteLength(text) > maxBytes) {
      text = keepTail(text, maxBytes);
      truncated = true;
    }
    const next = this.markNow();
    // Lines fromSeq…next.seq (the open one included) against those the kept text holds, in whole or in part.
    const omittedLines = truncated ? Math.max(0, next.seq - fromSeq + 1 - (newlineCount(text) + 1)) : 0;
    return { text, truncated, omittedLines, next };
  }

  private markNow(): OutputMark {
    return { seq: this.ring.headSeq, prefix: this.ring.openLine(), epoch: this.model?.rewriteEpoch ?? 0 };
  }
}

/** How many `\n` `text` holds. */
function newlineCount(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

/** The longest tail of `text` within `maxBytes` UTF-8 bytes (whole characters): O(bytes dropped). */
function keepTail(text: string, maxBytes: number): string {
  let excess = Buffer.byteLength(text) - maxBytes;
  let start = 0;
  while (excess > 0 && start < text.length) {
    const code = text.codePointAt(start)!;
    const width = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    excess -= width;
    start += code >= 0x10000 ? 2 : 1;
  }
  return text.slice(start);
}
