/**
 * A send's `waitFor` as RE2 compiles it (SPEC §4.2, §4.8): the bounds every expression is checked
 * against, on the engine thread (src/worker/readiness/wait-pattern.ts, which tests output with it) and
 * on the host for a send held for a person's hand-back (send-precheck.ts: a syntax error is refused at
 * once, not when the hand-back comes). re2js is loaded at the first compile, so a host that never
 * holds a send with `waitFor` never loads it.
 */
import { createRequire } from 'node:module';
import type { RE2JS } from 're2js';
import { TerminalError } from './errors.js';
import { MAX_WAIT_PATTERN_CHARS } from './input-limit.js';

/**
 * Largest compiled `waitFor` program (RE2's program size, about one instruction per character or class
 * matched, repetitions expanded): `(?i)error|failed|listening on port \d+` is 35, a dozen alternative
 * words with `(?i)` about 120. Its worst test over {@link MAX_MATCH_CHARS} then costs tens of
 * milliseconds, not seconds (`\pL{1000}` alone is 1 002; 400 of them, 400 002, took 8 s per line).
 */
export const MAX_WAIT_PROGRAM_SIZE = 256;
/** Refuses an empty `waitFor` (it would match at once) and one over {@link MAX_WAIT_PATTERN_CHARS}. */
export function assertWaitExpressionLength(source: string): void {
  if (source.length === 0) {
    throw new TerminalError('INVALID_ARGUMENT', 'waitFor is empty: it would match any output at once');
  }
  if (source.length > MAX_WAIT_PATTERN_CHARS) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      `waitFor is ${source.length} characters; at most ${MAX_WAIT_PATTERN_CHARS}`,
    );
  }
}

/**
 * Compiles `source` with RE2's linear-time engine; throws `INVALID_ARGUMENT` when it is empty, too
 * long, too large a program, invalid, or not RE2 syntax.
 */
export function compileWaitExpression(source: string): RE2JS {
  assertWaitExpressionLength(source);
  // Compiling costs about as much as the program is large: a pattern whose text alone puts it far over
  // the bound is refused before it is built (counted repetitions are expanded by the compiler).
  const estimate = estimateProgramSize(source);
  if (estimate > 2 * MAX_WAIT_PROGRAM_SIZE) throw tooLarge(source, `about ${estimate}`);
  let compiled: RE2JS;
  try {
    compiled = re2().compile(source);
  } catch (error) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      `waitFor ${JSON.stringify(source)} is not an expression the linear-time engine (RE2 syntax) can run: ${
        error instanceof Error ? error.message : String(error)
      } (lookarounds and backreferences are not supported)`,
      { cause: error },
    );
  }
  const size = compiled.programSize();
  if (size > MAX_WAIT_PROGRAM_SIZE) throw tooLarge(source, String(size));
  return compiled;
}

/** INVALID_ARGUMENT for a program over the size bound, saying what to do instead. */
function tooLarge(source: string, size: string): TerminalError {
  const shown = source.length > 80 ? `${JSON.stringify(source.slice(0, 80))}…` : JSON.stringify(source);
  return new TerminalError(
    'INVALID_ARGUMENT',
    `waitFor ${shown} compiles to ${size} instructions; at most ${MAX_WAIT_PROGRAM_SIZE}: match a short, ` +
      'distinctive part of the line (e.g. "Listening on|ready in") rather than its whole shape, and use ' +
      'small repetition counts',
  );
}

/**
 * About how many instructions `source` compiles to, from its text alone: one per literal character,
 * escape, class or `.`, times the counts of the repetitions `{n}`, `{n,}`, `{n,m}` around it (the
 * larger bound). Cheap: the compiler's own cost grows with the program, so a pattern this estimate
 * puts far over the bound is refused before it is built. (The compiler may factor alternatives that
 * share a prefix, so the real program can be smaller: the exact bound is checked after compiling.)
 */
export function estimateProgramSize(source: string): number {
  const groups: number[] = [0];
  let last = 0; // what the previous atom or group contributed
  const add = (count: number) => {
    groups[groups.length - 1]! += count;
  };
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      const next = source[i + 1];
      // \pL is two characters after the backslash; \p{Greek} and \x{41} run to their brace.
      if ((next === 'p' || next === 'P' || next === 'x') && source[i + 2] === '{')
        i = Math.max(i + 2, source.indexOf('}', i));
      else i += next === 'p' || next === 'P' ? 2 : 1;
      last = 1;
      add(1);
    } else if (c === '[') {
      let j = i + 1;
      if (source[j] === '^') j++;
      if (source[j] === ']') j++;
      while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
      i = j;
      last = 1;
      add(1);
    } else if (c === '(') {
      if (source[i + 1] === '?') {
        // (?i) sets flags and holds nothing; (?:, (?P<name> and (?i: open a group.
        let j = i + 2;
        while (j < source.length && source[j] !== ':' && source[j] !== ')' && source[j] !== '>') j++;
        if (source[j] === ')') {
          i = j;
          last = 0;
          continue;
        }
        i = j;
      }
      groups.push(0);
      last = 0;
    } else if (c === ')') {
      last = groups.length > 1 ? groups.pop()! : 0;
      add(last);
    } else if (c === '{') {
      const match = /^\{(\d+)(?:,(\d*))?\}/.exec(source.slice(i, i + 16));
      if (match === null) {
        last = 1;
        add(1);
        continue;
      }
      const count = Math.max(Number(match[1]), match[2] ? Number(match[2]) : 0);
      add(last * Math.max(0, count - 1));
      i += match[0].length - 1;
    } else if (c === '|' || c === '*' || c === '+' || c === '?' || c === '^' || c === '$') {
      last = 0;
    } else {
      last = 1;
      add(1);
    }
  }
  return groups.reduce((sum, value) => sum + value, 0);
}

let engine: typeof RE2JS | undefined;

/** re2js (its CommonJS build: loaded synchronously, once, by both threads' first compile). */
function re2(): typeof RE2JS {
  engine ??= (createRequire(import.meta.url)('re2js') as { RE2JS: typeof RE2JS }).RE2JS;
  return engine;
}
