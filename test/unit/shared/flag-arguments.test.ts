// The command-line flag walk every subcommand shares: `--flag value` and `--flag=value` read alike, a
// consumed value is not seen again as a flag, a missing or empty value is refused in the caller's words.
import { describe, expect, it } from 'vitest';
import { flagArguments } from '../../../src/shared/flag-arguments.js';

function walk(argv: string[]): Array<[string, string | undefined]> {
  const seen: Array<[string, string | undefined]> = [];
  for (const { flag, value } of flagArguments(argv, (flag) => `test: ${flag} needs a value`)) {
    seen.push([flag, flag.startsWith('--v') ? value() : undefined]);
  }
  return seen;
}

describe('flagArguments', () => {
  it('reads a value inline or from the next argument, which is then consumed', () => {
    expect(walk(['--va=1', '--x', '--vb', '--x=2', 'word'])).toEqual([
      ['--va', '1'],
      ['--x', undefined],
      ['--vb', '--x=2'],
      ['word', undefined],
    ]);
  });

  it('keeps what follows the first = of an inline value', () => {
    expect(walk(['--v=a=b'])).toEqual([['--v', 'a=b']]);
  });

  it('refuses a missing or empty value with the caller words and a code', () => {
    expect(() => walk(['--v'])).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: 'test: --v needs a value' }),
    );
    expect(() => walk(['--v='])).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => walk(['--v', ''])).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });
});
