/**
 * Bounds the string sequences the replier's xterm parser is fed (SPEC §4.3 "Bounds under hostile
 * output"). xterm collects every OSC and DCS payload for its handlers up to 10 000 000 characters
 * (`PAYLOAD_LIMIT` in @xterm/headless), so one unterminated `ESC ] 0 ;` followed by megabytes of text
 * kept hundreds of MB of heap. The replier needs none of that: nothing it answers has a long body.
 *
 * This filter follows the parser through each string sequence — SOS/PM/APC, OSC, DCS from its
 * introducer to its end — with xterm's own transition table, so it agrees with the parser on where a
 * sequence starts and ends. A sequence whose length passes the bound is cancelled: a CAN is fed in its
 * place (the parser abandons the sequence and its handlers see a failed end, as for a CAN in the
 * stream) and the rest of it is dropped through its terminator. The parser is then in its ground state,
 * exactly as if the whole sequence had been absent from the stream.
 *
 * Outside string sequences the filter only searches for introducers; their grammar is the same from
 * every parser state: ESC always enters the escape state (C0 controls other than CAN and SUB, and DEL,
 * keep it there), where `]`, `P`, `X`, `^`, `_` start OSC, DCS, SOS, PM, APC; the C1 forms U+009D,
 * U+0090, U+0098, U+009E, U+009F start them from any state.
 */

/** xterm parser states (`ParserState` in xterm.js). From this one on, the parser is inside a string sequence. */
const FIRST_STRING_STATE = 7; // SOS_PM_APC_STRING; 8 OSC_STRING; 9–13 DCS_ENTRY … DCS_PASSTHROUGH
const GROUND = 0;
const ESCAPE = 1;
/** xterm parser actions (`ParserAction`) that matter here. */
const ACTION_PRINT = 2;
const ACTION_EXECUTE = 3;
const ACTION_OSC_END = 6;
const ACTION_DCS_UNHOOK = 14;
/** The table's class for every code point from U+00A0 on. */
const NON_ASCII_CLASS = 160;
const STATE_COUNT = 14;
const ESC = 0x1b;
/** Cancels the sequence in progress: the parser ends it as failed and returns to ground. */
const CAN = '\x18';

/** An ESC, the controls that keep the escape state, and a string introducer; or a C1 string introducer. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the grammar is made of control codes
const INTRODUCER = /\x1b[\x00-\x17\x19\x1c-\x1f\x7f]*[\]PX^_]|[\x90\x98\x9d\x9e\x9f]/g;
/** Controls that keep the escape state (after an ESC at the end of the previous chunk). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the grammar is made of control codes
const ESCAPE_KEEPERS = /[\x00-\x17\x19\x1c-\x1f\x7f]*/y;

/**
 * Per parser state, a pattern matching every character that leaves that state (from the table), so a
 * sequence body is skipped with one search instead of a lookup per character.
 */
function stateExitPatterns(table: Uint8Array): RegExp[] {
  const patterns: RegExp[] = [];
  for (let state = 0; state < STATE_COUNT; state++) {
    let members = '';
    for (let code = 0; code <= NON_ASCII_CLASS; code++) {
      if ((table[(state << 8) | code]! & 15) === state && code !== ESC) continue;
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
  private state = GROUND;
  /** The previous chunk ended in the escape state (ESC, maybe followed by controls that keep it). */
  private escapePending = false;
  /** Characters of the current string sequence fed to the parser (introducer excluded). */
  private length = 0;
  /** The current string sequence outgrew the bound: drop it through its terminator. */
  private discarding = false;
  private readonly exits: RegExp[];

  /**
   * @param table xterm's transition table (`state << 8 | class` → `action << 4 | next state`)
   * @param maxChars the longest string sequence passed on
   */
  constructor(
    private readonly table: Uint8Array,
    private readonly maxChars: number,
  ) {
    this.exits = stateExitPatterns(table);
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
    const next = this.table[(ESCAPE << 8) | classOf(data.charCodeAt(at))]! & 15;
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
    this.enter(this.table[(from << 8) | code]! & 15);
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
    const transition = this.table[(this.state << 8) | classOf(code)]!;
    const action = transition >> 4;
    // An ESC that ends an OSC or DCS enters the escape state (xterm's parse adds it to the transition).
    const next =
      code === ESC && (action === ACTION_OSC_END || action === ACTION_DCS_UNHOOK) ? ESCAPE : transition & 15;
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
      if (next === GROUND && action !== ACTION_PRINT && action !== ACTION_EXECUTE) out.drop(stop, stop + 1);
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
