/**
 * The one module that reads @xterm/headless internals: it works on the installed xterm, and a changed
 * shape — a renamed field, a deprecated method removed — fails closed with TerminalError('INTERNAL')
 * naming the versions, never a wrong answer. xterm's transition table is not among them any more (the
 * string-sequence bound has its own grammar, string-sequence-bound.test.ts holds it against xterm's).
 */
import xtermHeadless, { type Terminal } from '@xterm/headless';
import { afterEach, describe, expect, it } from 'vitest';
import { LineRing } from '../../../../src/worker/output/line-ring.js';
import { TerminalModel } from '../../../../src/worker/replies/terminal-model.js';
import {
  KNOWN_XTERM_VERSION,
  ParserState,
  xtermInternals,
} from '../../../../src/worker/replies/xterm-internals.js';

const terminals: Terminal[] = [];
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.dispose();
});

function terminal(): Terminal {
  const made = new xtermHeadless.Terminal({
    cols: 20,
    rows: 5,
    scrollback: 0,
    allowProposedApi: true,
    logLevel: 'off',
  });
  terminals.push(made);
  return made;
}

function model(): TerminalModel {
  const ring = new LineRing({ maxLines: 10, maxBytes: 1024 });
  return new TerminalModel({ cols: 20, rows: 5, ring, reply: () => undefined, marker: () => false });
}

/** The terminal's `_core`, to change its shape as another xterm version might. */
function core(of: Terminal): Record<string, unknown> {
  return (of as unknown as { _core: Record<string, unknown> })._core;
}

function parserOf(of: Terminal): { _transitions: { table: Uint8Array } } {
  return (core(of)._inputHandler as { _parser: { _transitions: { table: Uint8Array } } })._parser;
}

const FAILS_CLOSED = expect.objectContaining({
  code: 'INTERNAL',
  message: expect.stringContaining(`known: ${KNOWN_XTERM_VERSION}`),
});

describe('xterm internals', () => {
  it('reads the installed xterm: parser state, scroll region, line ring, sync parse and drain', async () => {
    const subject = terminal();
    const internals = xtermInternals(subject);
    expect(internals.parserState()).toBe(ParserState.GROUND);
    expect(internals.scrollRegion()).toEqual({ top: 0, bottom: 4 });
    expect(internals.lineRing()).toEqual({ length: 5, maxLength: 5 });
    expect(internals.charsetMapped()).toBe(false);
    internals.writeSync('\x1b]0;open');
    expect(internals.parserState()).toBe(ParserState.OSC_STRING);
    internals.writeSync('\x07\x1b[2;4r\x1b(0');
    expect(internals.scrollRegion()).toEqual({ top: 1, bottom: 3 });
    expect(internals.charsetMapped()).toBe(true);
    // A write() waits for xterm's timer; the drain parses it now and calls its callback.
    let called = false;
    subject.write('\x1b(B\x1b[rabc', () => {
      called = true;
    });
    internals.drainWrites();
    expect(called).toBe(true);
    expect(subject.buffer.active.getLine(0)?.translateToString(true)).toBe('abc');
    await new Promise((resolve) => setTimeout(resolve, 5)); // xterm's own timer finds nothing left
    expect(subject.buffer.active.getLine(0)?.translateToString(true)).toBe('abc');
  });

  it('drops the scrollback with the saved cursor, leaves the alternate screen, reports printed text', () => {
    const subject = new xtermHeadless.Terminal({
      cols: 20,
      rows: 2,
      scrollback: 10,
      allowProposedApi: true,
      logLevel: 'off',
    });
    terminals.push(subject);
    const internals = xtermInternals(subject);
    const seen: string[] = [];
    internals.observeText({
      wantsText: () => true,
      print: (text) => seen.push(text),
      lineFeed: () => seen.push('LF'),
      carriageReturn: () => seen.push('CR'),
    });
    internals.writeSync('a\r\nb\r\nc\x1b[?1049h');
    expect(seen).toEqual(['a', 'CR', 'LF', 'b', 'CR', 'LF', 'c']);
    expect(internals.dropScrollback()).toBe(1);
    expect(subject.buffer.normal.baseY).toBe(0);
    internals.leaveAlternateScreen();
    expect(subject.buffer.active.type).toBe('normal');
    // The cursor saved on entering is back where it was, one row up with the dropped row.
    expect([subject.buffer.active.cursorY, subject.buffer.active.cursorX]).toEqual([1, 1]);
  });

  it('reports printed text exactly, from slices of the parsed string or from code points, and none while unwanted', () => {
    const subject = new xtermHeadless.Terminal({
      cols: 40,
      rows: 4,
      allowProposedApi: true,
      logLevel: 'off',
    });
    terminals.push(subject);
    const internals = xtermInternals(subject);
    const seen: string[] = [];
    let wanted = true;
    internals.observeText({
      wantsText: () => wanted,
      print: (text) => seen.push(text),
      lineFeed: () => seen.push('LF'),
      carriageReturn: () => undefined,
    });
    // ASCII and CJK (no surrogates: positions in xterm's buffer are the string's), SGR between.
    internals.writeSync('ab\x1b[1m漢字\x1b[0mcd\n');
    // Astral characters (surrogate pairs): one code point each in xterm's buffer, not two units.
    internals.writeSync('x😀y🎉z\n');
    // REP (CSI b) prints from an array of xterm's own, not from the parse buffer.
    internals.writeSync('q\x1b[3b!\n');
    // Half a pair at the end of one string, its other half at the start of the next.
    internals.writeSync('m\ud83d');
    internals.writeSync('\ude00n\n');
    // Half a pair left in xterm's decoder, then a string without surrogates: positions shift by one.
    internals.writeSync('k\ud83d');
    internals.writeSync('op\n');
    expect(seen).toEqual([
      'ab',
      '漢字',
      'cd',
      'LF',
      'x😀y🎉z',
      'LF',
      'q',
      'qqq',
      '!',
      'LF',
      'm',
      '😀n',
      'LF',
      'k',
      '\ud83dop',
      'LF',
    ]);
    wanted = false;
    seen.length = 0;
    internals.writeSync('unwanted\n');
    expect(seen).toEqual(['LF']);
  });

  it('a transition table laid out differently is not read: the terminal model still starts', () => {
    const subject = terminal();
    // xterm shares one table among its terminals: it is put back below.
    const transitions = parserOf(subject)._transitions;
    const table = transitions.table;
    // Another packing of the same information (state and action swapped): before the bound had its own
    // grammar, this failed closed; now nothing of agent-pty reads the table.
    transitions.table = table.map((entry) => ((entry & 15) << 4) | (entry >> 4));
    try {
      expect(() => xtermInternals(subject)).not.toThrow();
      model().dispose();
    } finally {
      transitions.table = table;
    }
  });

  it('a removed writeSync or a renamed write buffer fails closed', () => {
    const withoutSync = terminal();
    core(withoutSync).writeSync = undefined;
    expect(() => xtermInternals(withoutSync)).toThrow(FAILS_CLOSED);
    const renamed = terminal();
    core(renamed)._writeBuffer = { queue: [] };
    expect(() => xtermInternals(renamed)).toThrow(FAILS_CLOSED);
    const noDecoder = terminal();
    (core(noDecoder)._inputHandler as { _stringDecoder?: unknown })._stringDecoder = undefined;
    expect(() => xtermInternals(noDecoder)).toThrow(FAILS_CLOSED);
    const noCore = { _core: undefined } as unknown as Terminal;
    expect(() => xtermInternals(noCore)).toThrow(FAILS_CLOSED);
  });

  it('the terminal model refuses to start on a changed xterm rather than answer wrongly', () => {
    // xterm 7 may drop the deprecated writeSync: taken off the class every terminal shares, then put back.
    let owner: Record<string, unknown> | null = Object.getPrototypeOf(core(terminal()));
    while (owner !== null && !Object.hasOwn(owner, 'writeSync')) owner = Object.getPrototypeOf(owner);
    expect(owner).not.toBeNull();
    const writeSync = owner!.writeSync;
    delete owner!.writeSync;
    try {
      expect(() => model()).toThrow(FAILS_CLOSED);
    } finally {
      owner!.writeSync = writeSync;
    }
    model().dispose();
  });
});
