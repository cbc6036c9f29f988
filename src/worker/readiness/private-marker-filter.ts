/**
 * Removes the session's private prompt marker (prompt-marker.ts) from the raw channel (SPEC §2): a
 * person's terminal and a recording must not see `ESC ] 133 ; D ; … ; <nonce> ; … BEL`, which carries
 * the session's nonce. Everything else passes unchanged, in order.
 *
 * The marker can arrive split across pty reads, so the start of one (a whole `ESC ] 133;D;` without its
 * terminator, or a tail that may still grow into that introducer) is held back until the next chunk
 * decides it. Held text is bounded: an introducer whose terminator has not come within
 * {@link MAX_MARKER_CHARS} is not a marker of ours and passes on.
 */
import type { MarkerFilter } from '../output/raw-channel.js';
import { MARKER_PREFIX, parseOwnedMarker } from './prompt-marker.js';

/** What every marker starts with. */
const INTRODUCER = `\x1b]${MARKER_PREFIX}`;
/**
 * Longest marker held back waiting for its terminator: the fields and the cwd (PATH_MAX is 4096 bytes)
 * fit well within it.
 */
export const MAX_MARKER_CHARS = 8 * 1024;

const BEL = '\x07';
const ST = '\x1b\\';

/** A streaming filter of one session's raw output. */
export class PrivateMarkerFilter implements MarkerFilter {
  /** The start of a possible marker, cut off at the end of the last chunk. */
  private held = '';

  constructor(private readonly nonce: string) {}

  /** Whether output is held back (the stream is inside a possible marker). */
  get holding(): boolean {
    return this.held.length > 0;
  }

  /** `chunk` without the owned markers it completes; a possible marker at its end is held back. */
  filter(chunk: string): string {
    const text = this.held.length === 0 ? chunk : this.held + chunk;
    this.held = '';
    let at = text.indexOf(INTRODUCER);
    if (at === -1) return this.holdPartialIntroducer(text);
    const kept: string[] = [];
    let from = 0;
    while (at !== -1) {
      const payloadAt = at + 2;
      const end = terminatorAt(text, at + INTRODUCER.length);
      if (end === -1) {
        if (text.length - at <= MAX_MARKER_CHARS) {
          kept.push(text.slice(from, at));
          this.held = text.slice(at);
          return kept.join('');
        }
        at = text.indexOf(INTRODUCER, at + 1); // too long to be ours: it passes
        continue;
      }
      const afterEnd = text.startsWith(ST, end) ? end + ST.length : end + BEL.length;
      if (parseOwnedMarker(text.slice(payloadAt, end), this.nonce) !== undefined) {
        kept.push(text.slice(from, at));
        from = afterEnd;
      }
      at = text.indexOf(INTRODUCER, afterEnd);
    }
    kept.push(this.holdPartialIntroducer(text.slice(from)));
    return kept.join('');
  }

  /** Forgets what is held (the last subscriber left: the next starts at a fresh point). */
  reset(): void {
    this.held = '';
  }

  /** `text` without a tail that may still grow into the introducer, which is held back instead. */
  private holdPartialIntroducer(text: string): string {
    const lastEscape = text.lastIndexOf('\x1b', text.length - 1);
    if (lastEscape === -1 || text.length - lastEscape >= INTRODUCER.length) return text;
    if (!INTRODUCER.startsWith(text.slice(lastEscape))) return text;
    this.held = text.slice(lastEscape);
    return text.slice(0, lastEscape);
  }
}

/** Index of the BEL or ST that ends the OSC whose payload continues at `from`, or -1. */
function terminatorAt(text: string, from: number): number {
  const bel = text.indexOf(BEL, from);
  const st = text.indexOf(ST, from);
  if (bel === -1) return st;
  if (st === -1) return bel;
  return Math.min(bel, st);
}
