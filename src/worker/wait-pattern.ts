/**
 * A send's `waitFor` expression (SPEC §4.2), compiled with RE2's linear-time engine: no expression can
 * stall an engine thread the way a backtracking one can (`/^(a+)+$/` doubles its time per character in
 * JavaScript's own engine, and every session on the thread would stall with it).
 */
import { RE2JS } from 're2js';
import { TerminalError } from '../shared/errors.js';

/** Longest accepted `waitFor` expression: a pattern is a few words, not a program. */
export const MAX_WAIT_PATTERN_CHARS = 4_096;

/** A compiled `waitFor` expression. */
export interface WaitPattern {
  /** The expression as the caller wrote it. */
  readonly source: string;
  /** True when the expression matches somewhere in `line`. */
  test(line: string): boolean;
}

/** Compiles `source`; throws `INVALID_ARGUMENT` when it is empty, too long, invalid, or not RE2 syntax. */
export function compileWaitPattern(source: string): WaitPattern {
  if (source.length === 0) {
    throw new TerminalError('INVALID_ARGUMENT', 'waitFor is empty: it would match any output at once');
  }
  if (source.length > MAX_WAIT_PATTERN_CHARS) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      `waitFor is ${source.length} characters; at most ${MAX_WAIT_PATTERN_CHARS}`,
    );
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source);
  } catch (error) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      `waitFor ${JSON.stringify(source)} is not an expression the linear-time engine (RE2 syntax) can run: ${
        error instanceof Error ? error.message : String(error)
      } (lookarounds and backreferences are not supported)`,
      { cause: error },
    );
  }
  return { source, test: (line) => compiled.test(line) };
}
