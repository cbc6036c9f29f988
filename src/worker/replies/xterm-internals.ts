/**
 * The one place that reads @xterm/headless internals — what its public API does not offer and the
 * terminal model's fast paths and snapshots need: the parser's state, the active buffer's scroll region
 * and line ring, the character set in use, the synchronous parse (`writeSync`, deprecated in xterm 6)
 * and the write buffer behind `write()`. xterm's transition table is not read: the string-sequence
 * bound follows its own description of the grammar (string-sequence-bound.ts).
 *
 * Every shape is checked when a terminal is made. Anything else fails closed: TerminalError('INTERNAL') naming the installed and the known xterm version. A
 * fast path reading a changed shape would give wrong answers (a reply missed, a screen off by a line),
 * which is worse than a session that refuses to start.
 */
import { createRequire } from 'node:module';
import type { Terminal } from '@xterm/headless';
import { TerminalError } from '../../shared/errors.js';

/** The @xterm/headless version whose internals this module knows. */
export const KNOWN_XTERM_VERSION = '6.0.0';

/** xterm's parser states (`ParserState`) read here. */
export const ParserState = { GROUND: 0, ESCAPE: 1, OSC_STRING: 8 } as const;

/** What the terminal model reads from xterm beyond its public API. */
export interface XtermInternals {
  /** The parser's state now (`ParserState`). */
  parserState(): number;
  /** The active buffer's scroll region (0-based rows, inclusive). */
  scrollRegion(): { top: number; bottom: number };
  /** The active buffer's line ring: lines held and its capacity. */
  lineRing(): { length: number; maxLength: number };
  /** Whether printed characters are mapped by a character set other than the default one. */
  charsetMapped(): boolean;
  /** Parses `data` at once (xterm's write buffer must be empty: no `write()` in flight). */
  writeSync(data: string): void;
  /**
   * Drops the normal buffer's scrollback (the rows above its screen), as `CSI 3 J` does (the saved
   * cursor moved with the rows, which `CSI 3 J` forgets), without a sequence being parsed (one of ours parsed while the program's is open would break it); returns how
   * many rows went.
   */
  dropScrollback(): number;
  /**
   * Back to the normal screen with the cursor saved on entering the alternate one, as `CSI ? 1049 l`
   * does, without a sequence being parsed (callable from a parser handler).
   */
  leaveAlternateScreen(): void;
  /**
   * Lets `observer` see what the parser prints and its line feeds and carriage returns, after xterm
   * handled each (xterm's own handlers call these methods of its input handler, which are wrapped).
   */
  observeText(observer: TextObserver): void;
  /**
   * Parses now what xterm's write buffer still holds, calling each entry's callback in order, so the
   * terminal is idle afterwards.
   */
  drainWrites(): void;
}

/** What {@link XtermInternals.observeText} reports. */
export interface TextObserver {
  /** Whether printed characters are wanted now: when not, their text is not even made. */
  wantsText(): boolean;
  /** Printed characters. */
  print(text: string): void;
  /** LF, VT or FF. */
  lineFeed(): void;
  carriageReturn(): void;
}

/** The installed @xterm/headless version, as its package says. */
function installedVersion(): string {
  try {
    const require = createRequire(import.meta.url);
    return String((require('@xterm/headless/package.json') as { version?: unknown }).version);
  } catch {
    return 'of unknown version';
  }
}

/** The internals of `terminal`; throws TerminalError('INTERNAL') when their shape is not the known one. */
export function xtermInternals(terminal: Terminal): XtermInternals {
  const found = reach(terminal);
  if (typeof found === 'string') {
    throw new TerminalError(
      'INTERNAL',
      `@xterm/headless ${installedVersion()} changed what agent-pty reads of its internals (known: ` +
        `${KNOWN_XTERM_VERSION}): ${found}. Install the @xterm/headless version agent-pty depends on.`,
    );
  }
  return found;
}

type Shape = Partial<Record<string, unknown>> | undefined;

/** The internals, or what differs from the known shape. */
function reach(terminal: Terminal): XtermInternals | string {
  const core = (terminal as unknown as { _core?: Shape })._core;
  if (typeof core !== 'object' || core === null) return 'no _core';
  const parser = (core._inputHandler as Shape)?._parser as Shape;
  if (typeof parser?.currentState !== 'number') return 'no _inputHandler._parser.currentState';
  const buffers = core.buffers as Shape;
  const activeBuffer = (): Shape => buffers?.active as Shape;
  const active = activeBuffer();
  if (typeof active?.scrollTop !== 'number' || typeof active.scrollBottom !== 'number') {
    return 'no buffers.active.scrollTop/scrollBottom';
  }
  const lines = active.lines as Shape;
  if (typeof lines?.length !== 'number' || typeof lines.maxLength !== 'number') {
    return 'no buffers.active.lines.length/maxLength';
  }
  const normal = buffers?.normal as Shape;
  const normalLines = normal?.lines as Shape;
  if (
    typeof normal?.ybase !== 'number' ||
    typeof normal.ydisp !== 'number' ||
    typeof normal.savedY !== 'number'
  ) {
    return 'no buffers.normal.ybase/ydisp/savedY';
  }
  if (typeof normalLines?.trimStart !== 'function') return 'no buffers.normal.lines.trimStart';
  if (typeof buffers?.activateNormalBuffer !== 'function') return 'no buffers.activateNormalBuffer';
  const inputHandler = core._inputHandler as Shape;
  if (typeof inputHandler?.restoreCursor !== 'function') return 'no _inputHandler.restoreCursor';
  for (const method of ['print', 'lineFeed', 'carriageReturn']) {
    if (typeof inputHandler[method] !== 'function') return `no _inputHandler.${method}`;
  }
  const rowsOf = core._bufferService as Shape;
  if (typeof rowsOf?.rows !== 'number') return 'no _bufferService.rows';
  const writeSync = core.writeSync;
  if (typeof writeSync !== 'function') return 'no writeSync';
  const charsets = core._charsetService as Shape;
  // `charset` exists once a character set was designated; until then the default one maps nothing.
  if (typeof charsets?.glevel !== 'number') return 'no _charsetService.glevel';
  const writeBuffer = core._writeBuffer as Shape;
  if (!Array.isArray(writeBuffer?._writeBuffer) || !Array.isArray(writeBuffer._callbacks)) {
    return 'no _writeBuffer._writeBuffer/_callbacks';
  }
  if (typeof writeBuffer._bufferOffset !== 'number' || typeof writeBuffer._pendingData !== 'number') {
    return 'no _writeBuffer._bufferOffset/_pendingData';
  }
  const decoder = inputHandler._stringDecoder as Shape;
  if (typeof decoder?._interim !== 'number') return 'no _inputHandler._stringDecoder._interim';
  if (!(inputHandler._parseBuffer instanceof Uint32Array)) return 'no _inputHandler._parseBuffer';
  const parseStack = inputHandler._parseStack as Shape;
  if (typeof parseStack?.paused !== 'boolean') return 'no _inputHandler._parseStack.paused';
  if (typeof inputHandler.parse !== 'function') return 'no _inputHandler.parse';
  const sync = (data: string): void => {
    writeSync.call(core, data);
  };
  return {
    parserState: () => parser.currentState as number,
    scrollRegion: () => {
      const buffer = activeBuffer() as { scrollTop: number; scrollBottom: number };
      return { top: buffer.scrollTop, bottom: buffer.scrollBottom };
    },
    lineRing: () => {
      const ring = activeBuffer()?.lines as { length: number; maxLength: number };
      return { length: ring.length, maxLength: ring.maxLength };
    },
    charsetMapped: () => charsets.charset !== undefined,
    writeSync: sync,
    observeText: (observer) => {
      const handler = inputHandler as unknown as InputHandlerText;
      const parse = handler.parse;
      const print = handler.print;
      const lineFeed = handler.lineFeed;
      const carriageReturn = handler.carriageReturn;
      const textDecoder = decoder as unknown as { _interim: number };
      const stack = parseStack as unknown as { paused: boolean };
      // The string being parsed, while a position in xterm's parse buffer is the same position in it:
      // xterm decodes the string into that buffer in one piece (up to MAX_PARSE_BUFFER_CHARS), one code
      // point per UTF-16 unit when it holds no surrogate and its decoder holds no half pair from the
      // previous string, and nothing paused mid-buffer resumes (no handler of ours is asynchronous).
      // Then a print's text is a slice of it, not a string made of its code points.
      let aligned: string | undefined;
      handler.parse = function (data, promiseResult) {
        const outer = aligned;
        aligned =
          typeof data === 'string' &&
          data.length <= MAX_PARSE_BUFFER_CHARS &&
          textDecoder._interim === 0 &&
          !stack.paused &&
          !SURROGATE.test(data)
            ? data
            : undefined;
        try {
          return parse.call(this, data, promiseResult);
        } finally {
          aligned = outer;
        }
      };
      handler.print = function (data, start, end) {
        const result = print.call(this, data, start, end);
        if (!observer.wantsText()) return result;
        // Only prints from the parse buffer map to the string (REP prints from an array of its own).
        observer.print(
          aligned !== undefined && data === this._parseBuffer
            ? aligned.slice(start, end)
            : codePointsToString(data, start, end),
        );
        return result;
      };
      handler.lineFeed = function () {
        const result = lineFeed.call(this);
        observer.lineFeed();
        return result;
      };
      handler.carriageReturn = function () {
        const result = carriageReturn.call(this);
        observer.carriageReturn();
        return result;
      };
    },
    leaveAlternateScreen: () => {
      (buffers as unknown as { activateNormalBuffer(): void }).activateNormalBuffer();
      (inputHandler as unknown as { restoreCursor(): void }).restoreCursor();
    },
    dropScrollback: () => {
      const buffer = buffers?.normal as unknown as NormalBufferState;
      const excess = buffer.lines.length - (rowsOf as unknown as { rows: number }).rows;
      if (excess <= 0) return 0;
      buffer.lines.trimStart(excess);
      buffer.ybase = Math.max(buffer.ybase - excess, 0);
      buffer.ydisp = Math.max(buffer.ydisp - excess, 0);
      // The saved cursor (DECSC, `CSI ? 1049 h`) is an absolute row, unlike the cursor's own.
      buffer.savedY = Math.max(buffer.savedY - excess, 0);
      return excess;
    },
    drainWrites: writeBufferDrain(writeBuffer as unknown as WriteBufferState, sync),
  };
}

/** Up to this many UTF-16 units xterm 6 decodes a parsed string into its buffer in one piece. */
const MAX_PARSE_BUFFER_CHARS = 131_072;
const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * The methods of xterm 6's `InputHandler` that parse a string and that its parser calls for printed
 * text, LF/VT/FF and CR, and the buffer the parser prints from.
 */
interface InputHandlerText {
  parse(data: string | Uint8Array, promiseResult?: boolean): unknown;
  _parseBuffer: Uint32Array;
  print(data: Uint32Array, start: number, end: number): void;
  lineFeed(): boolean;
  carriageReturn(): boolean;
}

/** Code points `data[start, end)` as a string. */
function codePointsToString(data: Uint32Array, start: number, end: number): string {
  // A print covers at most one parse slice: few enough code points for one call.
  return String.fromCodePoint.apply(null, data.subarray(start, end) as unknown as number[]);
}

/** xterm 6's normal `Buffer`: its line ring and the scrolled-off rows above the screen (`ybase`). */
interface NormalBufferState {
  lines: { length: number; trimStart(count: number): void };
  ybase: number;
  ydisp: number;
  savedY: number;
}

/**
 * xterm 6's `WriteBuffer`: `_writeBuffer[i]` with its callback `_callbacks[i]`; entries before
 * `_bufferOffset` are parsed already but stay in the arrays when an asynchronous parse slice ran out of
 * time, and `_pendingData` counts what is unparsed.
 */
interface WriteBufferState {
  _writeBuffer: string[];
  _callbacks: ((() => void) | undefined)[];
  _bufferOffset: number;
  _pendingData: number;
}

/**
 * The drain takes the unparsed entries out (the buffer is then empty, and the parse slice xterm has
 * scheduled finds nothing to do), parses each with a sync write and calls its callback, in order.
 */
function writeBufferDrain(state: WriteBufferState, sync: (data: string) => void): () => void {
  return () => {
    const offset = Math.min(state._bufferOffset, state._writeBuffer.length);
    const chunks = state._writeBuffer.slice(offset);
    const callbacks = state._callbacks.slice(offset);
    state._writeBuffer.length = 0;
    state._callbacks.length = 0;
    state._bufferOffset = 0;
    state._pendingData = 0;
    chunks.forEach((chunk, index) => {
      sync(chunk);
      callbacks[index]?.();
    });
  };
}
