/**
 * The session's one terminal model (docs/decisions/0005-terminal-model.md): a single @xterm/headless
 * terminal is the source of truth for the screen, the modes, the alternate screen, the replies (xterm's
 * own `onData`: DA, DSR, CPR, `CSI 18 t`) and the prompt marker (an OSC 133 handler on xterm's parser).
 * Nothing else models the terminal. The scrollback (a LineRing) receives the lines that leave xterm's
 * screen, and the lines a plain-run fast path takes in front of it.
 *
 * Two states:
 *
 * - **pass-through**: xterm is in its default state (main screen, no scroll region, no insert mode, no
 *   character set, parser between sequences) and its cursor stands on a row with nothing at or after it
 *   and nothing below. Output that cannot change any of that (line text; line text with SGR colours,
 *   stripped for the scrollback; ASCII text whose CRs and BSs only move the cursor within the open row,
 *   computed in a row buffer) goes to the scrollback directly, and xterm is fed **lazily**: the text
 *   waits (lazy-feed.ts), and only its last `rows` lines (after a fresh line and the SGRs still in
 *   effect) are parsed when xterm is needed: before a chunk the fast path cannot take, a reader's
 *   screen, a prompt check.
 *   Exact: every row those lines leave on screen was scrolled in blank in the full feed too, so screen,
 *   cursor and pen end the same; only xterm's own scrollback differs, which nothing reads.
 * - **engaged**: everything else. Each chunk is parsed at once (synchronously, so a marker or a query is
 *   seen before the session looks), and lines enter the scrollback when their rows scroll off the top of
 *   xterm's screen (wrapped rows joined). Engaging takes the lines still on screen back from the ring
 *   (they may be redrawn). A fast-path chunk disengages again once the cursor stands where nothing
 *   follows it.
 *
 * xterm's own scrollback holds rows only between a parse and their harvest, then is dropped through
 * xterm-internals.ts (no sequence of ours is ever parsed inside the program's: trap 2 of 0005). The
 * string-sequence bound and the query budget (hostile-stream-guard.ts) stand in front of every parse of
 * the program's output; pass-through never needs them (it is taken only between sequences and holds no
 * introducer or query).
 */
import xtermSerialize from '@xterm/addon-serialize';
import xtermHeadless from '@xterm/headless';
import { TerminalError } from '../../shared/errors.js';
import type { TerminalSnapshot } from '../../shared/types.js';
import { LineFeeds } from '../output/line-feeds.js';
import type { LineRing } from '../output/line-ring.js';
import { LineTail } from '../output/line-tail.js';
import { LineTextKind, lineTextKind } from '../output/line-text.js';
import { HostileStreamGuard } from './hostile-stream-guard.js';
import { LazyFeed, SGR } from './lazy-feed.js';
import { OpenRow } from './open-row.js';
import { ParserState, type XtermInternals, xtermInternals } from './xterm-internals.js';

/**
 * Largest piece handed to one synchronous parse. A piece scrolls at most one row per character, so it
 * bounds the rows xterm must hold until their harvest ({@link XTERM_SCROLLBACK}), and with them memory.
 */
const PARSE_SLICE_CHARS = 512;
/** xterm's own scrollback: the rows one parse slice can scroll off (harvested and dropped after it). */
const XTERM_SCROLLBACK = PARSE_SLICE_CHARS + 64;
/** {@link TerminalModelOptions.maxLineChars} by default (the session's `maxReadBytes` by default). */
const DEFAULT_MAX_LINE_CHARS = 1024 * 1024;
/**
 * Lazily fed text without enough line feeds to compact (a line longer than the screen) is parsed once it
 * holds this many characters, so the lazy feed stays bounded.
 */
const MAX_DEFERRED_CHARS = 64 * 1024;
/** How far back from a chunk's end an unfinished escape is looked for (a scan of it all costs more). */
const UNFINISHED_ESCAPE_WINDOW = 32;
/**
 * The start of an SGR cut by the chunk's end: the only sequence pass-through takes, so the only one worth
 * carrying to the next chunk (any other sequence engages xterm, which parses it across chunks itself).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are made of control codes
const SGR_PREFIX = /^\x1b(?:\[[0-9;:]*)?$/;
/** An ESC that does not start an SGR. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are made of control codes
const NOT_SGR = /\x1b(?!\[[0-9;:]*m)/;
/** A CR not followed by LF. */
const BARE_CR = /\r(?!\n)/;
/** ASCII printable, CR, LF and BS only: what the row buffer handles exactly. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the class is defined by control codes
const ROW_EDIT_TEXT = /^[\x20-\x7e\r\n\x08]*$/;
/** A chunk that starts with what joins the character before it: a mark, a format character, a jamo. */
const JOINING_START = /^[\p{M}\p{Cf}\u1160-\u11ff]/u;
/** Where the serialize addon switches to the alternate screen. */
const ALTERNATE_SCREEN_START = '\x1b[?1049h\x1b[H';

/** The screen as rendered: `rows` lines, trailing blanks trimmed, and the cursor. */
export interface RenderedScreen {
  lines: string[];
  cursor: { row: number; col: number };
}

/**
 * The text of the output as it is written, for those who follow it rather than read it: what is printed
 * (pass-through text as it comes; parsed output as xterm's parser prints it), a CR that is no line end
 * as a rewrite of the line, line feeds as line ends. Escape sequences tell nothing: a redraw's text
 * comes again as new text.
 */
export interface StreamListener {
  /** Whether anyone follows now (else nothing is computed for them). */
  active(): boolean;
  /** Text of the current line. */
  text(s: string): void;
  /** End of line. */
  newline(): void;
  /** Several lines at once. */
  textBlock(block: string, ascii: boolean): void;
  /** The current line is written again from its start. */
  rewriteLine(): void;
  /**
   * A read's row-edit text as written, in one call (row-edit-text.ts): ASCII whose CRs and BSs move the
   * cursor within the open row, which `tellRowEdits` there tells call by call.
   */
  rowEdits(data: string): void;
}

/** A listener for nobody. */
const NO_LISTENER: StreamListener = {
  active: () => false,
  text: () => undefined,
  newline: () => undefined,
  textBlock: () => undefined,
  rewriteLine: () => undefined,
  rowEdits: () => undefined,
};

/**
 * Rewrites remembered for {@link TerminalModel.rewrittenSince}. A mark older than the oldest one kept is
 * answered conservatively (from the oldest kept rewrite's line or earlier).
 */
const REWRITES_KEPT = 64;

/** What a terminal model is built from. */
export interface TerminalModelOptions {
  rows: number;
  cols: number;
  /** The scrollback. */
  ring: LineRing;
  /** Bound of string sequences (hostile-stream-guard.ts). */
  maxStringSequenceChars?: number;
  /** Most characters of one line held while its head scrolled off and its tail did not. */
  maxLineChars?: number;
  /** The lazy feed's bound in characters ({@link MAX_DEFERRED_CHARS}; smaller in tests). */
  maxDeferredChars?: number;
  /** A reply of xterm's to a query, with the number of owned prompt markers parsed before it. */
  reply(data: string, markersBefore: number): void;
  /** Who follows the text as it appears (the send in the slot, the live stream). */
  listener?: StreamListener;
  /**
   * An OSC 133 payload (`133;…`) was parsed: true when it is one of the session's own markers (nonce
   * checked by the caller), which the model then places.
   */
  marker(payload: string): boolean;
}

/** The terminal model of one session. */
export class TerminalModel {
  private rows: number;
  private cols: number;
  private readonly ring: LineRing;
  private readonly terminal: InstanceType<typeof xtermHeadless.Terminal>;
  private readonly internals: XtermInternals;
  private readonly guard: HostileStreamGuard;
  private readonly lineFeeds = new LineFeeds();
  private readonly listener: StreamListener;
  private disposed = false;
  /** Pass-through (true) or engaged. */
  private passing = true;
  /** Pass-through: text the ring has that xterm has not parsed yet. */
  private readonly lazyFeed: LazyFeed;
  /** Pass-through: the open row as shown, and the cursor column in it (ASCII open rows only). */
  private readonly openRow: OpenRow;
  /** Row edits not yet in the ring's open line / in the lazy feed (see syncRow). */
  private rowToRing = false;
  private rowToXterm = false;
  /** A chunk's unfinished end (a CR whose LF may follow, a cut escape, half a pair), for the next chunk. */
  private carry = '';
  /** Engaged: buffer rows (absolute index) below this one are in the ring already. */
  private harvested = 0;
  /** Engaged: the head of a wrapped line whose first rows scrolled off while the rest is on screen. */
  private pendingHead: LineTail | undefined;
  private readonly maxLineChars: number;
  /** Engaged: sequence number of the ring line that holds the row at `harvested`. */
  private baseSeq = 0;
  /** Engaged: the lines from `baseSeq` on as a reader may have seen them last (the last one open). */
  private shown: string[] = [];
  /** The ring holds `shown` provisionally after its committed lines. */
  private ringHoldsShown = false;
  /** Parsed output may have changed the screen since the last {@link sync}. */
  private dirty = false;
  /** Counts rewrites; `rewriteSeqs[k]` is the first line rewritten by rewrite `rewriteCount - n + k`. */
  private rewriteCount = 0;
  private rewriteSeqs: number[] = [];
  /** The listener is told what the parser prints now (the program's output, not the lazy feed). */
  private telling = false;
  /** A CR was parsed: the next printed text rewrites the line, unless a line feed comes first. */
  private crPending = false;
  private markers = 0;
  /** Where the latest owned marker was parsed (absolute row, column); row -1: none since the reset. */
  private markerRow = -1;
  private markerCol = -1;
  /** DECTCEM, followed through parser hooks that let xterm's own handling run. */
  private cursorVisible = true;
  private serializer: InstanceType<typeof xtermSerialize.SerializeAddon> | undefined;

  constructor(options: TerminalModelOptions) {
    const { rows, cols } = options;
    this.rows = rows;
    this.cols = cols;
    this.ring = options.ring;
    this.listener = options.listener ?? NO_LISTENER;
    this.maxLineChars = options.maxLineChars ?? DEFAULT_MAX_LINE_CHARS;
    const model = this;
    this.lazyFeed = new LazyFeed(
      {
        get rows() {
          return model.rows;
        },
        get cols() {
          return model.cols;
        },
        get cursorX() {
          return model.terminal.buffer.active.cursorX;
        },
      },
      options.maxDeferredChars ?? MAX_DEFERRED_CHARS,
    );
    this.openRow = new OpenRow(cols);
    this.terminal = new xtermHeadless.Terminal({
      cols,
      rows,
      scrollback: XTERM_SCROLLBACK,
      allowProposedApi: true,
      windowOptions: { getWinSizeChars: true },
      logLevel: 'off', // xterm 6 warns once that writeSync is deprecated (xterm-internals.ts)
    });
    this.internals = xtermInternals(this.terminal);
    const listener = this.listener;
    this.internals.observeText({
      wantsText: () => this.telling,
      print: (text) => {
        if (!this.telling) return;
        if (this.crPending) {
          this.crPending = false;
          listener.rewriteLine();
        }
        listener.text(text);
      },
      lineFeed: () => {
        if (!this.telling) return;
        this.crPending = false;
        listener.newline();
      },
      carriageReturn: () => {
        if (this.telling) this.crPending = true;
      },
    });
    this.guard = new HostileStreamGuard(options.maxStringSequenceChars);
    this.terminal.onData((data) => {
      this.guard.replied();
      options.reply(data, this.markers);
    });
    const parser = this.terminal.parser;
    parser.registerOscHandler(133, (payload) => {
      if (!options.marker(`133;${payload}`)) return false;
      // The shell's own prompt means a full-screen program that died without leaving is gone.
      if (this.terminal.buffer.active.type === 'alternate') this.internals.leaveAlternateScreen();
      const buffer = this.terminal.buffer.active;
      this.markers += 1;
      this.markerRow = buffer.baseY + buffer.cursorY;
      this.markerCol = buffer.cursorX;
      return true;
    });
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

  /** Owned prompt markers parsed so far (exact without a flush: a marker is an escape, parsed at once). */
  get markersParsed(): number {
    return this.markers;
  }

  /** Whether the alternate screen is active. */
  get alternateScreen(): boolean {
    return !this.disposed && this.terminal.buffer.active.type === 'alternate';
  }

  /** Whether the terminal is in application cursor keys mode (DECCKM). */
  get applicationCursorKeys(): boolean {
    return !this.disposed && this.terminal.modes.applicationCursorKeysMode;
  }

  /** Output taken and not parsed yet (the lazy feed and a carried end), in characters. */
  get unparsedChars(): number {
    return this.lazyFeed.chars + this.carry.length;
  }

  /**
   * Whether the stream stands between sequences once flushed: a snapshot taken then is a point a
   * fresh terminal can continue from.
   */
  get atGround(): boolean {
    return this.carry.length === 0 && this.internals.parserState() === ParserState.GROUND;
  }

  /** One read of the pty, decoded; `utf8`: its bytes, when they are exactly the UTF-8 of `chunk`. */
  write(chunk: string, utf8?: Uint8Array): void {
    if (this.disposed) return;
    let data = this.carry.length === 0 ? chunk : this.carry + chunk;
    // The bytes serve the pass-through only while they are the text's: not with a carried end before.
    let bytes = this.carry.length === 0 ? utf8 : undefined;
    this.carry = '';
    // A pty read never splits a surrogate pair (its decoder makes whole code points), a caller may; xterm
    // would print half a pair as U+FFFD.
    if (isHighSurrogate(data.charCodeAt(data.length - 1))) {
      this.carry = data.slice(-1);
      data = data.slice(0, -1);
      bytes = undefined;
    }
    if (data.length === 0) return;
    const following = this.listener.active();
    if (this.crPending && data.charCodeAt(0) !== 0x0a) {
      // The CR a parse ended with is no line end: what follows rewrites the line.
      this.crPending = false;
      if (following) this.listener.rewriteLine();
    }
    if (this.passing || (mayPassThrough(data) && this.canDisengage(data))) {
      const whole = data.length;
      data = this.holdUnfinishedEnd(data);
      if (data.length === 0) return;
      // What is held is ASCII (a CR, an SGR's start): one byte per character.
      if (bytes !== undefined && data.length < whole)
        bytes = bytes.subarray(0, bytes.length - (whole - data.length));
      if (this.passThrough(data, following, bytes)) {
        this.crPending = false; // a CRLF's line end was told with the text
        return;
      }
    }
    this.engage();
    this.parseNow(data, following);
  }

  /** A counter that {@link rewrittenSince} takes: read it when taking a mark. */
  get rewriteEpoch(): number {
    return this.rewriteCount;
  }

  /**
   * The lowest sequence number of a line a reader may have read complete that was rewritten after
   * `epoch` (a {@link rewriteEpoch} value), or Infinity when none was.
   */
  rewrittenSince(epoch: number): number {
    const newer = this.rewriteCount - epoch;
    if (newer <= 0) return Number.POSITIVE_INFINITY;
    const seqs = this.rewriteSeqs;
    let lowest = Number.POSITIVE_INFINITY;
    for (let k = Math.max(0, seqs.length - newer); k < seqs.length; k++) lowest = Math.min(lowest, seqs[k]!);
    return lowest;
  }

  /** Parses what waits lazily (and a carried end), so xterm's state is that of the stream's end. */
  flush(): void {
    if (this.disposed) return;
    // Half a surrogate pair stays held: it shows nothing until its other half comes.
    const held = isHighSurrogate(this.carry.charCodeAt(this.carry.length - 1)) ? 1 : 0;
    if (this.carry.length > held) {
      const carry = this.carry.slice(0, this.carry.length - held);
      this.carry = this.carry.slice(this.carry.length - held);
      this.engage();
      this.parseNow(carry, this.listener.active());
      return;
    }
    this.feedDeferred();
  }

  /** Resizes xterm (the rows it reflows are taken back into the ring as they leave the screen). */
  resize(rows: number, cols: number): void {
    if (this.disposed || (rows === this.rows && cols === this.cols)) return;
    this.flush();
    this.engage();
    this.harvest();
    this.dirty = true;
    // Reflow moves rows: find the first row not in the ring again by counting logical lines.
    const before = this.terminal.buffer.normal;
    let harvestedLines = 0;
    for (let y = 0; y < this.harvested; y++) if (!before.getLine(y)?.isWrapped) harvestedLines++;
    // A marker on the cursor's row stays where it was in front of the cursor (a prompt at the cursor).
    const active = this.terminal.buffer.active;
    const markerBeforeCursor =
      this.markerRow === active.baseY + active.cursorY ? active.cursorX - this.markerCol : -1;
    this.terminal.resize(cols, rows);
    this.rows = rows;
    this.cols = cols;
    this.openRow.resize(cols);
    const after = this.terminal.buffer.normal;
    let y = 0;
    for (let starts = 0; y < after.length; y++) {
      if (!after.getLine(y)?.isWrapped) starts++;
      if (starts > harvestedLines) break;
    }
    this.harvested = y;
    const resized = this.terminal.buffer.active;
    const markerCol = resized.cursorX - markerBeforeCursor;
    if (markerBeforeCursor >= 0 && markerCol >= 0) {
      this.markerRow = resized.baseY + resized.cursorY;
      this.markerCol = markerCol;
    } else this.markerRow = -1; // elsewhere: its place after a reflow is unknown
    this.harvest();
  }

  /** Rows of the active screen, trailing blanks trimmed (programs clear with spaces too), and the cursor. */
  renderedScreen(): RenderedScreen | undefined {
    if (this.disposed) return undefined;
    this.flush();
    const buffer = this.terminal.buffer.active;
    return {
      lines: this.viewportLines(),
      cursor: { row: buffer.cursorY, col: Math.min(buffer.cursorX, this.cols - 1) },
    };
  }

  /**
   * Prompt evidence (SPEC §4.2 rule 1): whether the latest owned marker is
   * followed on its row by exactly `prompt`, with the cursor right after it.
   */
  promptShown(prompt: string): boolean {
    if (this.markerRow < 0 || this.disposed) return false;
    this.flush();
    const buffer = this.terminal.buffer.active;
    if (buffer.baseY + buffer.cursorY !== this.markerRow) return false;
    const line = buffer.getLine(this.markerRow);
    const after = line?.translateToString(false, this.markerCol) ?? '';
    if (after.trimEnd() !== prompt.trimEnd()) return false;
    return buffer.cursorX === this.markerCol + prompt.length;
  }

  /**
   * For readers: makes the ring end with what the screen shows. Engaged, the rows not scrolled off are
   * held in the ring provisionally after the committed lines, until the screen changes them.
   */
  sync(): void {
    if (this.disposed) return;
    if (this.passing) {
      this.syncRow();
      return;
    }
    this.settlePendingHead();
    if (!this.dirty && this.ringHoldsShown) return;
    this.dirty = false;
    const lines = this.view();
    const shown = this.shown;
    let same = 0;
    while (same < lines.length && same < shown.length && lines[same] === shown[same]) same += 1;
    // A changed line that was complete when a reader saw it: the reader must be shown it again.
    if (same < shown.length - 1) this.noteRewrite(this.baseSeq + same);
    let from = 0;
    if (this.ringHoldsShown) {
      // The old open line may be complete now, and the new open line may have been complete before.
      from = Math.max(0, Math.min(same, shown.length - 1, lines.length - 1));
      this.ring.retract(this.baseSeq + from);
    }
    for (let k = from; k < lines.length; k++) {
      if (k > from) this.ring.newline();
      this.ring.text(lines[k]!);
    }
    this.shown = lines;
    this.ringHoldsShown = true;
  }

  /**
   * Engaged: the logical lines from the row at `harvested` (its held head included) of the main screen —
   * also while a full-screen program shows the alternate one: its screen never reaches the scrollback
   * (it is read on its own), and the main screen waits underneath (trap 1 of 0005). Down to the last
   * row that shows something, as a person sees it (a redraw in progress leaves the previous frame's
   * lines below the cursor).
   */
  private view(): string[] {
    const buffer = this.terminal.buffer.normal;
    let to = buffer.cursorY + 1;
    for (let y = this.rows - 1; y >= to; y--) {
      if ((buffer.getLine(buffer.baseY + y)?.translateToString(true) ?? '') !== '') {
        to = y + 1;
        break;
      }
    }
    const lines = this.rowsAsLines(this.harvested, buffer.baseY + to, buffer);
    const head = this.pendingHead?.toString();
    if (lines.length > 0) lines[0] = (head ?? '') + lines[0];
    else if (head !== undefined) lines.push(head);
    return lines;
  }

  private noteRewrite(seq: number): void {
    this.rewriteCount += 1;
    this.rewriteSeqs.push(seq);
    if (this.rewriteSeqs.length > REWRITES_KEPT) this.rewriteSeqs.shift();
  }

  /** Takes the provisionally held lines out of the ring (something is committed before them). */
  private releaseShown(): void {
    if (!this.ringHoldsShown) return;
    this.ring.retract(this.baseSeq);
    this.ringHoldsShown = false;
  }

  /** Engaged: lines that left the screen go to the ring for good. */
  private commit(lines: string[]): void {
    if (lines.length === 0) return;
    this.releaseShown();
    const shown = this.shown;
    for (const line of lines) {
      const before = shown.shift();
      if (before !== undefined && shown.length > 0 && before !== line) this.noteRewrite(this.ring.headSeq);
      this.ring.text(line);
      this.ring.newline();
    }
    this.baseSeq = this.ring.headSeq;
    this.dirty = true;
  }

  /** The terminal serialized (SPEC §2) at the stream's end. Throws SESSION_CLOSED after dispose. */
  snapshot(): TerminalSnapshot {
    if (this.disposed) throw new TerminalError('SESSION_CLOSED', 'the terminal is closed');
    this.flush();
    if (this.serializer === undefined) {
      this.serializer = new xtermSerialize.SerializeAddon();
      this.terminal.loadAddon(this.serializer);
    }
    const { terminal } = this;
    const buffer = terminal.buffer.active;
    // The addon redraws cells, attributes, modes, the alternate screen and the cursor's place, not
    // whether the cursor is shown. It draws the alternate screen as if its first cell started from
    // default attributes, but writes the current attributes just before switching: they are reset
    // where the alternate screen begins (a cell's text never holds an ESC, so the first switch is the
    // addon's own).
    const serialized = this.serializer
      .serialize({ scrollback: 0 })
      .replace(ALTERNATE_SCREEN_START, `${ALTERNATE_SCREEN_START}\x1b[0m`);
    return {
      rows: terminal.rows,
      cols: terminal.cols,
      ansi: serialized + (this.cursorVisible ? '' : '\x1b[?25l'),
      lines: this.viewportLines(),
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

  /** Disposes the terminal; later writes are ignored. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.lazyFeed.clear();
    this.carry = '';
    this.terminal.dispose();
  }

  private viewportLines(): string[] {
    const buffer = this.terminal.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < this.rows; y++) {
      lines.push(
        buffer
          .getLine(buffer.viewportY + y)
          ?.translateToString(true)
          .trimEnd() ?? '',
      );
    }
    return lines;
  }

  // --- pass-through -----------------------------------------------------------------------------

  /**
   * Cuts an end that the next chunk may complete: a final CR (its LF may follow), half a surrogate pair,
   * a cut SGR. None of them shows anything yet, so a reader's view without them is exact.
   */
  private holdUnfinishedEnd(data: string): string {
    if (data.charCodeAt(data.length - 1) === 0x0d) {
      this.carry = `\r${this.carry}`;
      return data.slice(0, -1);
    }
    let esc = data.indexOf('\x1b', Math.max(0, data.length - UNFINISHED_ESCAPE_WINDOW));
    for (let next = esc; next !== -1; next = data.indexOf('\x1b', next + 1)) esc = next;
    if (esc !== -1 && SGR_PREFIX.test(data.slice(esc))) {
      this.carry = data.slice(esc) + this.carry;
      return data.slice(0, esc);
    }
    return data;
  }

  /** Takes `data` on the fast path when it can; false: it must be parsed. `utf8`: as for `write`. */
  private passThrough(data: string, following: boolean, utf8: Uint8Array | undefined): boolean {
    // After a CR or BS the cursor may stand inside the open row: text then overwrites (editRow).
    const atLineEnd = this.openRow.atEnd;
    const kind = lineTextKind(data, this.lineFeeds, utf8);
    if (kind !== LineTextKind.None) {
      if (atLineEnd && !this.hasBareCr(data, kind)) {
        this.appendLineText(data, data, kind === LineTextKind.Ascii, following, utf8);
        return true;
      }
      return kind === LineTextKind.Ascii && data.indexOf('\t') === -1 && this.editRow(data, following);
    }
    if (data.indexOf('\x1b') === -1) return ROW_EDIT_TEXT.test(data) && this.editRow(data, following);
    if (!atLineEnd) return false;
    const plain = data.replace(SGR, '');
    if (plain.indexOf('\x1b') !== -1) return false;
    const plainKind = lineTextKind(plain, this.lineFeeds);
    if (plainKind === LineTextKind.None || BARE_CR.test(plain)) return false;
    this.appendLineText(plain, data, plainKind === LineTextKind.Ascii, following);
    return true;
  }

  /**
   * Whether line text holds a CR not followed by LF. For ASCII the scan counted the CRs and listed the
   * line feeds: when every CR is the one in front of a line feed, there is none.
   */
  private hasBareCr(data: string, kind: LineTextKind): boolean {
    const lineFeeds = this.lineFeeds;
    if (kind !== LineTextKind.Ascii || lineFeeds.count < 0) {
      for (let at = data.indexOf('\r'); at !== -1; at = data.indexOf('\r', at + 2))
        if (data.charCodeAt(at + 1) !== 0x0a) return true;
      return false;
    }
    const positions = lineFeeds.positions;
    let crlf = 0;
    for (let i = 0; i < lineFeeds.count; i++) if (data.charCodeAt(positions[i]! - 1) === 0x0d) crlf++;
    return lineFeeds.crCount !== crlf;
  }

  /**
   * Brings the ring's open line and the lazy feed up to the row edits of the last reads: editRow leaves
   * both behind (a progress bar redraws its line hundreds of times per line feed).
   */
  private syncRow(): void {
    if (!this.rowToRing && !this.rowToXterm) return;
    const text = this.openRow.text();
    if (this.rowToRing) {
      this.ring.rewriteLine();
      this.ring.text(text);
      this.rowToRing = false;
    }
    if (this.rowToXterm) {
      this.defer(`\r${text}\r${text.slice(0, this.openRow.col)}`, 0);
      this.rowToXterm = false;
    }
  }

  /**
   * Line text without bare CRs (`plain`), which xterm gets later as `raw` (the same with its SGRs).
   * `utf8`: the UTF-8 of `plain`, when known.
   */
  private appendLineText(
    plain: string,
    raw: string,
    ascii: boolean,
    following: boolean,
    utf8?: Uint8Array,
  ): void {
    this.syncRow();
    if (following) this.listener.textBlock(plain, ascii);
    const knownFeeds = plain === raw && ascii && this.lineFeeds.count >= 0;
    this.ring.textBlock(plain, ascii, knownFeeds ? this.lineFeeds : undefined, utf8);
    const lastLf = plain.lastIndexOf('\n');
    const open = lastLf === -1 ? plain : plain.slice(lastLf + 1);
    this.openRow.append(open, lastLf !== -1, ascii);
    this.defer(raw, knownFeeds ? this.lineFeeds.count : countLineFeeds(raw));
  }

  /**
   * ASCII text whose CRs and BSs move the cursor within the open row, applied in the row buffer
   * (open-row.ts). False: not exact there, and nothing changed.
   */
  private editRow(data: string, following: boolean): boolean {
    const done = this.openRow.edit(data);
    if (done === undefined) return false;
    if (done.length > 0) {
      const ring = this.ring;
      let raw = '';
      for (const line of done) {
        ring.rewriteLine();
        ring.text(line);
        ring.newline();
        raw += `\r${line}\r\n`;
      }
      this.rowToXterm = false; // the first finished line supersedes the open row's earlier state
      this.defer(raw, done.length);
    }
    this.rowToRing = true;
    this.rowToXterm = true;
    // One call for the read's redraws (a progress bar redraws its row ~70 times a 4 KiB read): each
    // consumer splits them only if it follows them one by one.
    if (following) this.listener.rowEdits(data);
    return true;
  }

  /** Queues `raw` for xterm (the lazy feed drops what would scroll off); parses it once it holds too much. */
  private defer(raw: string, lineFeeds: number): void {
    if (this.lazyFeed.push(raw, lineFeeds)) this.feedDeferred();
  }

  /** Parses what waits: from a line start after a fresh line and the pen, when its head was dropped. */
  private feedDeferred(): void {
    this.syncRow();
    const feed = this.lazyFeed.take();
    if (feed === undefined) return;
    const { head, text } = feed;
    for (let at = 0; at === 0 || at < text.length; ) {
      const end = sliceEnd(text, at);
      const slice = text.slice(at, end);
      this.parseSlice(at === 0 ? head + slice : slice);
      this.dropXtermScrollback(); // the ring holds these lines already
      at = end;
    }
  }

  // --- engaged ----------------------------------------------------------------------------------

  /** Leaves pass-through: xterm is brought up to date and takes the lines on its screen back. */
  private engage(): void {
    if (!this.passing) return;
    this.feedDeferred();
    this.passing = false;
    const buffer = this.terminal.buffer.active;
    // Logical lines that start on screen at or above the cursor leave the ring: xterm holds them now.
    let starts = 0;
    let firstStart = -1;
    for (let y = 0; y <= buffer.cursorY; y++) {
      if (buffer.getLine(buffer.baseY + y)?.isWrapped) continue;
      starts++;
      if (firstStart === -1) firstStart = y;
    }
    this.harvested = buffer.baseY + (firstStart === -1 ? buffer.cursorY + 1 : firstStart);
    this.pendingHead = undefined;
    this.dirty = true;
    if (firstStart !== 0) {
      // The top rows continue a line whose head scrolled off in the lazy feed: the ring keeps that head
      // (what the line holds beyond the rows xterm still shows), and xterm the rest.
      const tail = this.rowsAsLines(buffer.baseY, this.harvested, buffer)[0] ?? '';
      const seq = this.ring.headSeq - starts;
      const line = this.ring.linesFrom(seq)[0];
      if (line !== undefined && seq >= this.ring.oldestSeq) {
        // (The ring's line ends with the rows' text unless the pass-through's differs, a TAB's cells.)
        this.pendingHead = this.newHead(line.slice(0, Math.max(0, line.length - tail.length)));
        this.harvested = buffer.baseY;
        this.holdOnScreen(seq);
        return;
      }
    }
    this.holdOnScreen(Math.min(this.ring.headSeq, this.ring.headSeq - (starts - 1)));
  }

  /** The ring's lines from `seq` on are on xterm's screen: held provisionally from now on. */
  private holdOnScreen(seq: number): void {
    this.baseSeq = Math.max(seq, this.ring.oldestSeq);
    this.shown = this.ring.linesFrom(this.baseSeq);
    this.ringHoldsShown = true;
  }

  /**
   * Whether pass-through may resume: the parser between sequences (trap 3 of 0005), default modes,
   * nothing at or after the cursor on its row and nothing below it (the cursor may stand mid-line). The
   * rows above are committed; the cursor row becomes the ring's open line.
   */
  private canDisengage(data: string): boolean {
    // A chunk parsed before may have ended inside a sequence: its rest must reach xterm's parser.
    if (this.carry.length > 0 || this.internals.parserState() !== ParserState.GROUND) return false;
    if (!this.guard.atGround) return false;
    const terminal = this.terminal;
    const buffer = terminal.buffer.active;
    const x = buffer.cursorX;
    if (x >= this.cols || buffer.type !== 'normal') return false; // x = cols: a wrap is pending
    // A combining mark after an escape (or at column 0) joins no character in xterm, but would join the
    // ring's open line.
    if (data.charCodeAt(0) >= 0x80 && JOINING_START.test(data)) return false;
    if (terminal.modes.insertMode || this.internals.charsetMapped()) return false;
    const region = this.internals.scrollRegion();
    if (region.top !== 0 || region.bottom !== this.rows - 1) return false;
    const cursorRow = buffer.getLine(buffer.baseY + buffer.cursorY);
    if (cursorRow === undefined || cursorRow.translateToString(true, x) !== '') return false;
    // The row up to the cursor must read as the ring's open line will: blank cells just before the
    // cursor are trimmed from a row's text (they become spaces only once text follows), and a stray
    // combining mark at column 0 fills a cell that reads as nothing.
    const open = cursorRow.translateToString(false, 0, x);
    if (open !== cursorRow.translateToString(true)) return false;
    for (let y = buffer.cursorY + 1; y < this.rows; y++)
      if ((buffer.getLine(buffer.baseY + y)?.translateToString(true) ?? '') !== '') return false;
    this.settlePendingHead();
    const cursorAt = buffer.baseY + buffer.cursorY;
    if (this.harvested > cursorAt) return false; // the cursor row was committed already
    // The cursor row may continue a line begun above (a line longer than the screen): the whole line
    // becomes the ring's open line.
    const lines = this.rowsAsLines(this.harvested, cursorAt + 1, buffer);
    if (lines.length > 0) lines[0] = (this.pendingHead?.toString() ?? '') + lines[0];
    else return false;
    this.pendingHead = undefined;
    const openLine = lines.pop()!;
    this.commit(lines);
    this.releaseShown();
    this.shown = [];
    this.ring.text(openLine);
    this.passing = true;
    this.openRow.reset(open, !cursorRow.isWrapped && open.length === x);
    this.rowToRing = false;
    this.rowToXterm = false;
    return true;
  }

  /** Parses the program's `input` now and commits the rows it scrolled off the top. */
  private parseNow(input: string, following: boolean): void {
    this.telling = following;
    try {
      // The guard admits each slice just before its parse: the replies of the slices before count.
      if (input.length <= PARSE_SLICE_CHARS) {
        this.parseSlice(this.guard.admit(input));
        this.harvest();
        return;
      }
      for (let at = 0; at < input.length; ) {
        const end = sliceEnd(input, at);
        this.parseSlice(this.guard.admit(input.slice(at, end)));
        this.harvest();
        at = end;
      }
    } finally {
      this.telling = false;
    }
  }

  private parseSlice(data: string): void {
    this.internals.writeSync(data);
    this.dirty = true;
  }

  /** Rows that scrolled into xterm's scrollback go to the ring (those not committed before). */
  private harvest(): void {
    this.settlePendingHead();
    const buffer = this.terminal.buffer.normal;
    const scrolled = buffer.baseY;
    if (scrolled > this.harvested) {
      const lines = this.rowsAsLines(this.harvested, scrolled, buffer);
      const continues = buffer.getLine(scrolled)?.isWrapped === true;
      const head = this.pendingHead;
      this.harvested = scrolled;
      if (head !== undefined && lines.length === 1 && continues) {
        // A line that never ends (50 MB without a line feed): its held head grows by the rows only.
        head.append(lines[0]!);
        this.dirty = true;
      } else {
        if (head !== undefined) {
          lines[0] = head.toString() + lines[0];
          this.pendingHead = undefined;
        }
        // The last row's line may go on below (wrapped onto the screen): hold its head.
        if (continues) this.pendingHead = this.newHead(lines.pop() ?? '');
        this.commit(lines);
      }
    }
    this.dropXtermScrollback();
  }

  /**
   * A held head whose continuation row is no longer one (erased, or rewritten as a line of its own) is
   * a completed line.
   */
  private settlePendingHead(): void {
    if (this.pendingHead === undefined || this.terminal.buffer.normal.getLine(this.harvested)?.isWrapped)
      return;
    const head = this.pendingHead.toString();
    this.pendingHead = undefined;
    this.commit([head]);
  }

  /** A held head (its newest `maxLineChars` characters: a line's head costs O(piece) per append). */
  private newHead(text: string): LineTail {
    const head = new LineTail(this.maxLineChars);
    head.append(text);
    return head;
  }

  /** Drops xterm's scrollback (rows above the screen), moving row indexes with it. */
  private dropXtermScrollback(): void {
    const dropped = this.internals.dropScrollback();
    if (dropped === 0) return;
    if (this.markerRow >= 0) this.markerRow = Math.max(-1, this.markerRow - dropped);
    this.harvested = Math.max(0, this.harvested - dropped);
  }

  /** Rows [from, to) of `buffer` (absolute) as logical lines, wrapped rows joined. */
  private rowsAsLines(from: number, to: number, buffer = this.terminal.buffer.active): string[] {
    const lines: string[] = [];
    for (let y = from; y < to; y++) {
      const line = buffer.getLine(y);
      const text = line?.translateToString(true) ?? '';
      if (line?.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
      else lines.push(text);
    }
    return lines;
  }
}

/** A cheap look before the costlier disengage check: could this chunk take the fast path at all? */
function mayPassThrough(data: string): boolean {
  if (data.indexOf('\x1b') === -1) return true;
  return !NOT_SGR.test(data);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Where the parse slice of `text` from `at` ends: never between the halves of a surrogate pair. */
function sliceEnd(text: string, at: number): number {
  const end = Math.min(at + PARSE_SLICE_CHARS, text.length);
  return end < text.length && isHighSurrogate(text.charCodeAt(end - 1)) ? end + 1 : end;
}

function countLineFeeds(text: string): number {
  let n = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) n++;
  return n;
}
