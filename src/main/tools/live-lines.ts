/**
 * Live output of a running send as batches of whole lines (SPEC §7, MCP progress): the session's live
 * chunks go in, and at most every {@link LIVE_LINES_INTERVAL_MS} the lines completed since the last
 * batch come out, each batch bounded (the newest lines kept). Progress-bar rewrites (`\r`) leave only
 * a line's final state; a partial line waits for its newline (the send's result carries it).
 */
import { DisposableSlot, DisposableStore } from '../../shared/lifecycle.js';
import type { OutputChunk } from '../../shared/types.js';
import { capTail } from './result-cap.js';

/**
 * Shortest gap between two batches: a person watching sees a build scroll by, and a flood still makes
 * only a few notifications a second.
 */
export const LIVE_LINES_INTERVAL_MS = 300;
/** Largest batch in UTF-8 bytes (newest lines kept): a progress message is a glance, not a log. */
export const LIVE_LINES_MAX_BYTES = 8 * 1024;
/**
 * Pending text held between two batches at most (characters): a flood between two ticks is cut to its
 * tail here, so memory stays bounded whatever the output rate.
 */
const PENDING_MAX_CHARS = 4 * LIVE_LINES_MAX_BYTES;

/** One batch: the text of the new lines, and how many lines have been seen in total so far. */
export interface LiveLinesBatch {
  /** New complete lines joined with `\n` (preceded by a note when some were skipped). */
  text: string;
  /** Lines seen since the batcher started, including skipped ones; grows with every batch. */
  linesSoFar: number;
}

/** Collects live chunks and emits batches of complete lines on a timer; `dispose()` stops it. */
export class LiveLinesBatcher {
  private pending = '';
  private skippedLines = 0;
  private droppedChars = 0;
  private linesSoFar = 0;
  /** The batch timer; disposed with the batcher. */
  private readonly owned = new DisposableStore();
  /** The next batch's timer, armed by the first chunk after a batch. */
  private readonly nextBatch = this.owned.add(new DisposableSlot());

  constructor(private readonly emit: (batch: LiveLinesBatch) => void) {}

  /** Takes one live chunk (the session's `onOutput` listener). */
  readonly push = (chunk: OutputChunk): void => {
    if (this.owned.disposed) return;
    this.droppedChars += chunk.dropped;
    this.pending += chunk.text;
    if (this.pending.length > PENDING_MAX_CHARS) this.trimPending();
    if (this.nextBatch.value === undefined) {
      this.nextBatch.value = this.owned.timeout('live lines batch', LIVE_LINES_INTERVAL_MS, this.flush);
    }
  };

  /** Stops: pending text is discarded (the send's result holds it) and no batch follows. */
  dispose(): void {
    this.owned.dispose();
    this.pending = '';
  }

  private readonly flush = (): void => {
    this.nextBatch.clear(); // fired: the next chunk arms the next one
    if (this.owned.disposed) return;
    const end = this.pending.lastIndexOf('\n');
    if (end === -1) return; // only a partial line: the next chunk re-arms the timer
    const lines = this.pending.slice(0, end).split('\n').map(finalStateOfLine);
    this.pending = this.pending.slice(end + 1);
    this.linesSoFar += lines.length;
    const capped = capTail(lines.join('\n'), LIVE_LINES_MAX_BYTES);
    const skipped = this.skippedLines + capped.droppedLines;
    const notes = [
      ...(skipped > 0 ? [`[… ${skipped} lines skipped; terminal_read pages the scrollback]`] : []),
      ...(this.droppedChars > 0 ? [`[… ${this.droppedChars} characters of live output dropped]`] : []),
    ];
    this.skippedLines = 0;
    this.droppedChars = 0;
    try {
      this.emit({ text: [...notes, capped.text].join('\n'), linesSoFar: this.linesSoFar });
    } catch (emitFailed) {
      // A failing consumer loses this batch only; the send it watches is unaffected.
      void emitFailed;
    }
  };

  /** Cuts the pending text to its newest part, at a line start where there is one; counts what went. */
  private trimPending(): void {
    let cut = this.pending.length - LIVE_LINES_MAX_BYTES;
    const lineStart = this.pending.indexOf('\n', cut);
    if (lineStart !== -1 && lineStart + 1 < this.pending.length) cut = lineStart + 1;
    let lines = 0;
    for (
      let at = this.pending.indexOf('\n');
      at !== -1 && at < cut;
      at = this.pending.indexOf('\n', at + 1)
    ) {
      lines++;
    }
    this.skippedLines += lines;
    this.linesSoFar += lines;
    this.pending = this.pending.slice(cut);
  }
}

/** A line as it finally reads: live output starts each rewrite of a line (a progress bar) with `\r`. */
export function finalStateOfLine(line: string): string {
  const rewrite = line.lastIndexOf('\r');
  return rewrite === -1 ? line : line.slice(rewrite + 1);
}
