/** Named keys (SPEC §4.3): names, literals, modes, refusals. */
import { describe, expect, it } from 'vitest';
import { encodeKeys, refuseSignallingInput, validateKeys } from '../../../src/shared/keys.js';

const normal = { applicationCursorKeys: false };
const application = { applicationCursorKeys: true };

describe('key encoding', () => {
  it('encodes tmux names and literals in order, with no Enter added', () => {
    expect(encodeKeys(['Escape', { text: ':wq' }, 'Enter'], normal)).toBe('\x1b:wq\r');
    expect(encodeKeys(['C-o', 'Enter', 'C-x'], normal)).toBe('\x0f\r\x18');
    expect(encodeKeys([{ text: 'git chec' }, 'Tab'], normal)).toBe('git chec\t');
    expect(encodeKeys(['BSpace', 'M-x', 'q', 'F1', 'F5', 'F12', 'PageUp', 'PageDown'], normal)).toBe(
      '\x7f\x1bxq\x1bOP\x1b[15~\x1b[24~\x1b[5~\x1b[6~',
    );
    expect(encodeKeys(['C-a', 'C-z', 'C-A'], normal)).toBe('\x01\x1a\x01');
  });

  it('cursor keys and Home/End follow application cursor mode', () => {
    expect(encodeKeys(['Up', 'Down', 'Right', 'Left', 'Home', 'End'], normal)).toBe(
      '\x1b[A\x1b[B\x1b[C\x1b[D\x1b[H\x1b[F',
    );
    expect(encodeKeys(['Up', 'Down', 'Right', 'Left', 'Home', 'End'], application)).toBe(
      '\x1bOA\x1bOB\x1bOC\x1bOD\x1bOH\x1bOF',
    );
  });

  it('refuses unknown names with UNKNOWN_KEY and the list of valid ones', () => {
    expect(() => validateKeys(['Enter', 'Entr'], false)).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_KEY', message: expect.stringContaining('PageDown') }),
    );
    expect(() => validateKeys(['C-'], false)).toThrow(expect.objectContaining({ code: 'UNKNOWN_KEY' }));
    expect(() => validateKeys([42 as unknown as string], false)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });

  it('refuses C-c unless a full-screen program owns the terminal', () => {
    expect(() => validateKeys(['C-c'], false)).toThrow(expect.objectContaining({ code: 'KEY_REFUSED' }));
    expect(() => validateKeys(['C-c'], true)).not.toThrow();
    expect(() => validateKeys([{ text: 'x' }, 'C-x', 'C-c'], true)).not.toThrow();
  });

  it('the signalling control characters follow the C-c rule as names, as { text } and inside text', () => {
    const refused = expect.objectContaining({
      code: 'KEY_REFUSED',
      message: expect.stringContaining('signal'),
    });
    for (const keys of [
      ['C-c'],
      ['C-z'],
      ['C-Z'],
      [{ text: '\x03' }],
      ['Enter', { text: 'ab\x1acd' }],
      [{ text: '\x1c' }],
    ]) {
      expect(() => validateKeys(keys, false), JSON.stringify(keys)).toThrow(refused);
      expect(() => validateKeys(keys, true), JSON.stringify(keys)).not.toThrow();
    }
    for (const text of ['\x03', 'sleep 1\x1a', '\x1c', `${'x'.repeat(100_000)}\x03`]) {
      expect(() => refuseSignallingInput(text, false, 'text'), JSON.stringify(text.slice(-8))).toThrow(
        refused,
      );
      expect(() => refuseSignallingInput(text, true, 'text')).not.toThrow();
    }
    // Every other control character is plain input: the terminal signals only for these three.
    const others = Array.from({ length: 32 }, (_, code) => String.fromCharCode(code)).filter(
      (char) => !['\x03', '\x1a', '\x1c'].includes(char),
    );
    expect(() => refuseSignallingInput(others.join(''), false, 'text')).not.toThrow();
    expect(() => validateKeys(['C-a', 'C-x', 'C-d', { text: others.join('') }], false)).not.toThrow();
    // The message says which key, which signal, and what to use instead.
    expect(() => validateKeys(['Enter', 'C-z'], false)).toThrow(
      /keys\[1\] holds C-z .*SIGTSTP.*terminal_signal/,
    );
    expect(() => refuseSignallingInput('\x1c', false, 'text')).toThrow(/text holds C-\\ .*SIGQUIT/);
  });
});
