/**
 * Prototype for the terminal-model A/B of issue 24 (docs/decisions/0005-terminal-model.md): the
 * "xterm-only" design. One @xterm/headless terminal is the only source of truth for the screen, the
 * modes, the alternate screen, the replies (DA/DSR/CPR answered by xterm itself) and the prompt marker
 * (OSC 133 through xterm's parser hook). Nothing in the product imports this file; the benchmark
 * `bench/terminal-model-ab.mjs` drives it side by side with today's pipeline.
 *
 * Two states:
 *
 * - **pass-through** — the terminal is in its default state (main screen, no scroll region, no insert
 *   mode, default character set) and its cursor stands on a row with nothing at or below it. Output
 *   that cannot change any of that (line text; line text with SGR colours; ASCII line text whose CRs
 *   and BSs only move the cursor within the open line) goes to the scrollback directly, and xterm is
 *   fed **lazily**: the text waits, and only its last `rows` lines (plus the pen, the SGRs still in
 *   effect) are parsed when someone needs xterm (a chunk the fast path cannot take, a snapshot, a
 *   prompt check). Why that is exact: every row those lines leave on screen starts blank (scrolled in)
 *   in both feeds, so the screen, the cursor and the pen end up the same; only xterm's own scrollback
 *   differs, which nothing reads (the line ring is the scrollback).
 * - **engaged** — everything else: each chunk is parsed at once (synchronously, so a marker or a
 *   query is seen before the session looks), and lines enter the scrollback when they scroll off the
 *   top of xterm's screen (read with `translateToString`, wrapped rows joined). Engaging takes the
 *   lines still on screen back from the ring (they may be redrawn). A fast-path chunk disengages again
 *   once the cursor is at column 0 of a blank row with nothing below it.
 *
 * The xterm internals used (`_core.writeSync`, the only synchronous parse entry of xterm 6, and the
 * parser's state) are reached through the product's src/worker/replies/xterm-internals.ts, which fails
 * closed: a clear error, never a wrong answer. In front of xterm stands the product's guard against
 * hostile streams (hostile-stream-guard.ts: string sequences bounded, queries budgeted); the fast path
 * never needs it, since pass-through is only taken between sequences and holds no introducer or query.
 */
import xtermHeadless from '@xterm/headless';
import { LineFeeds } from '../../dist/worker/output/line-feeds.js';
import { LineTextKind, lineTextKind } from '../../dist/worker/output/line-text.js';
import { parseOwnedMarker } from '../../dist/worker/readiness/prompt-marker.js';
import { HostileStreamGuard } from '../../dist/worker/replies/hostile-stream-guard.js';
import { ParserState, xtermInternals } from '../../dist/worker/replies/xterm-internals.js';

/** Largest piece handed to one synchronous parse (bounds the rows one write can scroll off). */
const PARSE_SLICE_CHARS = 8 * 1024;
/**
 * xterm's own scrollback: holds the rows a parse scrolled off until they are harvested and dropped
 * (a drop waits while a sequence is open; several slices of rows fit meanwhile).
 */
const XTERM_SCROLLBACK = 4 * PARSE_SLICE_CHARS;
/** Lazily fed text is compacted (its head dropped) once it holds this many line feeds beyond `rows`. */
const COMPACT_EXTRA_LINES = 256;
// biome-ignore lint/suspicious/noControlCharactersInRegex: SGR is defined by ESC
const SGR = /\x1b\[[0-9;:]*m/g;
/** An escape that is complete: a CSI with its final byte, an OSC with its BEL, or a two-character one. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are made of control codes
const COMPLETE_ESCAPE = /^\x1b(?:\[[0-9;:?]*[\x40-\x7e]|\][^\x07]*\x07|[^[\]])/;
/** An ESC that does not start an SGR. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences are made of control codes
const NOT_SGR = /\x1b(?!\[[0-9;:]*m)/;
/** A CR not followed by LF (the end of the chunk counts as "not known": carried). */
const BARE_CR = /\r(?!\n)/;
/** ASCII printable, CR, LF and BS only: what the cursor-row emulation below handles exactly. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the class is defined by control codes
const ROW_EDIT_TEXT = /^[\x20-\x7e\r\n\x08]*$/;

/**
 * The two xterm 6 internals the model needs, from the product's one module for them (it throws a
 * TerminalError('INTERNAL') when this xterm lacks them): its only synchronous parse entry (without it
 * a prompt check would read a stale screen), and whether the parser stands in its ground state (between
 * sequences), the only moment a sequence of ours (`CSI 3 J`) may be parsed in between the program's output.
 */
export function reachXtermInternals(terminal) {
  const internals = xtermInternals(terminal);
  return {
    parse: (data) => internals.writeSync(data),
    inGround: () => internals.parserState() === ParserState.GROUND,
  };
}

/** The pen (SGRs) in effect at the end of `text`, as a string of SGRs to replay; `pen` is what held before. */
function penAfter(pen, text) {
  if (text.indexOf('\x1b') === -1) return pen;
  const resetAt = Math.max(text.lastIndexOf('\x1b[0m'), text.lastIndexOf('\x1b[m'));
  const tail = (resetAt >= 0 ? text.slice(resetAt) : text).match(SGR);
  const before = resetAt >= 0 ? '' : pen;
  return tail === null ? before : before + tail.join('');
}

/** A cheap look before the costlier disengage check: could this chunk take the fast path at all? */
function mayPassThrough(data) {
  const esc = data.indexOf('\x1b');
  if (esc === -1) return true;
  return !NOT_SGR.test(data);
}

/** The xterm-only terminal model. */
export class XtermOnlyModel {
  /**
   * `ring`: the scrollback (LineRing). `nonce`/`prompt`: the session's marker nonce and controlled
   * prompt. `reply(data)`: xterm's answers to queries, to be written to the pty.
   */
  constructor({ rows, cols, ring, nonce, prompt, reply }) {
    this.rows = rows;
    this.cols = cols;
    this.ring = ring;
    this.nonce = nonce;
    this.prompt = prompt;
    this.terminal = new xtermHeadless.Terminal({
      cols,
      rows,
      scrollback: XTERM_SCROLLBACK,
      allowProposedApi: true,
      windowOptions: { getWinSizeChars: true },
      logLevel: 'off', // xterm 6 warns once that writeSync is deprecated (see reachXtermInternals)
    });
    const internals = reachXtermInternals(this.terminal);
    this.parse = internals.parse;
    this.parserInGround = internals.inGround;
    /** String-sequence bound and query budget in front of every parse of the program's output. */
    this.guard = new HostileStreamGuard();
    this.terminal.onData((data) => {
      this.guard.replied();
      reply(data);
    });
    this.lineFeeds = new LineFeeds();
    /** Pass-through (true) or engaged. */
    this.passing = true;
    /** Lazily fed text not yet parsed: pieces and their line-feed counts. */
    this.deferred = [];
    this.deferredCounts = [];
    this.deferredLineFeeds = 0;
    /** SGRs in effect before `deferred[0]` that xterm has not parsed yet (its head was dropped). */
    this.deferredPen = '';
    /** True once part of `deferred` was dropped: the rest is fed after a fresh line. */
    this.deferredCut = false;
    /** Pass-through: the open line as shown, and the cursor column in it (ASCII open lines only). */
    this.row = new Uint16Array(cols);
    this.rowSaved = new Uint16Array(cols);
    this.rowLength = 0;
    this.openCol = 0;
    this.openAscii = true;
    /** Row edits not yet in the ring's open line / in the lazy feed (see syncRow). */
    this.rowToRing = false;
    this.rowToXterm = false;
    /** A chunk's unfinished end (a CR whose LF may follow, a cut SGR), prepended to the next chunk. */
    this.carry = '';
    /** Engaged: buffer rows (absolute index) below this one are in the ring already. */
    this.harvested = 0;
    /** Engaged: the head of a wrapped line whose first rows scrolled off while the rest is on screen. */
    this.pendingHead = '';
    /** Modes the fast path depends on, followed through parser hooks (observed, never handled). */
    this.scrollRegion = false;
    this.charsetChanged = false;
    this.markers = 0;
    this.marker = undefined;
    this.markerRow = -1;
    this.markerCol = -1;
    this.stats = { fastChars: 0, rowEditChars: 0, parsedChars: 0, engages: 0, flushedChars: 0 };
    const parser = this.terminal.parser;
    parser.registerOscHandler(133, (payload) => {
      const marker = parseOwnedMarker(`133;${payload}`, this.nonce);
      if (marker === undefined) return false;
      const buffer = this.terminal.buffer.active;
      this.markers += 1;
      this.marker = marker;
      this.markerRow = buffer.baseY + buffer.cursorY;
      this.markerCol = buffer.cursorX;
      return true;
    });
    parser.registerCsiHandler({ final: 'r' }, (params) => {
      const top = params[0] ?? 0;
      const bottom = params[1] ?? 0;
      this.scrollRegion = !((top === 0 || top === 1) && (bottom === 0 || bottom === this.rows));
      return false;
    });
    for (const intermediates of ['(', ')', '*', '+'])
      for (const final of '0AB<>4C5RfQ9KYE6Z7H='.split(''))
        parser.registerEscHandler({ intermediates, final }, () => {
          this.charsetChanged ||= !(intermediates === '(' && final === 'B');
          return false;
        });
  }

  /** Prompt markers parsed so far (exact without a flush: a marker is an escape, parsed at once). */
  get markersParsed() {
    return this.markers;
  }

  /** Whether the alternate screen is active. */
  get alternateScreen() {
    return this.terminal.buffer.active.type === 'alternate';
  }

  /** One read of the pty, decoded. */
  write(chunk) {
    let data = this.carry.length === 0 ? chunk : this.carry + chunk;
    this.carry = '';
    if (data.length === 0) return;
    if (this.passing || (mayPassThrough(data) && this.canDisengage())) {
      data = this.holdUnfinishedEnd(data);
      if (data.length === 0) return;
      if (this.passThrough(data)) return;
    }
    this.engage();
    this.parseNow(data);
  }

  /** Parses what waits lazily (and a carried end), so xterm's state is current. */
  flush() {
    if (this.carry.length > 0) {
      const carry = this.carry;
      this.carry = '';
      this.engage();
      this.parseNow(carry);
      return;
    }
    this.feedDeferred();
  }

  /** Rows of the active screen (trailing blanks trimmed), after a flush. */
  screenLines() {
    this.flush();
    const buffer = this.terminal.buffer.active;
    const lines = [];
    for (let y = 0; y < this.rows; y++)
      lines.push(buffer.getLine(buffer.baseY + y)?.translateToString(true) ?? '');
    return lines;
  }

  /** The cursor (row in the viewport, column), after a flush. */
  cursor() {
    this.flush();
    const buffer = this.terminal.buffer.active;
    return { row: buffer.cursorY, col: buffer.cursorX };
  }

  /**
   * Prompt evidence (SPEC §4.2 rule 1): the latest owned marker, when the text after it on its row is
   * exactly the controlled prompt and the cursor stands right after it.
   */
  promptCandidate() {
    if (this.marker === undefined) return undefined;
    this.flush();
    const buffer = this.terminal.buffer.active;
    if (buffer.baseY + buffer.cursorY !== this.markerRow) return undefined;
    const line = buffer.getLine(this.markerRow);
    const after = line?.translateToString(false, this.markerCol) ?? '';
    if (after.trimEnd() !== this.prompt.trimEnd()) return undefined;
    if (buffer.cursorX !== this.markerCol + this.prompt.length) return undefined;
    return this.marker;
  }

  /** Forgets the marker (a write boundary: evidence from before a write never counts). */
  resetPrompt() {
    this.marker = undefined;
  }

  /**
   * For readers: commits nothing, but makes the ring end with what the screen shows (engaged: the rows
   * not yet scrolled off are appended provisionally; the caller reads, then calls `unsync`).
   */
  sync() {
    if (this.passing) {
      this.syncRow();
      return undefined;
    }
    const from = this.ring.headSeq;
    // What a person sees: every row down to the last one that shows something (rows below the cursor
    // included: a redraw in progress leaves the previous frame's lines there) — of the main screen,
    // also while a full-screen program shows the alternate one: its screen never reaches the
    // scrollback (it is read on its own), and the main screen waits underneath.
    const buffer = this.terminal.buffer.normal;
    let to = buffer.cursorY + 1;
    for (let y = this.rows - 1; y >= to; y--) {
      if ((buffer.getLine(buffer.baseY + y)?.translateToString(true) ?? '') !== '') {
        to = y + 1;
        break;
      }
    }
    const rows = this.screenRowsAsLines(this.harvested - buffer.baseY, to, false, buffer);
    if (rows.length > 0) rows[0] = this.pendingHead + rows[0];
    for (let i = 0; i < rows.length; i++) {
      if (i > 0) this.ring.newline();
      this.ring.text(rows[i]);
    }
    return from;
  }

  /** Takes back what `sync` appended. */
  unsync(from) {
    if (from !== undefined) this.ring.retract(from);
  }

  dispose() {
    this.terminal.dispose();
  }

  // --- pass-through ---------------------------------------------------------------------------

  /**
   * Cuts an end that the next chunk may complete: a final CR (its LF may follow), half a surrogate
   * pair, a cut escape.
   */
  holdUnfinishedEnd(data) {
    const last = data.charCodeAt(data.length - 1);
    // A pty read never splits a surrogate pair (node-pty decodes whole code points), a caller may.
    if (last === 0x0d || (last >= 0xd800 && last <= 0xdbff)) {
      this.carry = data.slice(-1);
      return data.slice(0, -1);
    }
    // Only the last 32 characters are looked at (a scan of the whole chunk for an escape costs more).
    let esc = data.indexOf('\x1b', Math.max(0, data.length - 32));
    for (let next = esc; next !== -1; next = data.indexOf('\x1b', next + 1)) esc = next;
    if (esc !== -1 && !COMPLETE_ESCAPE.test(data.slice(esc))) {
      this.carry = data.slice(esc);
      return data.slice(0, esc);
    }
    return data;
  }

  /** Takes `data` on the fast path when it can; false: it must be parsed. */
  passThrough(data) {
    // After a CR or BS the cursor may stand inside the open line: text then overwrites (editRow).
    const atLineEnd = this.openCol === this.rowLength;
    const kind = lineTextKind(data, this.lineFeeds);
    if (kind !== LineTextKind.None) {
      if (atLineEnd && !this.hasBareCr(data, kind)) {
        this.appendLineText(data, data, kind === LineTextKind.Ascii);
        return true;
      }
      return kind === LineTextKind.Ascii && data.indexOf('\t') === -1 && this.editRow(data);
    }
    if (data.indexOf('\x1b') === -1) return ROW_EDIT_TEXT.test(data) && this.editRow(data);
    if (!atLineEnd) return false;
    const plain = data.replace(SGR, '');
    if (plain.indexOf('\x1b') !== -1) return false;
    const plainKind = lineTextKind(plain, this.lineFeeds);
    if (plainKind === LineTextKind.None || BARE_CR.test(plain)) return false;
    this.appendLineText(plain, data, plainKind === LineTextKind.Ascii);
    return true;
  }

  /**
   * Whether line text holds a CR not followed by LF. For ASCII the scan counted the CRs and listed the
   * line feeds: when every CR is the one in front of a line feed, there is none (no second scan).
   */
  hasBareCr(data, kind) {
    const lineFeeds = this.lineFeeds;
    if (kind !== LineTextKind.Ascii || lineFeeds.count < 0) {
      // One memchr-like search per line: every CR must be the one in front of a line feed.
      for (let at = data.indexOf('\r'); at !== -1; at = data.indexOf('\r', at + 2))
        if (data.charCodeAt(at + 1) !== 0x0a) return true;
      return false;
    }
    const positions = lineFeeds.positions;
    let crlf = 0;
    for (let i = 0; i < lineFeeds.count; i++) if (data.charCodeAt(positions[i] - 1) === 0x0d) crlf++;
    return lineFeeds.crCount !== crlf;
  }

  /** The open line as shown (only while `openAscii`: the row buffer holds it). */
  openText() {
    return String.fromCharCode.apply(null, this.row.subarray(0, this.rowLength));
  }

  /**
   * Brings the ring's open line and the lazy feed up to the row edits of the last reads: editRow
   * leaves both behind (a progress bar redraws its line hundreds of times per line feed).
   */
  syncRow() {
    if (!this.rowToRing && !this.rowToXterm) return;
    const text = this.openText();
    if (this.rowToRing) {
      this.ring.rewriteLine();
      this.ring.text(text);
      this.rowToRing = false;
    }
    if (this.rowToXterm) {
      this.defer(`\r${text}\r${text.slice(0, this.openCol)}`, 0);
      this.rowToXterm = false;
    }
  }

  /** Line text without bare CRs (`plain`), which xterm gets later as `raw` (the same with its SGRs). */
  appendLineText(plain, raw, ascii) {
    this.syncRow();
    this.stats.fastChars += raw.length;
    this.ring.textBlock(plain, ascii, plain === raw && ascii ? this.lineFeeds : undefined);
    const lastLf = plain.lastIndexOf('\n');
    const open = lastLf === -1 ? plain : plain.slice(lastLf + 1);
    if (lastLf !== -1) {
      this.rowLength = 0;
      this.openAscii = true;
    }
    if (!ascii || this.rowLength + open.length >= this.cols) this.openAscii = false;
    if (this.openAscii) {
      const row = this.row;
      let length = this.rowLength;
      for (let k = 0; k < open.length; k++) row[length++] = open.charCodeAt(k);
      this.rowLength = length;
    }
    this.openCol = this.rowLength;
    this.defer(
      raw,
      plain === raw && ascii && this.lineFeeds.count >= 0 ? this.lineFeeds.count : countLineFeeds(raw),
    );
  }

  /**
   * ASCII text whose CRs and BSs move the cursor within the open line: each line's final content is
   * computed here (what xterm would show: characters overwrite, nothing erases), exactly while no
   * line reaches the last column (wrapping would take the cursor to another row). False: not exact,
   * and nothing changed.
   */
  editRow(data) {
    if (!this.openAscii) return false;
    // A carried end makes `data` a cons string, whose charCodeAt is slow in optimized code: indexOf
    // flattens it in place first.
    data.indexOf('\x00');
    const row = this.row;
    const saved = this.rowSaved;
    saved.set(row.subarray(0, this.rowLength));
    const savedLength = this.rowLength;
    let length = this.rowLength;
    let col = this.openCol;
    const done = [];
    const limit = this.cols - 1;
    let exact = true;
    for (let i = 0; i < data.length; i++) {
      const c = data.charCodeAt(i);
      if (c === 0x0d) {
        if (data.charCodeAt(i + 1) === 0x0a) {
          done.push(String.fromCharCode.apply(null, row.subarray(0, length)));
          length = 0;
          col = 0;
          i++;
        } else col = 0;
      } else if (c === 0x08) {
        if (col > 0) col--;
      } else if (c === 0x0a || col >= limit) {
        // A bare LF keeps the column; the next character would reach the last column (wrapping).
        exact = false;
        break;
      } else {
        while (length < col) row[length++] = 0x20;
        row[col++] = c;
        if (col > length) length = col;
      }
    }
    if (!exact) {
      row.set(saved.subarray(0, savedLength));
      return false;
    }
    this.stats.rowEditChars += data.length;
    if (done.length > 0) {
      const ring = this.ring;
      let raw = '';
      for (const line of done) {
        ring.rewriteLine();
        ring.text(line);
        ring.newline();
        raw += `\r${line}\r\n`;
      }
      this.rowToXterm = false; // the first finished line supersedes the open line's earlier state
      this.defer(raw, done.length);
    }
    this.rowLength = length;
    this.openCol = col;
    this.rowToRing = true;
    this.rowToXterm = true;
    return true;
  }

  /** Queues `raw` for xterm; drops whole pieces from the head once more than `rows` lines wait. */
  defer(raw, lineFeeds) {
    this.deferred.push(raw);
    this.deferredCounts.push(lineFeeds);
    this.deferredLineFeeds += lineFeeds;
    if (this.deferredLineFeeds > this.rows + COMPACT_EXTRA_LINES) this.compactDeferred();
  }

  /**
   * Drops waiting pieces whose rows would scroll off anyway, keeping the pen they leave. What is kept
   * holds more than `rows` line feeds, so after cutting its first piece at a line start (feedDeferred)
   * at least `rows` remain.
   */
  compactDeferred() {
    let drop = 0;
    let lineFeeds = this.deferredLineFeeds;
    while (drop < this.deferred.length - 1 && lineFeeds - this.deferredCounts[drop] > this.rows + 1) {
      this.deferredPen = penAfter(this.deferredPen, this.deferred[drop]);
      lineFeeds -= this.deferredCounts[drop];
      drop++;
    }
    if (drop === 0) return;
    this.deferred.splice(0, drop);
    this.deferredCounts.splice(0, drop);
    this.deferredLineFeeds = lineFeeds;
    this.deferredCut = true;
  }

  /** Parses what waits: from a line start after a fresh line and the pen, when its head was dropped. */
  feedDeferred() {
    this.syncRow();
    if (this.deferred.length === 0) return;
    let text = this.deferred.join('');
    let head = '';
    if (this.deferredCut) {
      const lineStart = text.indexOf('\n') + 1;
      head = `\r\n${penAfter(this.deferredPen, text.slice(0, lineStart))}`;
      text = text.slice(lineStart);
    }
    this.deferred = [];
    this.deferredCounts = [];
    this.deferredLineFeeds = 0;
    this.deferredPen = '';
    this.deferredCut = false;
    this.stats.flushedChars += head.length + text.length;
    for (let at = 0; at === 0 || at < text.length; at += PARSE_SLICE_CHARS) {
      this.parse(at === 0 ? head + text.slice(0, PARSE_SLICE_CHARS) : text.slice(at, at + PARSE_SLICE_CHARS));
      this.dropXtermScrollback();
    }
  }

  // --- engaged ----------------------------------------------------------------------------------

  /** Leaves pass-through: xterm is brought up to date and takes the lines on its screen back. */
  engage() {
    if (!this.passing) return;
    this.feedDeferred();
    this.passing = false;
    this.stats.engages += 1;
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
    this.pendingHead = '';
    this.ring.retract(this.ring.headSeq - (starts - 1));
  }

  /**
   * Whether pass-through may resume: the parser between sequences, default modes, nothing at or after
   * the cursor on its row and nothing below it (the cursor may stand mid-line: a flood that began in
   * the read that echoed its command line). The rows above are committed; the cursor row becomes the
   * ring's open line.
   */
  canDisengage() {
    // A chunk parsed before may have ended inside a sequence: its rest must reach xterm's parser.
    if (this.carry.length > 0 || !this.parserInGround()) return false;
    const terminal = this.terminal;
    const buffer = terminal.buffer.active;
    const x = buffer.cursorX;
    if (x >= this.cols || buffer.type !== 'normal') return false; // x = cols: a wrap is pending
    if (this.scrollRegion || this.charsetChanged || terminal.modes.insertMode) return false;
    const cursorRow = buffer.getLine(buffer.baseY + buffer.cursorY);
    if (cursorRow === undefined || cursorRow.isWrapped || cursorRow.translateToString(true, x) !== '')
      return false;
    for (let y = buffer.cursorY + 1; y < this.rows; y++)
      if ((buffer.getLine(buffer.baseY + y)?.translateToString(true) ?? '') !== '') return false;
    const first = this.harvested - buffer.baseY;
    if (first > buffer.cursorY) return false; // the cursor row was committed already (not reachable in practice)
    const lines = this.screenRowsAsLines(first, buffer.cursorY);
    if (lines.length > 0) lines[0] = this.pendingHead + lines[0];
    else if (this.pendingHead !== '') return false;
    for (const line of lines) {
      this.ring.text(line);
      this.ring.newline();
    }
    this.pendingHead = '';
    const open = cursorRow.translateToString(false, 0, x);
    this.ring.text(open);
    this.passing = true;
    this.openAscii = open.length === x && !/[^\x20-\x7e]/.test(open);
    this.rowLength = 0;
    if (this.openAscii) for (let k = 0; k < open.length; k++) this.row[this.rowLength++] = open.charCodeAt(k);
    this.openCol = this.rowLength;
    this.rowToRing = false;
    this.rowToXterm = false;
    return true;
  }

  /** Parses `data` now and commits the rows it scrolled off the top. */
  parseNow(input) {
    const data = this.guard.admit(input);
    this.stats.parsedChars += data.length;
    for (let at = 0; at < data.length; at += PARSE_SLICE_CHARS) {
      this.parse(
        at === 0 && data.length <= PARSE_SLICE_CHARS ? data : data.slice(at, at + PARSE_SLICE_CHARS),
      );
      this.harvest();
    }
  }

  /** Rows that scrolled into xterm's scrollback go to the ring (those not committed before). */
  harvest() {
    const buffer = this.terminal.buffer.active;
    const scrolled = buffer.baseY;
    if (buffer.type !== 'normal') return;
    if (scrolled > this.harvested) {
      const lines = this.screenRowsAsLines(this.harvested, scrolled, true);
      if (lines.length > 0) {
        lines[0] = this.pendingHead + lines[0];
        this.pendingHead = '';
      }
      // The last row's line may go on below (wrapped onto the screen): hold its head.
      if (buffer.getLine(scrolled)?.isWrapped) this.pendingHead = lines.pop() ?? '';
      for (const line of lines) {
        this.ring.text(line);
        this.ring.newline();
      }
      this.harvested = scrolled;
    }
    this.dropXtermScrollback();
  }

  /**
   * Clears xterm's scrollback (`CSI 3 J`), moving row indexes with it — only between sequences: parsed
   * inside one, our ESC would end the program's sequence and its rest would print as text.
   */
  dropXtermScrollback() {
    const baseY = this.terminal.buffer.active.baseY;
    if (baseY === 0 || !this.parserInGround()) return;
    this.markerRow -= baseY;
    this.harvested = Math.max(0, this.harvested - baseY);
    this.parse('\x1b[3J');
  }

  /** Rows [from, to) of the buffer (absolute) as logical lines, wrapped rows joined. */
  screenRowsAsLines(from, to, absolute = false, buffer = this.terminal.buffer.active) {
    const base = absolute ? 0 : buffer.baseY;
    const lines = [];
    for (let y = from; y < to; y++) {
      const line = buffer.getLine(base + y);
      const text = line?.translateToString(true) ?? '';
      if (line?.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
      else lines.push(text);
    }
    return lines;
  }
}

function countLineFeeds(text) {
  let n = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) n++;
  return n;
}
