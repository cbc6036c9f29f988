/**
 * Bounds the string sequences the terminal model's xterm parser is fed (SPEC §4.3 "Bounds under hostile
 * output"). xterm collects every OSC and DCS payload for its handlers up to 10 000 000 characters
 * (`PAYLOAD_LIMIT` in @xterm/headless), so one unterminated `ESC ] 0 ;` followed by megabytes of text
 * kept hundreds of MB of heap. The replier needs none of that: nothing it answers has a long body.
 *
 * This filter follows the parser through each string sequence — SOS/PM/APC, OSC, DCS from its
 * introducer to its end — with its own description of the grammar ({@link STRING_GRAMMAR}: the DEC
 * VT500 parser's string states, which xterm implements), never xterm's private transition table, whose
 * layout is xterm's to change. A unit test compares the description with the installed xterm's table,
 * so a change in xterm's grammar shows there, not as a wrong bound. A sequence whose length passes the
 * bound is cancelled: a CAN is fed in its place (the parser abandons the sequence and its handlers see
 * a failed end, as for a CAN in the stream) and the rest of it is dropped through its terminator. The
 * parser is then in its ground state, exactly as if the whole sequence had been absent from the stream.
 *
 * Outside string sequences the filter only searches for introducers; their grammar is the same from
 * every parser state: ESC always enters the escape state (C0 controls other than CAN and SUB, and DEL,
 * keep it there), where `]`, `P`, `X`, `^`, `_` start OSC, DCS, SOS, PM, APC; the C1 forms U+009D,
 * U+0090, U+0098, U+009E, U+009F start them from any state.
 */

/**
 * Parser states, numbered as the DEC parser's states are listed (and as xterm numbers them, which the
 * comparing test relies on). From SOS_PM_APC_STRING on, the parser is inside a string sequence.
 */
export const GrammarState = {
  GROUND: 0,
  ESCAPE: 1,
  CSI_ENTRY: 3,
  SOS_PM_APC_STRING: 7,
  OSC_STRING: 8,
  DCS_ENTRY: 9,
  DCS_PARAM: 10,
  DCS_IGNORE: 11,
  DCS_INTERMEDIATE: 12,
  DCS_PASSTHROUGH: 13,
} as const;

/** What the parser does with a character, as far as the bound needs to know. */
export const GrammarAction = {
  /** Collected, ignored, or anything else that is no print, execute or end. */
  OTHER: 0,
  /** Printed (from ground). */
  PRINT: 1,
  /** A control executed. */
  EXECUTE: 2,
  /** The end of an OSC or DCS: its handler is called (an ESC doing it also enters the escape state). */
  END: 3,
  /** Not in the grammar: the parser reports an error and returns to ground. */
  ERROR: 4,
} as const;

const { GROUND, ESCAPE, SOS_PM_APC_STRING, OSC_STRING } = GrammarState;
const FIRST_STRING_STATE = SOS_PM_APC_STRING;
const STATE_COUNT = 14;
/** The class of every code point from U+00A0 on (the grammar treats them alike). */
export const NON_ASCII_CLASS = 160;
const CLASS_COUNT = NON_ASCII_CLASS + 1;
const ESC = 0x1b;
/** Cancels the sequence in progress: the parser ends it as failed and returns to ground. */
const CAN = '\x18';

/** The string-sequence part of the parser's grammar: per state and character class, next state and action. */
export interface StringGrammar {
  /** The state after `code` (class) in `state`. */
  next(state: number, code: number): number;
  /** What the parser does with `code` (class) in `state` ({@link GrammarAction}). */
  action(state: number, code: number): number;
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}

/**
 * The grammar of the DEC VT500 parser (vt100.net's state diagram, with xterm's reading of Unicode:
 * code points from U+00A0 on are text in ground, OSC and DCS data, ignored in a DCS being ignored,
 * and an error elsewhere). Only ground's and escape's string introducers and the string states
 * themselves are described; the bound never looks at the rest.
 */
function stringGrammar(): StringGrammar {
  const next = new Uint8Array(STATE_COUNT * CLASS_COUNT).fill(GROUND);
  const action = new Uint8Array(STATE_COUNT * CLASS_COUNT).fill(GrammarAction.ERROR);
  const set = (codes: number[], state: number, act: number, to: number): void => {
    for (const code of codes) {
      next[state * CLASS_COUNT + code] = to;
      action[state * CLASS_COUNT + code] = act;
    }
  };
  const { OTHER, PRINT, EXECUTE, END } = GrammarAction;
  const { CSI_ENTRY, DCS_ENTRY, DCS_PARAM, DCS_IGNORE, DCS_INTERMEDIATE, DCS_PASSTHROUGH } = GrammarState;
  /** C0 controls that execute (or are ignored) without ending a sequence: all but CAN, SUB and ESC. */
  const executables = [...range(0x00, 0x18), 0x19, ...range(0x1c, 0x20)];
  const printables = range(0x20, 0x7f);
  const DEL = 0x7f;
  for (let state = 0; state < STATE_COUNT; state++) {
    // From anywhere: CAN, SUB and the C1 controls that are no introducer execute and return to ground,
    // ST returns to ground, ESC enters the escape state, the C1 introducers start their sequence.
    set([0x18, 0x1a, 0x99, 0x9a, ...range(0x80, 0x90), ...range(0x91, 0x98)], state, EXECUTE, GROUND);
    set([0x9c], state, OTHER, GROUND);
    set([ESC], state, OTHER, ESCAPE);
    set([0x9d], state, OTHER, OSC_STRING);
    set([0x98, 0x9e, 0x9f], state, OTHER, SOS_PM_APC_STRING);
    set([0x9b], state, OTHER, CSI_ENTRY);
    set([0x90], state, OTHER, DCS_ENTRY);
  }
  set([...printables, NON_ASCII_CLASS], GROUND, PRINT, GROUND);
  set(executables, GROUND, EXECUTE, GROUND);
  set(executables, ESCAPE, EXECUTE, ESCAPE);
  set([DEL], ESCAPE, OTHER, ESCAPE);
  set([0x5b], ESCAPE, OTHER, CSI_ENTRY);
  set([0x5d], ESCAPE, OTHER, OSC_STRING);
  set([0x50], ESCAPE, OTHER, DCS_ENTRY);
  set([0x58, 0x5e, 0x5f], ESCAPE, OTHER, SOS_PM_APC_STRING);
  // SOS, PM, APC: everything is swallowed until ST.
  set([...executables, ...printables, DEL], SOS_PM_APC_STRING, OTHER, SOS_PM_APC_STRING);
  // OSC: text and DEL are its payload, C0 controls are ignored; BEL, ST, ESC, CAN, SUB end it.
  set([...printables, DEL, NON_ASCII_CLASS], OSC_STRING, OTHER, OSC_STRING);
  set(executables, OSC_STRING, OTHER, OSC_STRING);
  set([0x07, 0x18, 0x1a, ESC, 0x9c], OSC_STRING, END, GROUND);
  // DCS: parameters and intermediates, then a final character hooks its handler and data follows.
  set([...executables, DEL], DCS_ENTRY, OTHER, DCS_ENTRY);
  set(range(0x20, 0x30), DCS_ENTRY, OTHER, DCS_INTERMEDIATE);
  set(range(0x30, 0x40), DCS_ENTRY, OTHER, DCS_PARAM);
  set(range(0x40, 0x7f), DCS_ENTRY, OTHER, DCS_PASSTHROUGH);
  set([...executables, DEL, ...range(0x30, 0x3c)], DCS_PARAM, OTHER, DCS_PARAM);
  set(range(0x3c, 0x40), DCS_PARAM, OTHER, DCS_IGNORE);
  set(range(0x20, 0x30), DCS_PARAM, OTHER, DCS_INTERMEDIATE);
  set(range(0x40, 0x7f), DCS_PARAM, OTHER, DCS_PASSTHROUGH);
  set([...executables, DEL, ...range(0x20, 0x30)], DCS_INTERMEDIATE, OTHER, DCS_INTERMEDIATE);
  set(range(0x30, 0x40), DCS_INTERMEDIATE, OTHER, DCS_IGNORE);
  set(range(0x40, 0x7f), DCS_INTERMEDIATE, OTHER, DCS_PASSTHROUGH);
  set([...executables, ...printables, DEL, NON_ASCII_CLASS], DCS_IGNORE, OTHER, DCS_IGNORE);
  set([...executables, ...printables, DEL, NON_ASCII_CLASS], DCS_PASSTHROUGH, OTHER, DCS_PASSTHROUGH);
  set([0x18, 0x1a, ESC, 0x9c], DCS_PASSTHROUGH, END, GROUND);
  return {
    next: (state, code) => next[state * CLASS_COUNT + code]!,
    action: (state, code) => action[state * CLASS_COUNT + code]!,
  };
}

/** The grammar the bound follows (see {@link stringGrammar}). */
export const STRING_GRAMMAR: StringGrammar = stringGrammar();

/** An ESC, the controls that keep the escape state, and a string introducer; or a C1 string introducer. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the grammar is made of control codes
const INTRODUCER = /\x1b[\x00-\x17\x19\x1c-\x1f\x7f]*[\]PX^_]|[\x90\x98\x9d\x9e\x9f]/g;
/** Controls that keep the escape state (after an ESC at the end of the previous chunk). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the grammar is made of control codes
const ESCAPE_KEEPERS = /[\x00-\x17\x19\x1c-\x1f\x7f]*/y;

/**
 * Per parser state, a pattern matching every character that leaves that state, so a sequence body is
 * skipped with one search instead of a lookup per character.
 */
function stateExitPatterns(grammar: StringGrammar): RegExp[] {
  const patterns: RegExp[] = [];
  for (let state = 0; state < STATE_COUNT; state++) {
    let members = '';
    for (let code = 0; code <= NON_ASCII_CLASS; code++) {
      if (grammar.next(state, code) === state && code !== ESC) continue;
      members += code === NON_ASCII_CLASS ? '\\u00a0-\\uffff' : `\\u${code.toString(16).padStart(4, '0')}`;
    }
    patterns.push(new RegExp(`[${members}]`, 'g'));
  }
  return patterns;
}

/** Streaming filter: `filter` each chunk in stream order, feed the result to the xterm parser. */
export class StringSequenceBound {
  /** String sequences cancelled for length so far. */
  discardedSequences = 0;
  /** The parser state while inside a string sequence; below FIRST_STRING_STATE: outside one. */
  private state: number = GROUND;
  /** The previous chunk ended in the escape state (ESC, maybe followed by controls that keep it). */
  private escapePending = false;
  /** Characters of the current string sequence fed to the parser (introducer excluded). */
  private length = 0;
  /** The current string sequence outgrew the bound: drop it through its terminator. */
  private discarding = false;
  private readonly exits: RegExp[];

  /**
   * @param maxChars the longest string sequence passed on
   * @param grammar the parser's grammar (the DEC parser's; a test may give another)
   */
  constructor(
    private readonly maxChars: number,
    private readonly grammar: StringGrammar = STRING_GRAMMAR,
  ) {
    this.exits = stateExitPatterns(grammar);
  }

  /** True when the parser is outside any string sequence and no escape is pending: line text passes unchanged. */
  get atGround(): boolean {
    return this.state < FIRST_STRING_STATE && !this.escapePending;
  }

  /** The part of `data` the parser should see; `data` itself when nothing is dropped. */
  filter(data: string): string {
    const out = new Output(data);
    let at = 0;
    if (this.escapePending) at = this.continueEscape(data);
    while (at < data.length) {
      at = this.state < FIRST_STRING_STATE ? this.outside(data, at) : this.inside(data, at, out);
    }
    return out.finish();
  }

  /** After an ESC at the end of the previous chunk: the escape state continues into `data`. */
  private continueEscape(data: string): number {
    ESCAPE_KEEPERS.lastIndex = 0;
    ESCAPE_KEEPERS.test(data);
    const at = ESCAPE_KEEPERS.lastIndex;
    if (at >= data.length) return data.length; // still in the escape state
    this.escapePending = false;
    const next = this.grammar.next(ESCAPE, classOf(data.charCodeAt(at)));
    if (next < FIRST_STRING_STATE) return at;
    this.enter(next);
    return at + 1;
  }

  /** Searches for the next introducer from `at`; returns where scanning continues. */
  private outside(data: string, at: number): number {
    INTRODUCER.lastIndex = at;
    const match = INTRODUCER.exec(data);
    if (match === null) {
      const lastEscape = data.lastIndexOf('\x1b');
      if (lastEscape >= at) {
        ESCAPE_KEEPERS.lastIndex = lastEscape + 1;
        ESCAPE_KEEPERS.test(data);
        this.escapePending = ESCAPE_KEEPERS.lastIndex === data.length;
      }
      return data.length;
    }
    const end = match.index + match[0].length;
    const code = data.charCodeAt(end - 1);
    const from = match[0].length > 1 ? ESCAPE : GROUND; // a C1 introducer acts the same from every state
    this.enter(this.grammar.next(from, code));
    return end;
  }

  private enter(state: number): void {
    this.state = state;
    this.length = 0;
    this.discarding = false;
  }

  /** Inside a string sequence at `at`: passes, or drops, its body up to the next state change. */
  private inside(data: string, at: number, out: Output): number {
    const exit = this.exits[this.state]!;
    exit.lastIndex = at;
    const found = exit.exec(data);
    const stop = found === null ? data.length : found.index;
    this.body(data, at, stop, out);
    if (found === null) return data.length;
    const code = data.charCodeAt(stop);
    const action = this.grammar.action(this.state, classOf(code));
    // An ESC that ends an OSC or DCS enters the escape state as well (it starts the ST or what follows).
    const next =
      code === ESC && action === GrammarAction.END ? ESCAPE : this.grammar.next(this.state, classOf(code));
    if (next >= FIRST_STRING_STATE) {
      // Still inside (a DCS moving from its parameters to its data, or a new introducer): part of the body.
      this.body(data, stop, stop + 1, out);
      this.state = next;
      return stop + 1;
    }
    this.state = GROUND;
    if (this.discarding) {
      this.discarding = false;
      // The parser is in ground already (the CAN). A character that does something from there as well
      // (ESC, CSI, a C0/C1 control) is passed on; a plain terminator (BEL, ST, CAN, SUB) was the
      // sequence's own and is dropped with it.
      if (next === GROUND && action !== GrammarAction.PRINT && action !== GrammarAction.EXECUTE) {
        out.drop(stop, stop + 1);
      }
    }
    // An ESC leaves the parser in the escape state: scan on from it, it may introduce the next string.
    return code === ESC ? stop : stop + 1;
  }

  /** Body characters `data[from, to)`: passed while the sequence is within the bound, else dropped. */
  private body(data: string, from: number, to: number, out: Output): void {
    if (from >= to) return;
    if (this.discarding) {
      out.drop(from, to);
      return;
    }
    const room = this.maxChars - this.length;
    if (to - from <= room) {
      this.length += to - from;
      return;
    }
    this.discarding = true;
    this.discardedSequences += 1;
    let cut = from + room;
    // Never between the halves of a surrogate pair: the parser would see a lone surrogate.
    if (cut > from && isHighSurrogate(data.charCodeAt(cut - 1))) cut -= 1;
    out.replace(cut, to, CAN);
  }
}

/** The parser's character class of a UTF-16 code unit (surrogates fall in the non-ASCII class, as their code points do). */
function classOf(code: number): number {
  return Math.min(code, NON_ASCII_CLASS);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** The filtered chunk: the input with ranges dropped or replaced, built only when something changes. */
class Output {
  private parts: string[] | undefined;
  private copied = 0;

  constructor(private readonly data: string) {}

  drop(from: number, to: number): void {
    this.replace(from, to, '');
  }

  replace(from: number, to: number, replacement: string): void {
    this.parts ??= [];
    if (from > this.copied) this.parts.push(this.data.slice(this.copied, from));
    if (replacement.length > 0) this.parts.push(replacement);
    this.copied = to;
  }

  finish(): string {
    if (this.parts === undefined) return this.data;
    if (this.copied < this.data.length) this.parts.push(this.data.slice(this.copied));
    return this.parts.join('');
  }
}
