/**
 * Streaming output sanitizer (SPEC §4.3): turns decoded terminal output into line-oriented printable
 * text, plus the OSC payloads the readiness logic needs (the prompt marker is an OSC 133 sequence).
 *
 * It is a state machine over UTF-16 code units whose state after a character depends only on the
 * characters before it, never on where the stream was split into chunks: a chunk may end anywhere
 * (inside an escape sequence, between CR and LF, between the halves of a surrogate pair) and the sink
 * sees the same lines and payloads as if the whole stream had arrived at once. Plain runs — including
 * their LF and CRLF line ends, so a flood of lines is usually one run per chunk — are found with one
 * regex scan and handed to the sink in one `text()` or `textBlock()` call; nothing is concatenated per
 * character or per line and nothing proportional to the stream is retained.
 *
 * Grammar (DEC/ECMA-48, as xterm parses it, reduced to what a line-oriented reader needs):
 * - `ESC [` or U+009B: CSI — parameter/intermediate bytes 0x20–0x3F, ended by a final byte 0x40–0x7E.
 * - `ESC ]` or U+009D: OSC — ended by BEL, `ESC \` or U+009C; the payload goes to `sink.osc`.
 * - `ESC P`/`X`/`^`/`_` or U+0090/0098/009E/009F: DCS/SOS/PM/APC — discarded up to `ESC \` or U+009C.
 * - `ESC` + intermediates (0x20–0x2F) + one final (0x30–0x7E): short escapes such as `ESC ( B`, `ESC 7`.
 * - CAN/SUB cancel any sequence; an ESC inside a string sequence (other than `ESC \`) abandons it and
 *   starts a new escape; a character that cannot continue a sequence ends it and is read as text/control.
 * - LF, VT, FF end the line; a CR is held until the next character that decides it: LF (and further CRs
 *   or escape sequences in between) makes one newline, printable text makes a `rewriteLine()` first
 *   (so an OSC between a CR and the text that replaces the line reaches the sink before the rewrite).
 * - TAB is text; BS and the CSI/ESC sequences that move the cursor or edit the screen go to a sink that
 *   models the screen (the optional `backspace`, `csi`, `escape`); every other C0 control, DEL, SGR and
 *   the remaining C1 controls are dropped.
 *
 * Not reentrant: a sink must not call `push` on the sanitizer that is calling it.
 */
import { TerminalError } from '../../shared/errors.js';
import type { LineFeeds } from './line-feeds.js';
import { LineTextKind, lineTextKind } from './line-text.js';

/** Receives the sanitized stream in order. */
export interface SanitizerSink {
  /** Printable text for the current line: never contains ESC, CR, LF or another C0 control except TAB. */
  text(s: string): void;
  /** End of the current line (LF, CRLF, a CRLF split across pushes, CR+CR+LF …). */
  newline(): void;
  /** A lone CR followed by more text: what follows replaces the current line's content. */
  rewriteLine(): void;
  /**
   * Several lines at once (the fast path of a flood): printable text in which each `\n` or `\r\n` ends
   * a line — exactly equivalent to `text(piece)` + `newline()` for each piece ended by `\n` (without
   * the CR of a `\r\n`), then `text(rest)`. A CR occurs only directly before an LF; never ESC or another
   * control except TAB; always at least one `\n`. (Blocks keep their CRLFs: normalizing them would
   * copy every byte of a flood, and every sink handles them — the scrollback stores them as they are,
   * and live output turns them into LF in the same pass that copies a batch into its ring.)
   * The block is a fresh string or at least half of the chunk it was cut from, so a sink may keep it
   * (or slices of it) without pinning much more memory than it holds.
   * `ascii` is true when the block is known to be ASCII (a line-text chunk), so a sink that encodes it
   * can skip checking; false only means unknown. `lineFeeds`, when given, holds the indices of the
   * block's line feeds (valid during this call only), so a sink need not search for them.
   */
  textBlock(block: string, ascii: boolean, lineFeeds?: LineFeeds): void;
  /** A complete OSC payload (between `ESC ]` and BEL or `ESC \`), in stream order relative to text. */
  osc(payload: string): void;
  /**
   * Cursor and screen edits, for a sink that models the screen (output-model.ts); others omit them and
   * the edits are dropped. A CR waiting to be decided is decided first: `rewriteLine()` precedes these.
   */
  /** BS: the cursor moves left one column. */
  backspace?(): void;
  /**
   * A complete CSI sequence other than SGR: `params` holds its parameter and intermediate characters
   * (private markers such as `?` included), `final` its final byte.
   */
  csi?(params: string, final: number): void;
  /** A two-character escape `ESC final` (`ESC 7`, `ESC 8`, `ESC M` …), no intermediates. */
  escape?(final: number): void;
}

/**
 * How much of a chunk {@link OutputSanitizer.pushStyled} sent the styled way: `whole` means the chunk
 * is line text once its SGRs are removed, every sequence in it complete.
 */
export type StyledRoute = 'none' | 'part' | 'whole';

/** Options of {@link OutputSanitizer}. */
export interface OutputSanitizerOptions {
  /** Most characters held back for an incomplete sequence (plus a trailing CR); the session passes `maxReadBytes`. */
  maxPendingChars: number;
  /**
   * The terminal's width in columns, when the sink lays text out on a screen (the output model): then a
   * line rewritten many times with `\r` in one chunk reaches the sink once (see
   * {@link OutputSanitizer.columns}). Without it every rewrite is passed on.
   */
  columns?: number;
}

/** Parser states; the names follow the DEC parser diagram. */
const Mode = {
  /** Plain text and C0 controls. */
  Ground: 0,
  /** After ESC. */
  Escape: 1,
  /** After ESC and at least one intermediate byte (e.g. `ESC (`). */
  EscapeIntermediate: 2,
  /** Inside a CSI sequence. */
  Csi: 3,
  /** Inside an OSC string. */
  Osc: 4,
  /** After ESC inside an OSC string (`ESC \` ends it). */
  OscEscape: 5,
  /** Inside a DCS, SOS, PM or APC string (discarded). */
  Str: 6,
  /** After ESC inside a DCS/SOS/PM/APC string. */
  StrEscape: 7,
} as const;
type Mode = (typeof Mode)[keyof typeof Mode];

// Code units the state machine dispatches on.
const BEL = 0x07;
const BS = 0x08;
const LF = 0x0a;
const VT = 0x0b; // a terminal moves down a line on VT and FF exactly as on LF
const FF = 0x0c;
const CR = 0x0d;
const ESC = 0x1b;
const BACKSLASH = 0x5c;
const LETTER_M = 0x6d;
const C1_DCS = 0x90;
const C1_SOS = 0x98;
const C1_CSI = 0x9b;
const C1_ST = 0x9c;
const C1_OSC = 0x9d;
const C1_PM = 0x9e;
const C1_APC = 0x9f;

/** Whether `code` is a printable ASCII character (one column wide). */
function isPrintableAscii(code: number): boolean {
  return code >= 0x20 && code < 0x7f;
}

/**
 * Ground: what ends a plain run — C0 except TAB and LF, DEL, C1, and a CR not followed by LF (CRLF is
 * part of a run). One scan finds it: this alternation is faster than a class scan that stops at every CR,
 * and far faster than two scans or a code-unit loop (bench/README.md, "Other notes").
 * These regexes are shared by all instances; each use sets `lastIndex` and reads it back before any
 * sink call, so sharing is safe.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching controls is the job
const GROUND_BREAK = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)/g;

/**
 * A complete SGR (`ESC [` parameters `m`): colors and text styles, which the state machine discards
 * whole — a CSI whose parameter bytes are digits, `;` or `:`. Nothing else matches. Not one right after
 * a high surrogate: removing it would join that half to what follows (a low half into a pair, or the
 * chunk's end, where a lone high half is held for the next read), which the state machine never does,
 * for the ESC ends the run of text there.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the sequence starts with ESC
const SGR = /\x1b(?<![\ud800-\udbff]\x1b)\[[0-9;:]*m/g;

/**
 * `chunk` without its complete SGR sequences, or undefined when it holds none. A colored log is line
 * text once its SGRs are gone; see {@link OutputSanitizer.pushStyledLineText}.
 */
export function withoutStyles(chunk: string): string | undefined {
  if (chunk.indexOf('\x1b[') === -1) return undefined;
  const plain = chunk.replace(SGR, '');
  return plain.length === chunk.length ? undefined : plain;
}

/** The longest SGR tail {@link cutOffStyleAt} looks for: longer parameter lists are rare. */
const MAX_CUT_OFF_STYLE_CHARS = 32;

/** The start of something that can only be an SGR still (`ESC`, `ESC [`, `ESC [ 1;3`). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the sequence starts with ESC
const STYLE_PREFIX = /^\x1b(?:\[[0-9;:]*)?$/;

/**
 * Where a sequence that may be an SGR starts, when the end of `chunk` cuts it off (`… ESC [ 3`), else
 * `chunk.length`: the part before it can take the styled-line-text route and the cut-off tail goes
 * through the state machine, which holds it for the next chunk.
 */
export function cutOffStyleAt(chunk: string): number {
  const esc = chunk.lastIndexOf('\x1b');
  if (esc === -1 || chunk.length - esc > MAX_CUT_OFF_STYLE_CHARS) return chunk.length;
  if (esc > 0) {
    const before = chunk.charCodeAt(esc - 1);
    if (before >= 0xd800 && before <= 0xdbff) return chunk.length; // see SGR: keep the pair's half with it
  }
  return STYLE_PREFIX.test(chunk.slice(esc)) ? esc : chunk.length;
}

/** OSC: characters that end, cancel or interrupt the string. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching controls is the job
const OSC_SPECIAL = /[\x07\x18\x1a\x1b\x80-\x9f]/g;
/** DCS/SOS/PM/APC: characters that end, cancel or interrupt the string (BEL does not end these). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching controls is the job
const STR_SPECIAL = /[\x18\x1a\x1b\x80-\x9f]/g;
/** Controls a terminal ignores inside an OSC string; they never reach the payload. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching controls is the job
const OSC_IGNORED = /[\x00-\x1f\x7f]/g;

/**
 * Streaming sanitizer: `push` decoded chunks in order; the sink receives lines, rewrites and OSC
 * payloads. See the module comment for the grammar.
 */
export class OutputSanitizer {
  private readonly maxPendingChars: number;
  private mode: Mode = Mode.Ground;
  /** Characters of the current sequence held back (0 in ground and while discarding). */
  private seqLength = 0;
  /** The current sequence outgrew `maxPendingChars`: drop it through its terminator. */
  private discarding = false;
  /** Collected OSC payload pieces (C0 removed); empty unless collecting an OSC. */
  private oscParts: string[] = [];
  /** A CR was seen and the character that decides it (LF or text) has not arrived yet. */
  private crPending = false;
  /** The high half of a surrogate pair that ended the previous chunk (or ''). */
  private heldHigh = '';
  /** Parameter and intermediate characters of the CSI being read (collected only for a screen sink). */
  private csiParams = '';
  /** See {@link OutputSanitizerOptions.columns}; 0: rewrites are not collapsed. */
  private columnsForCollapse: number;

  constructor(options: OutputSanitizerOptions) {
    const { maxPendingChars } = options;
    this.columnsForCollapse = options.columns ?? 0;
    if (!Number.isSafeInteger(maxPendingChars) || maxPendingChars < 1) {
      throw new TerminalError(
        'INVALID_ARGUMENT',
        `maxPendingChars must be a positive integer, got ${String(maxPendingChars)}`,
      );
    }
    this.maxPendingChars = maxPendingChars;
  }

  /** The terminal's width changed (see {@link OutputSanitizerOptions.columns}). */
  set columns(columns: number) {
    this.columnsForCollapse = columns;
  }

  /** Characters held back waiting for the rest of a sequence (or a trailing CR). Never > maxPendingChars. */
  get pendingLength(): number {
    return this.seqLength + (this.crPending ? 1 : 0) + this.heldHigh.length;
  }

  /** Sanitizes `chunk` (the next piece of the decoded stream) into `sink`. */
  push(chunk: string, sink: SanitizerSink): void {
    const end = chunk.length;
    if (end === 0) return;
    let i = this.heldHigh === '' ? 0 : this.releaseHighSurrogate(chunk, sink);
    while (i < end) i = this.step(chunk, i, sink);
  }

  /**
   * Whether the state machine is between sequences with nothing held (no surrogate half): the state the
   * line-text routes start from.
   */
  get atGround(): boolean {
    return this.mode === Mode.Ground && this.heldHigh === '';
  }

  /**
   * Runs the state machine over the start of `chunk` until a sequence that a previous chunk cut off is
   * complete (or the chunk ends), and returns where it stopped: 0 when no sequence was open. Whatever
   * follows can take a line-text route; a colored log read in 4 KiB pieces cuts an SGR at about every
   * fifth read, and both halves would otherwise go through the state machine whole.
   */
  finishSequence(chunk: string, sink: SanitizerSink): number {
    let i = 0;
    while (i < chunk.length && this.mode !== Mode.Ground) i = this.step(chunk, i, sink);
    return i;
  }

  /** One step of the state machine in the current mode, from `i`; returns where the next starts. */
  private step(chunk: string, i: number, sink: SanitizerSink): number {
    switch (this.mode) {
      case Mode.Ground:
        return this.ground(chunk, i, sink);
      case Mode.Escape:
        return this.escape(chunk, i, sink);
      case Mode.EscapeIntermediate:
        return this.escapeIntermediate(chunk, i);
      case Mode.Csi:
        return this.csi(chunk, i, sink);
      case Mode.Osc:
        return this.osc(chunk, i, sink);
      case Mode.OscEscape:
        return this.oscEscape(chunk, i, sink);
      case Mode.Str:
        return this.str(chunk, i);
      case Mode.StrEscape:
        return this.strEscape(chunk, i);
    }
  }

  /**
   * Same as {@link push} for a chunk known to be line text (`lineTextKind` in line-text.ts: printable
   * characters, TAB, LF and CR only), but without scanning it again: the chunk goes to the sink in one
   * call, CRLF line ends and all (see `SanitizerSink.textBlock`). Falls back to {@link push} when the
   * state or the chunk needs the state machine: inside a sequence, a held surrogate half, a CR that is
   * not part of a CRLF (except a trailing one, which stays pending exactly as in `push`), or a chunk
   * that ends in a high surrogate. `ascii`: the chunk is ASCII too (`LineTextKind.Ascii`), passed on to
   * `textBlock`. `lineFeeds`: where the chunk's line feeds are, when the scan that checked it knows
   * (then its CRs are checked without a search, and the sink gets them too).
   */
  pushLineText(chunk: string, sink: SanitizerSink, ascii = false, lineFeeds?: LineFeeds): void {
    const end = chunk.length;
    if (end === 0) return;
    if (this.mode !== Mode.Ground || this.heldHigh !== '') {
      this.push(chunk, sink);
      return;
    }
    const last = chunk.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.push(chunk, sink);
      return;
    }
    // Every CR must be the first half of a CRLF: a lone CR rewrites its line, which the state machine
    // decides. Only a CR at the very end stays pending for the next chunk, as in ground().
    const trailingCr = last === CR;
    if (!(lineFeeds === undefined ? everyCrEndsALine(chunk) : everyCrEndsALineOf(chunk, lineFeeds))) {
      this.push(chunk, sink);
      return;
    }
    const text = trailingCr ? chunk.slice(0, -1) : chunk;
    if (this.crPending && text !== '') {
      // As in ground(): a chunk that starts with a line end (LF, or the CRLF of CR CR LF) completes the
      // pending CR's line; one that starts with text rewrites it.
      this.crPending = false;
      const first = text.charCodeAt(0);
      if (first !== LF && first !== CR) sink.rewriteLine();
    }
    if (text !== '') {
      const hasLineFeed = lineFeeds === undefined ? text.indexOf('\n') !== -1 : lineFeeds.count > 0;
      if (hasLineFeed) sink.textBlock(text, ascii, lineFeeds);
      else sink.text(text);
    }
    if (trailingCr) this.crPending = true;
  }

  /**
   * Same as {@link push} for a chunk of styled line text — a colored log: `plain` is `chunk` without
   * its SGR sequences ({@link withoutStyles}), and it is line text. In ground state with nothing held,
   * `push(chunk)` would discard each SGR whole and handle the rest exactly as `plain` (a sequence is
   * transparent between a CR and what decides it), so `plain` takes the line-text route:
   * {@link pushLineText} with `ascii` and `lineFeeds` as the scan of `plain` found them. Otherwise the
   * chunk takes the state machine.
   */
  pushStyledLineText(
    chunk: string,
    plain: string,
    sink: SanitizerSink,
    ascii = false,
    lineFeeds?: LineFeeds,
  ): void {
    if (this.mode !== Mode.Ground || this.heldHigh !== '') this.push(chunk, sink);
    else this.pushLineText(plain, sink, ascii, lineFeeds);
  }

  /**
   * Same as {@link push} for a chunk that is not line text, routed the fast way where it can be: styled
   * line text (a colored log) is line text once its SGRs are gone, so it takes
   * {@link pushStyledLineText} — one regex pass and a scan instead of the state machine, whole blocks
   * for the scrollback. A read can cut an SGR in two: the state machine finishes the one the previous
   * chunk cut off ({@link finishSequence}) and holds the one this chunk cuts off ({@link cutOffStyleAt}),
   * so the rest still takes the styled route (a 4 KiB read of a colored log cuts one about every fifth
   * read, and both halves then went through the state machine whole). `lineFeeds` is the session's
   * scanner (its positions are passed on). Returns how much of the chunk took the styled route.
   */
  pushStyled(chunk: string, sink: SanitizerSink, lineFeeds: LineFeeds): StyledRoute {
    const from = this.finishSequence(chunk, sink);
    const to = Math.max(from, cutOffStyleAt(chunk));
    let styled: StyledRoute = 'none';
    if (from < to) {
      const body = from === 0 && to === chunk.length ? chunk : chunk.slice(from, to);
      const plain = this.atGround ? withoutStyles(body) : undefined;
      const kind = plain === undefined ? LineTextKind.None : lineTextKind(plain, lineFeeds);
      if (plain === undefined || kind === LineTextKind.None) this.push(body, sink);
      else {
        this.pushStyledLineText(body, plain, sink, kind === LineTextKind.Ascii, lineFeeds.known);
        styled = body === chunk ? 'whole' : 'part';
      }
    }
    if (to < chunk.length) this.push(chunk.slice(to), sink);
    return styled;
  }

  /** Emits the high surrogate held from the last chunk, joined with its low half when that starts `chunk`. */
  private releaseHighSurrogate(chunk: string, sink: SanitizerSink): number {
    const high = this.heldHigh;
    this.heldHigh = '';
    const first = chunk.charCodeAt(0);
    if (first >= 0xdc00 && first <= 0xdfff) {
      sink.text(high + chunk[0]);
      return 1;
    }
    sink.text(high); // a lone surrogate: passed on as is, like any other text
    return 0;
  }

  /**
   * Plain text up to the next control that is not part of a line end, then that control. A run may
   * span many lines: LF and CRLF belong to it (kept as they are) and it goes to the sink in
   * one call — `textBlock` when it holds a line end, `text` otherwise. It stops only at a lone CR
   * (one not followed by LF in this chunk), ESC, a C1 control or another C0 control.
   */
  private ground(chunk: string, start: number, sink: SanitizerSink): number {
    GROUND_BREAK.lastIndex = start;
    const found = GROUND_BREAK.test(chunk);
    const stop = found ? GROUND_BREAK.lastIndex - 1 : chunk.length;
    if (stop > start) {
      let textEnd = stop;
      const last = chunk.charCodeAt(stop - 1);
      if (!found && last >= 0xd800 && last <= 0xdbff) {
        // The chunk ends between the halves of a surrogate pair: hold the high half so the pair
        // reaches the sink in one piece (line byte counts and tails stay exact).
        textEnd = stop - 1;
        this.heldHigh = chunk[textEnd]!;
      }
      if (this.crPending) {
        // A run that starts with a line end (LF, or the CRLF of CR CR LF) completes the pending CR's
        // line; one that starts with text rewrites it.
        this.crPending = false;
        const first = chunk.charCodeAt(start);
        if (first !== LF && first !== CR) sink.rewriteLine();
      }
      if (textEnd > start) this.plainRun(chunk, start, textEnd, sink);
    }
    if (!found) return chunk.length;
    const control = chunk.charCodeAt(stop);
    if (control === BS && sink.backspace !== undefined) return this.backspaces(chunk, stop, sink);
    if (control === CR && this.columnsForCollapse > 0) return this.carriageReturns(chunk, stop, sink);
    this.control(control, sink);
    return stop + 1;
  }

  /**
   * The lone CR at `at`, and the rewrites of the line that follow it in this chunk: a progress bar prints
   * `\r S1 \r S2 … \r Sk` — a hundred frames per line. When each of S1 … S(k-1) is printable ASCII, not
   * empty and at most `columns` wide, they reach the sink as one text, their overlay O (what the row
   * shows after all of them), between the CR and the CR before Sk. Why that is exact: after a CR the
   * cursor is at column 0 of the same row; a segment that fits in the row (one that fills it exactly
   * only leaves a pending wrap, which the next CR cancels) overwrites its first columns and nothing
   * else, so the row after the segments is O over what it showed before, and the next CR returns to
   * column 0 as after O. Sk, which may end the line or wrap, goes its usual way.
   */
  private carriageReturns(chunk: string, at: number, sink: SanitizerSink): number {
    const columns = this.columnsForCollapse;
    let overlay = '';
    let frames = 0;
    let cr = at; // a lone CR: a segment starts after it
    for (;;) {
      const start = cr + 1;
      let end = start;
      while (end < chunk.length && end - start <= columns && isPrintableAscii(chunk.charCodeAt(end)))
        end += 1;
      // The segment must be followed by a lone CR (not the CR of a CRLF, not the chunk's end).
      if (end === start || end - start > columns || end + 1 >= chunk.length) break;
      if (chunk.charCodeAt(end) !== CR || chunk.charCodeAt(end + 1) === LF) break;
      const segment = chunk.slice(start, end);
      overlay = segment.length >= overlay.length ? segment : segment + overlay.slice(segment.length);
      frames += 1;
      cr = end;
    }
    if (frames < 2) {
      this.control(CR, sink);
      return at + 1;
    }
    // As control(CR) and the text after it would: the text decides the CR as a rewrite.
    this.crPending = false;
    sink.rewriteLine();
    sink.text(overlay);
    this.crPending = true; // the CR before the last segment
    return cr + 1;
  }

  /**
   * The BS at `at`, and the spinner frames that follow it: pairs of one printable ASCII character and a
   * BS (`|\b/\b-\b…`). Only the last pair reaches the sink. Why that is exact: after any character and
   * BS, the cursor stands at a column x with x + 1 < cols (or at 0 on a one-column screen), whatever it
   * was before — the character was written before it, and BS cancels a pending wrap and moves left. From
   * there each pair writes column x and returns to it, so a run of pairs only leaves its last character.
   * A spinner's frames then cost one sink call per chunk instead of two per frame.
   */
  private backspaces(chunk: string, at: number, sink: SanitizerSink): number {
    this.decideCr(sink);
    sink.backspace?.();
    let next = at + 1;
    let lastFrame = -1;
    while (
      next + 1 < chunk.length &&
      chunk.charCodeAt(next + 1) === BS &&
      isPrintableAscii(chunk.charCodeAt(next))
    ) {
      lastFrame = next;
      next += 2;
    }
    if (lastFrame !== -1) {
      sink.text(chunk[lastFrame]!);
      sink.backspace?.();
    }
    return next;
  }

  /** Hands `chunk[start, end)` (plain text, LF and CRLF only) to the sink in one call. */
  private plainRun(chunk: string, start: number, end: number, sink: SanitizerSink): void {
    let run = start === 0 && end === chunk.length ? chunk : chunk.slice(start, end);
    if (run.indexOf('\n') === -1) {
      sink.text(run); // no line end, hence no CR either
      return;
    }
    if (run.length * 2 < chunk.length) run = detach(run);
    sink.textBlock(run, false);
  }

  /** A C0 or C1 control in ground state. */
  private control(code: number, sink: SanitizerSink): void {
    switch (code) {
      case LF:
      case VT:
      case FF:
        this.crPending = false;
        sink.newline();
        return;
      case CR:
        // Decided by the next character that is not CR or part of an escape sequence (LF or text),
        // which may arrive in a later chunk.
        this.crPending = true;
        return;
      case ESC:
        this.begin(Mode.Escape);
        return;
      case C1_CSI:
        this.begin(Mode.Csi);
        return;
      case C1_OSC:
        this.begin(Mode.Osc);
        return;
      case C1_DCS:
      case C1_SOS:
      case C1_PM:
      case C1_APC:
        this.begin(Mode.Str);
        return;
      case BS:
        if (sink.backspace !== undefined) {
          this.decideCr(sink);
          sink.backspace();
        }
        return;
      default:
        return; // BEL, NUL, DEL, stray ST and other noise
    }
  }

  /** After ESC: the next character selects the kind of sequence. */
  private escape(chunk: string, i: number, sink: SanitizerSink): number {
    const code = chunk.charCodeAt(i);
    switch (code) {
      case 0x5b: // [
        this.enter(Mode.Csi);
        return i + 1;
      case 0x5d: // ]
        this.enter(Mode.Osc);
        return i + 1;
      case 0x50: // P
      case 0x58: // X
      case 0x5e: // ^
      case 0x5f: // _
        this.enter(Mode.Str);
        return i + 1;
    }
    if (code >= 0x20 && code <= 0x2f) {
      this.enter(Mode.EscapeIntermediate);
      return i + 1;
    }
    this.finish();
    // A final byte completes a two-character escape; anything else abandons the ESC and is read anew.
    if (code < 0x30 || code > 0x7e) return i;
    if (sink.escape !== undefined) {
      this.decideCr(sink);
      sink.escape(code);
    }
    return i + 1;
  }

  /** `ESC` + intermediates: waits for the final byte (e.g. `B` of `ESC ( B`). */
  private escapeIntermediate(chunk: string, start: number): number {
    const stop = skipRange(chunk, start, 0x20, 0x2f);
    this.grow(stop - start);
    if (stop === chunk.length) return stop;
    const code = chunk.charCodeAt(stop);
    this.finish();
    return code >= 0x30 && code <= 0x7e ? stop + 1 : stop;
  }

  /** CSI parameters and intermediates, then the final byte. */
  private csi(chunk: string, start: number, sink: SanitizerSink): number {
    const stop = skipRange(chunk, start, 0x20, 0x3f);
    this.grow(stop - start);
    const collect = sink.csi !== undefined && !this.discarding;
    if (collect && stop > start) this.csiParams += chunk.slice(start, stop);
    if (stop === chunk.length) return stop;
    const code = chunk.charCodeAt(stop);
    const params = this.csiParams;
    const complete = collect && code >= 0x40 && code <= 0x7e;
    this.finish();
    // Not a final byte (a control, ESC, a non-ASCII character): the sequence is malformed; the
    // character is read again in ground state so text and line ends are never swallowed.
    if (code < 0x40 || code > 0x7e) return stop;
    // SGR (colors) changes no cell a reader sees: not passed on.
    if (complete && code !== LETTER_M) {
      this.decideCr(sink);
      sink.csi!(params, code);
    }
    return stop + 1;
  }

  /** A pending CR is decided by a cursor or screen edit: the carriage return happens first. */
  private decideCr(sink: SanitizerSink): void {
    if (!this.crPending) return;
    this.crPending = false;
    sink.rewriteLine();
  }

  /** OSC payload up to its terminator. */
  private osc(chunk: string, start: number, sink: SanitizerSink): number {
    OSC_SPECIAL.lastIndex = start;
    const found = OSC_SPECIAL.test(chunk);
    const stop = found ? OSC_SPECIAL.lastIndex - 1 : chunk.length;
    if (stop > start) this.collect(chunk, start, stop);
    if (!found) return stop;
    switch (chunk.charCodeAt(stop)) {
      case BEL:
      case C1_ST:
        this.deliver(sink);
        return stop + 1;
      case ESC:
        this.mode = Mode.OscEscape;
        this.grow(1);
        return stop + 1;
      default:
        // CAN/SUB cancel the string, another C1 control interrupts it; either is then read in ground
        // state (where CAN and SUB are dropped).
        this.finish();
        return stop;
    }
  }

  /** After ESC inside an OSC: `\` completes it; anything else abandons it and starts a new escape. */
  private oscEscape(chunk: string, i: number, sink: SanitizerSink): number {
    if (chunk.charCodeAt(i) === BACKSLASH) {
      this.deliver(sink);
      return i + 1;
    }
    this.begin(Mode.Escape);
    return i;
  }

  /** DCS/SOS/PM/APC content up to ST (discarded). */
  private str(chunk: string, start: number): number {
    STR_SPECIAL.lastIndex = start;
    const found = STR_SPECIAL.test(chunk);
    const stop = found ? STR_SPECIAL.lastIndex - 1 : chunk.length;
    this.grow(stop - start);
    if (!found) return stop;
    switch (chunk.charCodeAt(stop)) {
      case ESC:
        this.mode = Mode.StrEscape;
        this.grow(1);
        return stop + 1;
      case C1_ST:
        this.finish();
        return stop + 1;
      default:
        this.finish(); // CAN/SUB or another C1 control: as in an OSC
        return stop;
    }
  }

  /** After ESC inside a DCS/SOS/PM/APC: `\` completes it; anything else starts a new escape. */
  private strEscape(chunk: string, i: number): number {
    if (chunk.charCodeAt(i) === BACKSLASH) {
      this.finish();
      return i + 1;
    }
    this.begin(Mode.Escape);
    return i;
  }

  /** Starts a new sequence whose introducer is one character. */
  private begin(mode: Mode): void {
    this.seqLength = 0;
    this.discarding = false;
    this.enter(mode);
  }

  /** Moves to `mode`, counting its introducer character. */
  private enter(mode: Mode): void {
    this.mode = mode;
    if (mode === Mode.Osc) this.oscParts = [];
    this.grow(1);
  }

  /**
   * Counts `count` more characters into the current sequence. Once the sequence (plus a pending CR)
   * would exceed `maxPendingChars`, it is dropped: nothing more is held and the rest of it, through its
   * terminator, is discarded. The decision depends only on the stream, never on chunk boundaries.
   */
  private grow(count: number): void {
    if (this.discarding) return;
    this.seqLength += count;
    if (this.seqLength + (this.crPending ? 1 : 0) > this.maxPendingChars) {
      this.discarding = true;
      this.seqLength = 0;
      this.oscParts = [];
    }
  }

  /** Adds `chunk[start, stop)` to the OSC payload, without the controls a terminal ignores there. */
  private collect(chunk: string, start: number, stop: number): void {
    this.grow(stop - start);
    if (this.discarding) return;
    const piece = chunk.slice(start, stop);
    OSC_IGNORED.lastIndex = 0;
    this.oscParts.push(OSC_IGNORED.test(piece) ? piece.replace(OSC_IGNORED, '') : piece);
  }

  /** Completes the OSC: its payload goes to the sink unless it was discarded for size. */
  private deliver(sink: SanitizerSink): void {
    const payload = this.discarding ? undefined : this.oscParts.join('');
    this.finish();
    if (payload !== undefined) sink.osc(payload);
  }

  /** Back to ground state; the sequence is complete or abandoned. */
  private finish(): void {
    this.mode = Mode.Ground;
    this.seqLength = 0;
    this.discarding = false;
    if (this.oscParts.length > 0) this.oscParts = [];
    if (this.csiParams !== '') this.csiParams = '';
  }
}

/**
 * A copy of `s` that shares no memory with the chunk it was sliced from (a slice keeps its whole parent
 * alive). Concatenating builds a new flat string; V8 has no direct copy.
 */
function detach(s: string): string {
  return ` ${s}`.slice(1);
}

/**
 * Index of the first character at or after `start` outside [low, high] (or the length). A plain loop:
 * CSI parameter runs are a few characters, too short to amortize a regex call.
 */
function skipRange(chunk: string, start: number, low: number, high: number): number {
  let i = start;
  while (i < chunk.length) {
    const code = chunk.charCodeAt(i);
    if (code < low || code > high) break;
    i += 1;
  }
  return i;
}

/** True when every CR of `chunk` is followed by an LF, or is its last character. */
function everyCrEndsALine(chunk: string): boolean {
  const end = chunk.length;
  for (let cr = chunk.indexOf('\r'); cr !== -1 && cr < end - 1; cr = chunk.indexOf('\r', cr + 2)) {
    if (chunk.charCodeAt(cr + 1) !== LF) return false;
  }
  return true;
}

/** {@link everyCrEndsALine} from the scan's counts: the CRs before line feeds and at the end are all of them. */
function everyCrEndsALineOf(chunk: string, lineFeeds: LineFeeds): boolean {
  const { positions, count } = lineFeeds;
  let endingCrs = chunk.charCodeAt(chunk.length - 1) === CR ? 1 : 0;
  for (let k = 0; k < count; k++) {
    const lf = positions[k]!;
    if (lf > 0 && chunk.charCodeAt(lf - 1) === CR) endingCrs += 1;
  }
  return endingCrs === lineFeeds.crCount;
}
