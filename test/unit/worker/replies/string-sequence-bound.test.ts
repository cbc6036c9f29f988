/**
 * The string-sequence bound follows its own description of the parser's grammar, not xterm's private
 * transition table. Here that description is held against the installed xterm's table, entry by entry
 * where the bound reads it: a change in xterm's grammar shows as a failing test, never as a bound that
 * cuts a sequence where xterm does not (the replier tests feed both and compare replies and screens).
 */
import xtermHeadless, { type Terminal } from '@xterm/headless';
import { afterEach, describe, expect, it } from 'vitest';
import {
  GrammarAction,
  GrammarState,
  NON_ASCII_CLASS,
  STRING_GRAMMAR,
  StringSequenceBound,
} from '../../../../src/worker/replies/string-sequence-bound.js';

/** xterm 6's `ParserAction` numbers, mapped to what the bound distinguishes. */
const XTERM_ACTIONS: Record<number, number> = {
  1: GrammarAction.ERROR,
  2: GrammarAction.PRINT,
  3: GrammarAction.EXECUTE,
  6: GrammarAction.END, // OSC_END
  14: GrammarAction.END, // DCS_UNHOOK
};

const terminals: Terminal[] = [];
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.dispose();
});

/** The installed xterm's transition table (`state << 8 | class` → `action << 4 | next state`). */
function xtermTable(): Uint8Array {
  const terminal = new xtermHeadless.Terminal({ cols: 20, rows: 5, allowProposedApi: true, logLevel: 'off' });
  terminals.push(terminal);
  const core = (terminal as unknown as { _core: { _inputHandler: { _parser: unknown } } })._core;
  return (core._inputHandler._parser as { _transitions: { table: Uint8Array } })._transitions.table;
}

const STRING_STATES = [7, 8, 9, 10, 11, 12, 13];
const CLASSES = Array.from({ length: NON_ASCII_CLASS + 1 }, (_, code) => code);

describe('StringSequenceBound grammar', () => {
  it('agrees with the installed xterm on every string state: next state and action per character', () => {
    const table = xtermTable();
    const differences: string[] = [];
    for (const state of STRING_STATES) {
      for (const code of CLASSES) {
        const entry = table[(state << 8) | code]!;
        const next = entry & 15;
        const action = XTERM_ACTIONS[entry >> 4] ?? GrammarAction.OTHER;
        const ours = { next: STRING_GRAMMAR.next(state, code), action: STRING_GRAMMAR.action(state, code) };
        if (ours.next !== next || ours.action !== action) {
          differences.push(
            `state ${state} code ${code}: xterm ${next}/${action}, ours ${ours.next}/${ours.action}`,
          );
        }
      }
    }
    expect(differences).toEqual([]);
  });

  it('agrees with xterm on where string sequences start: from ground (C1) and from the escape state', () => {
    const table = xtermTable();
    const differences: string[] = [];
    for (const state of [GrammarState.GROUND, GrammarState.ESCAPE]) {
      for (const code of CLASSES) {
        const next = table[(state << 8) | code]! & 15;
        const ours = STRING_GRAMMAR.next(state, code);
        // The bound only asks which string (if any) a character starts, and which keep the escape state.
        const relevant = next >= 7 || ours >= 7 || (state === GrammarState.ESCAPE && next === state);
        if (relevant && next !== ours)
          differences.push(`state ${state} code ${code}: xterm ${next}, ours ${ours}`);
      }
    }
    expect(differences).toEqual([]);
  });

  it('a different grammar gives a different bound: the description is what the filter follows', () => {
    // The same overlong OSC, cut by the DEC grammar, passes whole when BEL is taken for OSC text.
    const osc = `\x1b]0;${'x'.repeat(40)}\x07after`;
    expect(new StringSequenceBound(16).filter(osc)).toBe(`\x1b]0;${'x'.repeat(14)}\x18after`);
    const belIsText: typeof STRING_GRAMMAR = {
      next: (state, code) =>
        state === GrammarState.OSC_STRING && code === 0x07 ? state : STRING_GRAMMAR.next(state, code),
      action: (state, code) =>
        state === GrammarState.OSC_STRING && code === 0x07
          ? GrammarAction.OTHER
          : STRING_GRAMMAR.action(state, code),
    };
    const cut = new StringSequenceBound(16, belIsText).filter(osc);
    expect(cut).toBe(`\x1b]0;${'x'.repeat(14)}\x18`);
  });
});
