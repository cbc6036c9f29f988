/**
 * The one reading of a command line's flags shared by every subcommand (`mcp`, `daemon`, `watch`, the
 * interactive CLI): `--flag value` and `--flag=value` alike, a missing or empty value refused with the
 * caller's words. Each subcommand still decides which flags exist and what their values may be.
 */
import { TerminalError } from './errors.js';

/** One argument of the command line, as a flag. */
export interface FlagArgument {
  /** The argument as given. */
  readonly arg: string;
  /** `--flag` of `--flag=value`, else the whole argument. */
  readonly flag: string;
  /** The value written inline (`--flag=value`), if any. */
  readonly inline: string | undefined;
  /**
   * The flag's value: the inline one, else the next argument, which is then consumed. A missing or
   * empty value is refused (`INVALID_ARGUMENT`, `missingValue`'s words).
   */
  value(): string;
}

/** Walks `argv` flag by flag; `missingValue(flag)` words the refusal of a flag given no value. */
export function* flagArguments(
  argv: readonly string[],
  missingValue: (flag: string) => string,
): Generator<FlagArgument> {
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? (arg.split(/=(.*)/s, 2) as [string, string])
        : [arg, undefined];
    yield {
      arg,
      flag,
      inline,
      value: () => {
        // Consuming moves this walk's position: the generator resumes after the value.
        const next = inline ?? argv[++index];
        if (next === undefined || next === '')
          throw new TerminalError('INVALID_ARGUMENT', missingValue(flag));
        return next;
      },
    };
  }
}
