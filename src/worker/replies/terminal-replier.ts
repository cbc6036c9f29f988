/**
 * Terminal-protocol replier (SPEC §4.3): a zero-scrollback `@xterm/headless` terminal consumes the raw
 * pty output only to answer the queries programs send to their terminal — cursor position (`CSI 6 n`,
 * `CSI ? 6 n`), device attributes (`CSI c`, `CSI > c`), mode reports (DECRQM), status strings
 * (DECRQSS), the window size in characters (`CSI 18 t`) — and hands every reply to `reply()`, which
 * writes it back into the pty.
 *
 * Batching: one parser write is active at a time. Chunks fed while it runs, or within one event-loop
 * turn, wait in a queue and are joined into the next write, so a flood schedules one parser task per
 * write, never one per chunk. A write holds at most {@link MAX_WRITE_CHARS} characters that must be
 * parsed in full.
 *
 * Fast path: before every write the terminal is idle, so its state is known exactly. When it allows
 * (see plain-text-skip.ts for the argument), the leading plain run of the batch is replaced by its short
 * equivalent suffix, and a long plain run later in the batch ends the write early so that the next
 * write starts on it. A batch that is plain output through and through is not written at all: it is
 * held back (shortened) and parsed in front of the next output that can ask for a reply. Line text
 * (line-text.ts), which the session has already checked, joins the held run through `feedLineText`
 * without a scan of its own: a `cat` flood costs no parsing and no scanning here. As it is held, a
 * line's `\r` redraws (a progress bar) are collapsed to their overlay (carriage-return-collapse.ts),
 * so such lines stay short enough for the suffix to be held too. In what is written, runs of
 * cursor-up frames (multi-line progress, cursor-up-frame-collapse.ts) are replaced by their last frame.
 *
 * Bounds: string sequences (OSC, DCS, SOS/PM/APC) longer than {@link MAX_STRING_SEQUENCE_CHARS} are
 * cancelled before xterm sees them, and queries past a budget are neutralized (hostile-stream-guard.ts);
 * xterm would otherwise collect up to 10 million characters of each payload, and spend seconds on
 * megabytes of `ESC[6n`. Nothing the replier answers has a longer body.
 *
 * Prompt markers: with `isPromptMarker`, the replier counts the session's prompt markers as xterm parses
 * them, in stream order with the replies (`markersParsed`, and the count passed with each reply), so
 * the session can tell whether a marker follows a query (reply-gate.ts).
 */
import xtermSerialize from '@xterm/addon-serialize';
import xtermHeadless, {
  type ITerminalInitOnlyOptions,
  type ITerminalOptions,
  type Terminal,
} from '@xterm/headless';
import { TerminalError } from '../../shared/errors.js';
import type { TerminalSnapshot } from '../../shared/types.js';
import type { LineFeeds } from '../output/line-feeds.js';
import { CarriageReturnCollapser } from './carriage-return-collapse.js';
import { FrameCollapser } from './cursor-up-frame-collapse.js';
import { HostileStreamGuard, MAX_STRING_SEQUENCE_CHARS } from './hostile-stream-guard.js';
import {
  holdsOnlyAdmittedSequences,
  lineFeedsToRefresh,
  PlainRunScanner,
  reducePlainRun,
} from './plain-text-skip.js';
import { ParserState, type XtermInternals, xtermInternals } from './xterm-internals.js';

/** The OSC number of the prompt marker (prompt-marker.ts), counted for the reply gate. */
const PROMPT_MARKER_OSC = 133;

/** Input parsed in full per write, at most: keeps one parse slice (and the worker's event loop) short. */
const MAX_WRITE_CHARS = 256 * 1024;

/**
 * Plain output held back unparsed, at most. A shortened run is about `2 × rows` lines, far below this;
 * output that cannot be shortened (no CR, too few lines) is parsed once it grows past it.
 */
const MAX_HELD_CHARS = 128 * 1024;

/** Held plain output is shortened each time it grows past this: rarely enough to cost little per chunk. */
const SHORTEN_HELD_AT_CHARS = 64 * 1024;

/** Factor by which held output must grow after an attempt to shorten it before the next attempt. */
const SHORTEN_RETRY_GROWTH = 1.25;

/**
 * When the held run holds no sequence, shortening first tries only its newest chunks, this many
 * characters: enough for the suffix it keeps (about `2 × rows` lines) unless lines are very long.
 */
const SHORTEN_TAIL_CHARS = 16 * 1024;

/**
 * A plain run later in a batch at least this long ends the write before it, so the next write can skip
 * most of it. Shorter runs are not worth the extra write (about 1 ms of scheduling in xterm).
 */
const MIN_SPLIT_RUN_CHARS = 64 * 1024;

/**
 * Input parsed synchronously, at most, when the replier is idle and the input asks nothing (see
 * {@link TerminalReplier.feed}). xterm's own `write()` always parses on a later timer (`setTimeout(0)`,
 * 0.3–1 ms in Node), and while it waits the session cannot sample `/proc` (a reply may be pending), so
 * every prompt paid that timer. A prompt chunk is a few hundred characters, and held plain output in
 * front of it about `2 × rows` lines; xterm parses this much in well under 0.1 ms here.
 */
const SYNC_PARSE_MAX_CHARS = 8 * 1024;

/**
 * Input that can make xterm reply: a CSI or DCS introducer, 7-bit or C1 (headless xterm answers no OSC
 * query: it has no color service). Such input keeps the asynchronous write it always had: a stream of
 * queries is then parsed in batches while `busy` holds the reply gate's `/proc` samples off. Parsed one
 * read at a time, 20 MB of `ESC[6n` took the gate ~125 samples a second and over a minute.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the grammar is made of control codes
const DCS_OR_C1 = /\x1bP|[\x90\x9b]/;
/** A complete 7-bit CSI sequence: private marker and parameters, intermediates, final byte. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the grammar is made of control codes
const CSI_SEQUENCE = /\x1b\[([\x30-\x3f]*)([\x20-\x2f]*)([\x40-\x7e])/g;
/**
 * CSI finals that never make xterm reply (colors, modes, cursor motion, erases, scroll region). Every
 * prompt carries some since sessions run as xterm (bash's bracketed paste `ESC[?2004h`, colors): they
 * must not cost the prompt xterm's parse timer. Any other CSI may be a query (`n`, `c`, `$p`, `t`, …).
 */
const QUIET_CSI_FINALS = new Set('ABCDEFGHJKLMPXdfhlmr@');

/** Whether `input` may make xterm reply (see {@link DCS_OR_C1}, {@link QUIET_CSI_FINALS}). */
function mayReply(input: string): boolean {
  if (DCS_OR_C1.test(input)) return true;
  let introducers = input.indexOf('\x1b[');
  if (introducers === -1) return false;
  let complete = 0;
  for (const [, params = '', intermediates = '', final = ''] of input.matchAll(CSI_SEQUENCE)) {
    complete++;
    if (intermediates !== '' || !QUIET_CSI_FINALS.has(final)) return true;
    const marker = params.charCodeAt(0);
    // A private marker (`?`, `>`, `<`, `=`) makes a query of most finals; only mode set/reset is quiet.
    if (marker >= 0x3c && marker <= 0x3f && final !== 'h' && final !== 'l') return true;
  }
  // An introducer without a complete sequence (split across reads) could end in a query.
  let count = 0;
  for (; introducers !== -1; introducers = input.indexOf('\x1b[', introducers + 2)) count++;
  return count !== complete;
}

const ESC = 0x1b;
const LEFT_BRACKET = 0x5b;

/**
 * Whether `text`, output cut off at the end of what was fed, may make xterm reply once parsed, before
 * any more output arrives. Held open unparsed, it must not (a program asking would wait for an answer
 * that comes only with its next output), so the answer is conservative: false only for text made of
 * printable characters, the controls BEL…CR, complete CSIs with plain decimal parameters and a quiet
 * final ({@link QUIET_CSI_FINALS}), and a lone ESC or such a CSI cut off at the very end — which cannot
 * reply until output that completes it arrives, and is parsed with that output.
 */
export function mayReplyBeforeMoreOutput(text: string): boolean {
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if ((code >= 0x20 && code < 0x7f) || code >= 0xa0 || (code >= 0x07 && code <= 0x0d)) continue;
    if (code !== ESC) return true; // other C0 controls, DEL and every C1 control (CSI, DCS, OSC, …)
    let p = at + 1;
    if (p === text.length) return false;
    if (text.charCodeAt(p) !== LEFT_BRACKET) return true;
    for (p += 1; p < text.length && isDecimalParameter(text.charCodeAt(p)); p++);
    if (p === text.length) return false;
    if (!QUIET_CSI_FINALS.has(text.charAt(p))) return true;
    at = p;
  }
  return false;
}

function isDecimalParameter(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || code === 0x3b;
}

const CR = 0x0d;

/** How @xterm/addon-serialize starts the alternate screen in what it serializes. */
const ALTERNATE_SCREEN_START = '\x1b[?1049h\x1b[H';

/** Options of {@link TerminalReplier}. */
export interface TerminalReplierOptions {
  /** Initial terminal width in cells. */
  cols: number;
  /** Initial terminal height in rows. */
  rows: number;
  /**
   * Receives each reply, in order, synchronously while the output that asked for it is parsed, with the
   * number of prompt markers parsed before it.
   */
  reply: (data: string, markersBefore: number) => void;
  /** Recognizes the session's prompt marker in a complete OSC payload (`133;…`); none counted without it. */
  isPromptMarker?: (payload: string) => boolean;
  /** Called after each prompt marker is parsed. */
  onPromptMarker?: () => void;
  /** Longest string sequence passed to xterm (default and upper bound {@link MAX_STRING_SEQUENCE_CHARS}). */
  maxStringSequenceChars?: number;
  /** Receives an exception thrown by `reply`; the replier keeps answering later queries. */
  onReplyError?: (error: unknown) => void;
}

/** Counters for tests and benchmarks. */
export interface TerminalReplierStats {
  /** `write()` calls made on the xterm terminal. */
  parserWrites: number;
  /** Characters passed to `feed()` (after dispose: not counted). */
  charsFed: number;
  /** Characters handed to the xterm parser, including SGRs re-sent by the fast path. */
  charsParsed: number;
  /** Plain runs the fast path shortened (a held run counts each time it grows and is shortened again). */
  shortenedRuns: number;
  /** Carriage-return redraws (segments of a line) the fast path replaced by their overlay. */
  collapsedSegments: number;
  /** Cursor-up frames the fast path dropped (each followed by another that redraws the same rows). */
  collapsedFrames: number;
  /** String sequences cancelled for length before xterm saw them. */
  discardedSequences: number;
}

/**
 * The xterm terminal options the replier uses. Exported so tests can build a reference terminal that
 * differs only in being fed every byte.
 */
export function replierTerminalOptions(
  cols: number,
  rows: number,
): ITerminalOptions & ITerminalInitOnlyOptions {
  return {
    cols,
    rows,
    // Replies never look at history; zero scrollback also makes the buffer exactly the viewport.
    scrollback: 0,
    // `buffer.active` (cursor row, base line) is marked proposed API in xterm 6.
    allowProposedApi: true,
    // A real terminal answers `CSI 18 t`; the pty size is ours to report. Everything else stays off.
    windowOptions: { getWinSizeChars: true },
    // No reflow on resize: xterm 6 turns it off for any `windowsPty` with a build number other than
    // conpty ≥ 21376, and its wrapping heuristic only for conpty < 21376, so winpty means "reflow off,
    // nothing else". Rows then stay as they are on resize, as X11 xterm does. Why: with zero scrollback
    // xterm 6's shrinking reflow writes through index -1 of its line ring, so the screen after a resize
    // would depend on how many lines ever scrolled by, which no shortened input can reproduce; without
    // reflow a resize depends on the cursor alone.
    windowsPty: { backend: 'winpty', buildNumber: 1 },
    // Parse errors of hostile output must not reach the worker's console.
    logLevel: 'off',
  };
}

/** A resize waiting behind earlier output, so it applies at the same point of the stream. */
interface PendingResize {
  cols: number;
  rows: number;
}

/**
 * Plain output held back unparsed: the chunks of one plain run that starts at the terminal's current
 * state (its progress-bar redraws collapsed, carriage-return-collapse.ts), and a sequence cut off at
 * the end of the last chunk that may still turn out to be plain.
 */
class HeldOutput {
  private chunks: string[] = [];
  /** Characters in `chunks`; the collapser holds back the rest of the plain run. */
  private chunkChars = 0;
  private readonly collapser = new CarriageReturnCollapser();
  /** Index of the first ESC in the plain run, or -1. */
  firstSequence = -1;
  /** The cut-off tail (`ESC [ 3` …), empty when there is none. */
  open = '';
  /**
   * Length past which shortening is tried next. Raised past the length an attempt left, so a run that
   * cannot be shortened (yet) is not searched again for every chunk appended to it.
   */
  shortenAt = SHORTEN_HELD_AT_CHARS;

  /** Characters in the plain run. */
  get plainLength(): number {
    return this.chunkChars + this.collapser.pendingLength;
  }

  get isEmpty(): boolean {
    return this.plainLength === 0 && this.open.length === 0;
  }

  /** Segments the collapser replaced by overlays so far (for the stats). */
  get collapsedSegments(): number {
    return this.collapser.collapsedSegments;
  }

  /**
   * Appends `text[0, plainEnd)`, a plain run whose first ESC is at `firstSequence` (-1: none), and holds
   * the rest open. With `collapseCols` (the terminal width, when the collapse's preconditions hold;
   * 0 otherwise) its carriage-return redraws are collapsed.
   */
  append(text: string, plainEnd: number, firstSequence: number, collapseCols: number): void {
    if (plainEnd > 0) {
      const first = this.chunks.length;
      const before = this.chunkChars;
      if (collapseCols > 0) {
        this.chunkChars += this.collapser.collapse(text, plainEnd, collapseCols, this.chunks);
      } else {
        this.chunkChars += this.collapser.close(this.chunks) + plainEnd;
        this.chunks.push(plainEnd === text.length ? text : text.slice(0, plainEnd));
      }
      if (this.firstSequence < 0 && firstSequence >= 0) this.firstSequence = this.findEscape(first, before);
    }
    this.open = plainEnd === text.length ? '' : text.slice(plainEnd);
  }

  /** Index in the plain run of the first ESC in `chunks[first…]`, the first of which starts at `offset`. */
  private findEscape(first: number, offset: number): number {
    for (let index = first, at = offset; index < this.chunks.length; index++) {
      const chunk = this.chunks[index]!;
      const found = chunk.indexOf('\x1b');
      if (found >= 0) return at + found;
      at += chunk.length;
    }
    return -1; // unreachable: a window never holds an ESC, so the admitted sequence was output
  }

  /** The newest part of the plain run, joined, holding at least `minChars` (or all there is). */
  plainTail(minChars: number): string {
    const pending = this.collapser.pendingText();
    let first = this.chunks.length;
    let chars = pending.length;
    while (first > 0 && chars < minChars) chars += this.chunks[--first]!.length;
    if (first === 0) return this.plainText();
    const tail = this.chunks.slice(first);
    return (tail.length === 1 ? tail[0]! : tail.join('')) + pending;
  }

  /** The plain run as one string (a window still open stays open: more output may collapse into it). */
  plainText(): string {
    if (this.chunks.length > 1) this.chunks = [this.chunks.join('')];
    return (this.chunks[0] ?? '') + this.collapser.pendingText();
  }

  /** Replaces the plain run by an equivalent one (whose first ESC is at `firstSequence`, when known). */
  replacePlain(text: string, firstSequence = text.indexOf('\x1b')): void {
    this.chunks = text.length > 0 ? [text] : [];
    this.chunkChars = text.length;
    this.collapser.reset(); // `text` holds the open window's output, or replaces it
    this.firstSequence = firstSequence;
    this.shortenAt = SHORTEN_HELD_AT_CHARS;
  }

  /** Holds `text`, the start of output that cannot reply yet, open in front of the next (when empty). */
  holdOpen(text: string): void {
    this.open = text;
  }

  clear(): void {
    this.take();
  }

  /** Empties it and returns what it held, in stream order. */
  take(): { text: string; plainLength: number; firstSequence: number } {
    const plain = this.plainText();
    const held = { text: plain + this.open, plainLength: plain.length, firstSequence: this.firstSequence };
    this.chunks = [];
    this.chunkChars = 0;
    this.collapser.reset();
    this.firstSequence = -1;
    this.open = '';
    this.shortenAt = SHORTEN_HELD_AT_CHARS;
    return held;
  }
}

/** Answers terminal-protocol queries found in raw pty output. */
export class TerminalReplier {
  private readonly terminal: Terminal;
  /** What the fast paths and snapshots read of xterm (xterm-internals.ts); checked at construction. */
  private readonly internals: XtermInternals;
  private readonly scanner = new PlainRunScanner();
  private readonly frames = new FrameCollapser();
  private readonly replyTo: (data: string, markersBefore: number) => void;
  /** Cancels overlong string sequences and neutralizes queries past the reply budget. */
  private readonly guard: HostileStreamGuard;
  private markers = 0;
  /** Characters in `queue` (strings only). */
  private queuedChars = 0;
  private backlogWaiters: { chars: number; resolve: () => void }[] = [];
  private readonly onReplyError: ((error: unknown) => void) | undefined;
  /** Fed chunks and resizes not yet planned into a write, in stream order. */
  private queue: (string | PendingResize)[] = [];
  /** Text of a batch that the last write stopped short of; planned before `queue`. */
  private carry = '';
  private carryAt = 0;
  /**
   * Plain output cannot cause a reply, so it is held back (and shortened) until output arrives that
   * can, or a resize, and is parsed in front of it: a flood of plain text is never parsed at all.
   */
  private readonly held = new HeldOutput();
  /** The planning step scheduled for chunks fed while idle, so one event-loop turn's chunks form one batch. */
  private scheduled: NodeJS.Immediate | undefined;
  private writing = false;
  /** Set while `feed()` plans from an idle state: small writes then parse synchronously. */
  private parseNow = false;
  /** Set while {@link flushSync} parses everything: every write then parses synchronously. */
  private parseAll = false;
  /** Set while {@link flushSync} drains xterm's write buffer: `onWritten` must not plan meanwhile. */
  private drainingWrites = false;
  /** DECTCEM as parsed (xterm has no public reading of it): whether the cursor is shown. */
  private cursorVisible = true;
  /** Serializes the terminal for {@link snapshot}; loaded on first use (only a viewer needs it). */
  private serializer: InstanceType<typeof xtermSerialize.SerializeAddon> | undefined;
  /**
   * {@link lineFeedsForSkip} as last computed, while `skipStateKnown`. The terminal's state changes only
   * through a write or a resize, and both clear it (it is read only while no write is active).
   */
  private skipLineFeeds: number | undefined;
  /** The width held output is collapsed for (carriage-return-collapse.ts), 0 when it may not be; as above. */
  private skipCollapseCols = 0;
  /** The width frames are collapsed for (cursor-up-frame-collapse.ts), 0 when they may not be; as above. */
  private skipFrameCols = 0;
  private skipStateKnown = false;
  private disposed = false;
  private idleWaiters: (() => void)[] = [];
  private readonly counters: TerminalReplierStats = {
    parserWrites: 0,
    charsFed: 0,
    charsParsed: 0,
    shortenedRuns: 0,
    collapsedSegments: 0,
    collapsedFrames: 0,
    discardedSequences: 0,
  };

  constructor(options: TerminalReplierOptions) {
    this.terminal = new xtermHeadless.Terminal(replierTerminalOptions(options.cols, options.rows));
    try {
      this.internals = xtermInternals(this.terminal);
    } catch (error) {
      this.terminal.dispose();
      throw error;
    }
    this.guard = new HostileStreamGuard(options.maxStringSequenceChars);
    this.replyTo = options.reply;
    this.onReplyError = options.onReplyError;
    this.terminal.onData((data) => this.emit(data));
    this.trackCursorVisibility();
    const { isPromptMarker, onPromptMarker } = options;
    if (isPromptMarker !== undefined) {
      this.terminal.parser.registerOscHandler(PROMPT_MARKER_OSC, (payload) => {
        if (!isPromptMarker(`${PROMPT_MARKER_OSC};${payload}`)) return false;
        this.markers += 1;
        onPromptMarker?.();
        return true;
      });
    }
  }

  /** Prompt markers parsed so far (see `isPromptMarker`). */
  get markersParsed(): number {
    return this.markers;
  }

  /**
   * True while a parser write is active or fed input waits to be planned into one. Plain output held
   * back by the fast path does not count: it can cause no reply.
   */
  get busy(): boolean {
    return (
      this.writing ||
      this.scheduled !== undefined ||
      this.queue.length > 0 ||
      this.carryAt < this.carry.length
    );
  }

  /** A snapshot of the counters. */
  get stats(): TerminalReplierStats {
    return {
      ...this.counters,
      collapsedSegments: this.held.collapsedSegments,
      collapsedFrames: this.frames.collapsedFrames,
      discardedSequences: this.guard.discardedSequences,
    };
  }

  /**
   * Feeds raw (decoded, unsanitized) output. One parser write is active at a time; chunks fed meanwhile,
   * or within the same event-loop turn, are coalesced into the next batch. Ignored after {@link dispose}.
   */
  feed(data: string): void {
    if (this.disposed || data.length === 0) return;
    this.counters.charsFed += data.length;
    const bounded = this.guard.admit(data);
    if (bounded.length === 0) return;
    this.queue.push(bounded);
    this.queuedChars += bounded.length;
    if (this.writing || this.scheduled !== undefined) return;
    // Idle, so the terminal state is exact: plain output is held right away, without a scheduled turn.
    if (this.queue.length === 1 && this.carryAt >= this.carry.length) {
      if (this.lineFeedsForSkip() !== undefined && this.holdPlainChunks()) return;
      if (this.queuedChars <= SYNC_PARSE_MAX_CHARS) {
        // A small chunk on an idle terminal that asks nothing (a prompt, an echo) is parsed now, so `busy`
        // is false before the session next looks at the terminal. (It may still complete a query cut off
        // at the end of the previous chunk: that reply is offered to the gate at once, as any other.)
        // Never from inside an xterm write: feed() runs in the session's own turn, and `writing` is false
        // only once xterm called back for our last write, after which its write buffer is empty.
        this.parseNow = true;
        try {
          this.pump();
        } finally {
          this.parseNow = false;
        }
        this.settleBacklogWaiters();
        return;
      }
    }
    this.schedule();
  }

  /**
   * Same as {@link feed} for a chunk known to be line text (`lineTextKind` in line-text.ts), which can
   * cause no reply: while the terminal is idle and nothing is held open, the chunk joins the held plain
   * run without being scanned again (and is shortened with it; with `lineFeeds`, the line feeds the
   * session's scan found, only the suffix a shortening keeps is held, see {@link holdSuffixOf}).
   * Otherwise it takes the general route of {@link feed}.
   */
  feedLineText(data: string, lineFeeds?: LineFeeds): void {
    if (this.disposed || data.length === 0) return;
    if (!this.mayHoldUnscanned()) {
      this.feed(data);
      return;
    }
    this.counters.charsFed += data.length;
    if (lineFeeds !== undefined && this.holdSuffixOf(data, lineFeeds)) return;
    // The scan's counts show when there is nothing to collapse: at most one CR per line (a CRLF log, a
    // `cat`) leaves no redraw, and such chunks then cost no search for CRs.
    const redraws = lineFeeds === undefined || lineFeeds.crCount > lineFeeds.count + 1;
    this.held.append(data, data.length, -1, redraws ? this.collapseCols : 0);
    // Held output past its bound is parsed by the next pump, as for chunks held through `feed`.
    if (!this.shortenHeld()) this.schedule();
  }

  /**
   * Same as {@link feedLineText} for styled line text: `data` is line text once its SGRs are removed
   * (the session's sanitizer found so, `OutputSanitizer.pushStyled`), every sequence complete. Only its
   * sequences need a look — each must be one a plain run admits, found by hopping from ESC to ESC —
   * not every character (a colored log's scan cost the thread about a sixth of its time).
   */
  feedStyledLineText(data: string): void {
    if (this.disposed || data.length === 0) return;
    const firstSequence = data.indexOf('\x1b');
    if (!this.mayHoldUnscanned() || !holdsOnlyAdmittedSequences(data, firstSequence)) {
      this.feed(data);
      return;
    }
    this.counters.charsFed += data.length;
    this.held.append(data, data.length, firstSequence, this.collapseCols);
    // Held output past its bound is parsed by the next pump, as for chunks held through `feed`.
    if (!this.shortenHeld()) this.schedule();
  }

  /**
   * Whether plain output checked by the session may join the held run without a scan here: the
   * terminal is idle with nothing queued or held open, outside any string sequence, and the fast path
   * applies (or output is held already: while it is, the terminal has parsed nothing since the hold
   * began — every write and resize takes the held output first — so its preconditions still hold).
   */
  private mayHoldUnscanned(): boolean {
    // Inside a string sequence (a long OSC's body is line text too), the bound decides what xterm sees.
    if (!this.guard.atGround) return false;
    const idle =
      !this.writing &&
      this.scheduled === undefined &&
      this.queue.length === 0 &&
      this.carryAt >= this.carry.length &&
      this.held.open === '';
    return idle && !(this.held.isEmpty && this.lineFeedsForSkip() === undefined);
  }

  /**
   * When `data` (line text, its line feeds at hand) alone holds the suffix that shortening keeps, holds
   * just that suffix instead of everything: what appending `data` and shortening the held run
   * (`reducePlainRun`) would give, found without a search. False when it does not apply: sequences in
   * the held run (their SGRs would have to be kept), too few line feeds, or no CR right before the
   * first line feed kept (a CRLF stream always has one; without it the CR search decides).
   */
  private holdSuffixOf(data: string, lineFeeds: LineFeeds): boolean {
    if (this.held.firstSequence >= 0) return false;
    const needed = this.lineFeedsForSkip();
    if (needed === undefined || needed < 1 || lineFeeds.count < needed) return false;
    const kept = lineFeeds.positions[lineFeeds.count - needed]!; // the oldest line feed the suffix keeps
    if (kept < 2 || data.charCodeAt(kept - 1) !== CR) return false;
    this.counters.shortenedRuns += 1;
    this.held.replacePlain(data.slice(kept - 1), -1);
    return true;
  }

  /**
   * Resolves once everything fed so far has been parsed (or held back as plain output, which cannot
   * reply) and every resulting reply has been passed to `reply`, or once the replier is disposed.
   */
  whenIdle(): Promise<void> {
    if (this.disposed || !this.busy) return Promise.resolve();
    return new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Fed output not yet parsed, in characters (held plain output excluded: it is bounded and shortened).
   * Grows when output arrives faster than xterm parses it; the session pauses reading past a bound.
   */
  get backlogChars(): number {
    return this.queuedChars + Math.max(0, this.carry.length - this.carryAt);
  }

  /** Resolves once {@link backlogChars} is below `chars`, or the replier is disposed. */
  whenBacklogBelow(chars: number): Promise<void> {
    if (this.disposed || this.backlogChars < chars) return Promise.resolve();
    return new Promise<void>((resolve) => this.backlogWaiters.push({ chars, resolve }));
  }

  /** Resizes the terminal at this point of the stream: after everything fed before, before anything later. */
  resize(cols: number, rows: number): void {
    if (this.disposed) return;
    this.queue.push({ cols, rows });
    this.schedule();
  }

  /** Disposes the terminal; later feeds are ignored and pending {@link whenIdle} promises resolve. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    if (this.scheduled !== undefined) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.queue = [];
    this.queuedChars = 0;
    this.carry = '';
    this.carryAt = 0;
    this.held.clear();
    this.writing = false;
    // A write in flight still completes inside xterm (its callback is ignored below); a disposed xterm
    // parses without emitting data, and `emit` checks `disposed` as well.
    this.terminal.dispose();
    this.settleWaiters();
    this.settleBacklogWaiters();
  }

  private emit(data: string): void {
    if (this.disposed) return;
    this.guard.replied();
    try {
      this.replyTo(data, this.markers);
    } catch (error) {
      // Thrown inside xterm's parse; letting it escape would kill the worker. The owner decides.
      this.onReplyError?.(error);
    }
  }

  private schedule(): void {
    if (this.writing || this.scheduled !== undefined) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined;
      this.pump();
    });
  }

  /**
   * Plans writes until one is active or nothing is left. The terminal is idle here, so its state is
   * exact. A resize applies once everything before it is parsed, held output included.
   */
  private pump(): void {
    while (!this.writing && !this.disposed) {
      if (this.carryAt < this.carry.length) {
        this.plan(this.carry, this.carryAt, 0, -1, false);
        continue;
      }
      const head = this.queue[0];
      if (head === undefined) {
        if (this.held.plainLength > MAX_HELD_CHARS) {
          const held = this.held.take();
          this.plan(held.text, 0, held.plainLength, held.firstSequence, true);
          continue;
        }
        this.settleWaiters();
        return;
      }
      if (typeof head !== 'string') {
        if (!this.held.isEmpty) {
          const held = this.held.take();
          this.plan(held.text, 0, held.plainLength, held.firstSequence, true);
          continue;
        }
        this.queue.shift();
        this.skipStateKnown = false;
        this.terminal.resize(head.cols, head.rows);
        continue;
      }
      if (this.lineFeedsForSkip() !== undefined && this.holdPlainChunks()) continue;
      const held = this.held.take();
      this.plan(held.text + this.takeChunks(), 0, held.plainLength, held.firstSequence, false);
    }
  }

  /**
   * Moves leading queued chunks that continue the held plain run into it, shortening it as it grows.
   * True when every chunk up to the next resize (or the end) was held; false when a chunk that is not
   * plain, or a held run too long to keep, must be written.
   */
  private holdPlainChunks(): boolean {
    for (let head = this.queue[0]; typeof head === 'string'; head = this.queue[0]) {
      const text = this.held.open + head;
      const end = this.scanner.scan(text, 0);
      if (end < text.length && !this.scanner.openSequence) return false;
      this.queue.shift();
      this.queuedChars -= head.length;
      this.held.append(text, end, this.scanner.firstSequence, this.collapseCols);
      if (!this.shortenHeld()) return false;
    }
    return true;
  }

  /**
   * Shortens the held run once it grew past {@link SHORTEN_HELD_AT_CHARS}. False when it is still too
   * long to keep ({@link MAX_HELD_CHARS}) and must be written.
   */
  private shortenHeld(): boolean {
    if (this.held.plainLength <= this.held.shortenAt) return true;
    const lineFeeds = this.lineFeedsForSkip();
    if (lineFeeds === undefined) return this.held.plainLength <= MAX_HELD_CHARS;
    // Without sequences in the held run, its newest part alone may already hold the suffix to keep:
    // everything before that suffix's sync CR is plain output that only scrolls away. That spares
    // joining the whole run; when the newest part is too short, the whole run is used.
    let reduced: string | undefined;
    if (this.held.firstSequence < 0) {
      const tail = this.held.plainTail(SHORTEN_TAIL_CHARS);
      reduced = reducePlainRun(tail, 0, tail.length, -1, lineFeeds);
    }
    if (reduced === undefined) {
      const plain = this.held.plainText();
      reduced = reducePlainRun(plain, 0, plain.length, this.held.firstSequence, lineFeeds);
    }
    if (reduced !== undefined) {
      this.counters.shortenedRuns += 1;
      this.held.replacePlain(reduced);
    }
    // Until the run grew by a quarter, the same search would find (nearly) the same: too few line feeds
    // or no CR before them. Each held run is searched a few times at most, not once per chunk (and once
    // more past the bound, before it is written).
    const retryAt = Math.max(SHORTEN_HELD_AT_CHARS, this.held.plainLength * SHORTEN_RETRY_GROWTH);
    this.held.shortenAt = Math.min(retryAt, MAX_HELD_CHARS);
    return this.held.plainLength <= MAX_HELD_CHARS;
  }

  /** Removes the leading run of queued chunks (up to the next resize) and joins them once. */
  private takeChunks(): string {
    let count = 0;
    while (count < this.queue.length && typeof this.queue[count] === 'string') count += 1;
    const chunks = this.queue.splice(0, count) as string[];
    const joined = count === 1 ? chunks[0]! : chunks.join('');
    this.queuedChars -= joined.length;
    return joined;
  }

  /**
   * Plans `text[from…]`: holds it back when it is all plain output, else starts one write. The first
   * `knownPlain` characters are already known to be a plain run (held output), whose first ESC is at
   * `from + knownFirstSequence` (-1: none); `mustWrite` forbids holding.
   */
  private plan(
    text: string,
    from: number,
    knownPlain: number,
    knownFirstSequence: number,
    mustWrite: boolean,
  ): void {
    let input = '';
    let cursor = from;
    const lineFeeds = this.lineFeedsForSkip();
    if (lineFeeds !== undefined) {
      const runEnd = this.scanner.scan(text, from + knownPlain);
      const firstSequence = knownFirstSequence >= 0 ? from + knownFirstSequence : this.scanner.firstSequence;
      const reduced = reducePlainRun(text, from, runEnd, firstSequence, lineFeeds);
      if (reduced !== undefined) this.counters.shortenedRuns += 1;
      if (runEnd === text.length && !mustWrite) {
        const plain = reduced ?? text.slice(from);
        if (plain.length <= MAX_HELD_CHARS) {
          this.held.replacePlain(plain);
          this.carry = '';
          this.carryAt = 0;
          return;
        }
      }
      if (reduced !== undefined) {
        input = reduced;
        cursor = runEnd;
      }
    }
    let stop = this.writeEnd(text, from, cursor);
    // The terminal reaches `cursor` in the state it has now (the leading plain run changes no mode).
    if (this.skipFrameCols > 0) {
      input += this.frames.collapse(text, cursor, stop, this.terminal.rows, this.skipFrameCols);
      const cutOff = this.frames.end < stop && stop === text.length && this.held.isEmpty;
      if (cutOff && !mayReplyBeforeMoreOutput(text.slice(this.frames.end))) {
        // A frame cut off at the end of the batch is held open (as a cut-off sequence is: it cannot reply
        // until more output completes it) and planned with that output, so its run can collapse on. What
        // the collapser cuts off is the start of a frame, which asks nothing; the check makes sure of it
        // here, where the hold is decided, because held output waits for more that may never come.
        this.held.holdOpen(text.slice(this.frames.end));
      } else stop = this.frames.end;
    } else input += text.slice(cursor, stop);
    if (stop >= text.length) {
      this.carry = '';
      this.carryAt = 0;
    } else {
      this.carry = text;
      this.carryAt = stop;
    }
    this.counters.parserWrites += 1;
    this.counters.charsParsed += input.length;
    this.skipStateKnown = false;
    const parseNow =
      this.parseAll || (this.parseNow && input.length <= SYNC_PARSE_MAX_CHARS && !mayReply(input));
    if (parseNow) {
      this.internals.writeSync(input); // `writing` stays false: pump() goes on with what is left
      return;
    }
    this.writing = true;
    this.terminal.write(input, () => this.onWritten());
  }

  private onWritten(): void {
    // After dispose the callback still arrives (xterm parses what it had queued); nothing to do then.
    if (this.disposed) return;
    this.writing = false;
    if (this.drainingWrites) return; // flushSync plans what is left once the drain returned
    this.pump();
    this.settleBacklogWaiters();
  }

  /**
   * Where this write stops, parsing `text[cursor, end)` in full: before the next long plain run (just
   * after its first line feed, where any sequence that preceded it has ended), or at the size bound. A
   * leading run that could not be shortened is not split early: a run the fast path cannot use now
   * (e.g. under a scroll region) would otherwise cost one write per line.
   */
  private writeEnd(text: string, from: number, cursor: number): number {
    const limit = Math.min(text.length, cursor + MAX_WRITE_CHARS);
    let at = cursor === from ? this.scanner.scan(text, cursor) : cursor;
    while (at < limit) {
      const runStart = at + 1;
      const runEnd = this.scanner.scan(text, runStart);
      if (runEnd - runStart >= MIN_SPLIT_RUN_CHARS) {
        const lineFeed = text.indexOf('\n', runStart);
        if (lineFeed >= 0 && lineFeed + 1 < runEnd) return Math.min(lineFeed + 1, limit);
      }
      at = runEnd;
    }
    return limit;
  }

  /**
   * Line feeds the fast path needs from the current terminal state, or undefined when skipping would
   * not be sound now (the preconditions of plain-text-skip.ts). Asked on every line-text chunk, so it is
   * kept until the terminal's state changes.
   */
  private lineFeedsForSkip(): number | undefined {
    if (!this.skipStateKnown) {
      this.skipLineFeeds = this.computeLineFeedsForSkip();
      this.skipCollapseCols = this.skipLineFeeds === undefined ? 0 : this.computeCollapseCols();
      this.skipFrameCols = this.computeFrameCols();
      this.skipStateKnown = true;
    }
    return this.skipLineFeeds;
  }

  /** The width to collapse held output for, 0 when not allowed (read with {@link lineFeedsForSkip}). */
  private get collapseCols(): number {
    this.lineFeedsForSkip();
    return this.skipCollapseCols;
  }

  /**
   * The terminal width, or 0 when the preconditions of carriage-return-collapse.ts do not hold: insert
   * mode on, or a character set other than the default one mapping printable ASCII.
   */
  private computeCollapseCols(): number {
    if (this.internals.charsetMapped() || this.terminal.modes.insertMode) return 0;
    return this.terminal.cols;
  }

  /**
   * The terminal width, or 0 when the preconditions of cursor-up-frame-collapse.ts do not hold: parser
   * outside GROUND, a scroll region, insert mode on, or a character set other than the default one.
   */
  private computeFrameCols(): number {
    const internals = this.internals;
    if (internals.parserState() !== ParserState.GROUND) return 0;
    const region = internals.scrollRegion();
    if (region.top !== 0 || region.bottom !== this.terminal.rows - 1) return 0;
    if (internals.charsetMapped() || this.terminal.modes.insertMode) return 0;
    return this.terminal.cols;
  }

  /** {@link lineFeedsForSkip}, read from the terminal. */
  private computeLineFeedsForSkip(): number | undefined {
    const internals = this.internals;
    if (internals.parserState() !== ParserState.GROUND) return undefined;
    const rows = this.terminal.rows;
    const region = internals.scrollRegion();
    if (region.top !== 0 || region.bottom !== rows - 1) return undefined;
    // Every line feed at the bottom must rotate a full ring of exactly the visible rows. (An alternate
    // buffer activated after a shrink can keep a larger ring and grow instead.)
    const ring = internals.lineRing();
    if (ring.length !== rows || ring.maxLength !== rows) return undefined;
    if (this.terminal.modes.reverseWraparoundMode) return undefined;
    const buffer = this.terminal.buffer.active;
    if (buffer.baseY !== 0) return undefined;
    return lineFeedsToRefresh(rows, buffer.cursorY);
  }

  private settleBacklogWaiters(): void {
    if (this.backlogWaiters.length === 0) return;
    const backlog = this.disposed ? -1 : this.backlogChars;
    const waiting = this.backlogWaiters;
    this.backlogWaiters = [];
    for (const waiter of waiting) {
      if (backlog < waiter.chars) waiter.resolve();
      else this.backlogWaiters.push(waiter);
    }
  }

  // --- Screen access for full-screen programs (SPEC §4.3); the replier's terminal is the screen model.

  /** Whether the terminal is in application cursor keys mode (DECCKM), as parsed so far. */
  get applicationCursorKeys(): boolean {
    return !this.disposed && this.terminal.modes.applicationCursorKeysMode;
  }

  /**
   * The screen as rendered once everything fed so far is parsed (held plain output included): `rows`
   * lines, trailing blanks trimmed, and the cursor. Undefined after {@link dispose}.
   */
  async renderedScreen(): Promise<{ lines: string[]; cursor: { row: number; col: number } } | undefined> {
    // A resize to the current size is queued behind the output: it makes held output be parsed first.
    if (!this.held.isEmpty) this.resize(this.terminal.cols, this.terminal.rows);
    await this.whenIdle();
    if (this.disposed) return undefined;
    const buffer = this.terminal.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < this.terminal.rows; y++) {
      // Programs clear with spaces as often as with erase sequences: trailing spaces are blanks too.
      lines.push(
        buffer
          .getLine(buffer.viewportY + y)
          ?.translateToString(true)
          .trimEnd() ?? '',
      );
    }
    return { lines, cursor: { row: buffer.cursorY, col: Math.min(buffer.cursorX, this.terminal.cols - 1) } };
  }

  /**
   * Parses everything fed so far now, held plain output included, so the terminal's state is that of
   * the stream's end (what {@link snapshot} serializes). Replies it makes are offered as any others.
   * Synchronous: no output can be fed in between.
   */
  flushSync(): void {
    if (this.disposed) return;
    const internals = this.internals;
    if (this.scheduled !== undefined) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.parseAll = true;
    try {
      if (this.writing) {
        this.drainingWrites = true;
        try {
          internals.drainWrites();
        } finally {
          this.drainingWrites = false;
        }
      }
      this.pump();
      if (!this.held.isEmpty) {
        const held = this.held.take();
        this.plan(held.text, 0, held.plainLength, held.firstSequence, true);
        this.pump();
      }
    } finally {
      this.parseAll = false;
    }
    this.settleBacklogWaiters();
  }

  /**
   * Whether xterm's parser is between sequences: a snapshot taken now is a point a fresh terminal can
   * continue from (inside a sequence it would miss the sequence's start). Exact after {@link flushSync}.
   */
  get atGround(): boolean {
    return this.internals.parserState() === ParserState.GROUND;
  }

  /**
   * The terminal serialized (SPEC §2) at the end of what was fed: call {@link flushSync} first. Throws
   * SESSION_CLOSED after {@link dispose}.
   */
  snapshot(): TerminalSnapshot {
    if (this.disposed) throw new TerminalError('SESSION_CLOSED', 'the terminal is closed');
    if (this.serializer === undefined) {
      this.serializer = new xtermSerialize.SerializeAddon();
      this.terminal.loadAddon(this.serializer);
    }
    const { terminal } = this;
    const buffer = terminal.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < terminal.rows; y++) {
      lines.push(
        buffer
          .getLine(buffer.viewportY + y)
          ?.translateToString(true)
          .trimEnd() ?? '',
      );
    }
    // The addon redraws cells, attributes, modes, the alternate screen and the cursor's place, not
    // whether the cursor is shown. It draws the alternate screen as if its first cell started from
    // default attributes, but writes the current attributes just before switching: they are reset
    // where the alternate screen begins (a cell's text never holds an ESC, so the first switch is
    // the addon's own).
    const serialized = this.serializer
      .serialize({ scrollback: 0 })
      .replace(ALTERNATE_SCREEN_START, `${ALTERNATE_SCREEN_START}\x1b[0m`);
    const ansi = serialized + (this.cursorVisible ? '' : '\x1b[?25l');
    return {
      rows: terminal.rows,
      cols: terminal.cols,
      ansi,
      lines,
      cursor: {
        row: buffer.cursorY,
        col: Math.min(buffer.cursorX, terminal.cols - 1),
        visible: this.cursorVisible,
      },
      alternateScreen: buffer.type === 'alternate',
      modes: {
        applicationCursorKeys: terminal.modes.applicationCursorKeysMode,
        bracketedPaste: terminal.modes.bracketedPasteMode,
      },
    };
  }

  /**
   * Follows DECTCEM (`CSI ? 25 h/l`) and the resets that show the cursor (RIS, DECSTR) through public
   * parser hooks that let xterm's own handling run too (they return false).
   */
  private trackCursorVisibility(): void {
    const { parser } = this.terminal;
    const mode = (visible: boolean) => (params: (number | number[])[]) => {
      if (params.includes(25)) this.cursorVisible = visible;
      return false;
    };
    parser.registerCsiHandler({ prefix: '?', final: 'h' }, mode(true));
    parser.registerCsiHandler({ prefix: '?', final: 'l' }, mode(false));
    parser.registerCsiHandler({ intermediates: '!', final: 'p' }, () => {
      this.cursorVisible = true;
      return false;
    });
    parser.registerEscHandler({ final: 'c' }, () => {
      this.cursorVisible = true;
      return false;
    });
  }

  private settleWaiters(): void {
    if (this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
