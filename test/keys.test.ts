/** Named keys (SPEC §4.3): names, literals, modes, refusals. */
import { describe, expect, it } from 'vitest';
import { encodeKeys, validateKeys } from '../src/shared/keys.js';

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
});
