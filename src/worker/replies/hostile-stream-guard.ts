/**
 * What of a hostile stream the terminal model's parser may see (SPEC §4.3 "Bounds under hostile
 * output"), in front of xterm whichever model feeds it: string sequences bounded (string-sequence-
 * bound.ts, which follows its own grammar, not xterm's transition table) and terminal queries budgeted.
 *
 * Query spam: xterm spends about a microsecond per answered query, so 20 MB of `ESC[6n` cost seconds of
 * parsing. Answers are budgeted ({@link REPLIES_PER_SECOND}, bursts of {@link REPLY_BURST}); while the
 * budget is spent, the common queries are neutralized before xterm sees them (see {@link QUERY}).
 *
 * Every chunk the parser is fed must pass {@link HostileStreamGuard.admit} once, in stream order: the
 * bound follows the parser through string sequences. Text that cannot start or continue one — line
 * text while {@link HostileStreamGuard.atGround} holds — may skip it.
 */
import { StringSequenceBound } from './string-sequence-bound.js';

/**
 * Longest string sequence (OSC, DCS, SOS/PM/APC, introducer excluded) passed to xterm. The longest body
 * it could answer is far shorter: a DECRQSS names a setting in a few characters, a prompt marker holds
 * a cwd (PATH_MAX is 4096 bytes); longer sequences only cost memory.
 */
export const MAX_STRING_SEQUENCE_CHARS = 8 * 1024;

/** Replies made per second at most, sustained: a program asking back to back needs a few hundred. */
const REPLIES_PER_SECOND = 2000;

/** Replies made at once before the rate applies (a full-screen program asks about five at startup). */
export const REPLY_BURST = 512;

/**
 * The common queries — device status and cursor position (`CSI n`, `CSI ? n`), device attributes
 * (`CSI c`, `CSI > c`, `CSI = c`), mode reports (`CSI ? $ p`), window size (`CSI 18 t`) — in their
 * 7-bit and C1 forms. None changes the terminal's state; each only makes a reply. Replacing its
 * parameters and final byte by CAN leaves the introducer's effects (an ESC ends a string sequence, as
 * it does before any CSI) and returns the parser to ground with no reply, as the query would.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the grammar is made of control codes
const QUERY = /(\x1b\[|\x9b)(?:[?>=]?[0-9;]*[nc]|\??[0-9;]*\$p|18t)/g;

/** The string-sequence bound and the query budget of one terminal model. */
export class HostileStreamGuard {
  private readonly bound: StringSequenceBound;
  /** Replies the budget still allows now, and when it was last refilled. */
  private replyTokens = REPLY_BURST;
  private replyTokensAt = performance.now();

  /** `maxStringSequenceChars`: the bound (at most, and by default, {@link MAX_STRING_SEQUENCE_CHARS}). */
  constructor(maxStringSequenceChars = MAX_STRING_SEQUENCE_CHARS) {
    this.bound = new StringSequenceBound(Math.min(maxStringSequenceChars, MAX_STRING_SEQUENCE_CHARS));
  }

  /** String sequences cancelled for length so far. */
  get discardedSequences(): number {
    return this.bound.discardedSequences;
  }

  /** Outside any string sequence, no escape pending: line text passes unchanged (and need not be admitted). */
  get atGround(): boolean {
    return this.bound.atGround;
  }

  /** What the parser may see of `data`, the next chunk of the stream (`data` itself when nothing changes). */
  admit(data: string): string {
    const budgeted = this.replyBudgetLeft() ? data : data.replace(QUERY, '$1\x18');
    return this.bound.filter(budgeted);
  }

  /** The parser made a reply: it spends one of the budget. */
  replied(): void {
    this.replyTokens -= 1;
  }

  /** Whether the reply budget allows more replies now (refilled at {@link REPLIES_PER_SECOND}). */
  private replyBudgetLeft(): boolean {
    if (this.replyTokens >= 1) return true;
    const now = performance.now();
    this.replyTokens = Math.min(
      REPLY_BURST,
      this.replyTokens + ((now - this.replyTokensAt) * REPLIES_PER_SECOND) / 1000,
    );
    this.replyTokensAt = now;
    return this.replyTokens >= 1;
  }
}
