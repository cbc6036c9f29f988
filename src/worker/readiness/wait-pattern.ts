/**
 * A send's `waitFor` expression (SPEC §4.2), compiled with RE2's linear-time engine: no expression can
 * stall an engine thread the way a backtracking one can (`/^(a+)+$/` doubles its time per character in
 * JavaScript's own engine, and every session on the thread would stall with it).
 */
import { RE2JS } from 're2js';
import { TerminalError } from '../../shared/errors.js';
import { MAX_WAIT_PATTERN_CHARS } from '../../shared/input-limit.js';

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

/** Longest partial line kept for matching (its tail): a line that never ends cannot grow memory. */
const MAX_PARTIAL_CHARS = 64 * 1024;
/** Typed lines longer than this are not looked for in the echo (the search is quadratic in the worst case). */
const MAX_ECHO_CHARS = 4 * 1024;

/**
 * Tests a send's output against its `waitFor`, line by line: each completed line once, and the partial
 * line when asked (once per pty chunk). The terminal echoes typed input: the first completed lines that
 * end with the typed lines, and a partial line's tail that is the start of the next typed line, are the
 * echo and never match (`echo ready` with `waitFor: 'ready'` waits for the output `ready`).
 */
export class PatternWatch {
  /** True once the pattern matched. */
  matched = false;
  private partial = '';
  private readonly echo: string[];

  constructor(
    private readonly pattern: WaitPattern,
    typed: string,
  ) {
    this.echo = typed.split(/\r\n|\r|\n/).filter((line) => line !== '' && line.length <= MAX_ECHO_CHARS);
  }

  /** Printable text on the current line. */
  text(s: string): void {
    if (this.matched) return;
    this.partial += s;
    if (this.partial.length > MAX_PARTIAL_CHARS) this.partial = this.partial.slice(-MAX_PARTIAL_CHARS);
  }

  /** The current line ended. */
  newline(): void {
    const line = this.partial;
    this.partial = '';
    this.completed(line);
  }

  /** Several lines at once (line ends may be CRLF). */
  textBlock(block: string): void {
    if (this.matched) return;
    const lines = block.split('\n');
    const last = lines.pop()!;
    for (const line of lines) {
      this.text(line.endsWith('\r') ? line.slice(0, -1) : line);
      this.newline();
      if (this.matched) return;
    }
    this.text(last);
  }

  /** A carriage-return rewrite: what follows replaces the line. */
  rewriteLine(): void {
    this.partial = '';
  }

  /** Tests the partial line (without the echo being typed into it); true once matched. */
  testPartial(): boolean {
    if (this.matched || this.partial === '') return this.matched;
    const text = this.withoutEcho(this.partial);
    if (text !== '' && this.pattern.test(text)) this.matched = true;
    return this.matched;
  }

  private completed(line: string): void {
    if (this.matched) return;
    const next = this.echo[0];
    if (next !== undefined && line.endsWith(next)) {
      this.echo.shift();
      return;
    }
    if (this.pattern.test(line)) this.matched = true;
  }

  /** `line` without a tail that is the beginning of the next typed line (its echo in progress). */
  private withoutEcho(line: string): string {
    const next = this.echo[0];
    if (next === undefined) return line;
    for (let i = Math.max(0, line.length - next.length); i < line.length; i++) {
      if (line.charCodeAt(i) === next.charCodeAt(0) && next.startsWith(line.slice(i)))
        return line.slice(0, i);
    }
    return line;
  }
}
