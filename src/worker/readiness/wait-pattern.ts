/**
 * A send's `waitFor` expression (SPEC §4.2, §4.8), compiled with RE2's linear-time engine: no expression can
 * stall an engine thread the way a backtracking one can (`/^(a+)+$/` doubles its time per character in
 * JavaScript's own engine, and every session on the thread would stall with it).
 *
 * Linear is not cheap: one test costs up to (instructions alive at once) × (characters tested), and
 * re2js spends about a microsecond per instruction and character at worst (a counted repetition over
 * a class, `\pL{1000}`, keeps every instruction alive; its lazy DFA rebuilds states when they do not
 * repeat). So every test is bounded on both factors — the compiled program (at most
 * {@link MAX_WAIT_PROGRAM_SIZE} instructions, refused at validation) and the subject (the last
 * {@link MAX_MATCH_CHARS} of a line) — the partial line is tested at most once per
 * {@link PARTIAL_TEST_INTERVAL_MS} of new output, and completed lines are tested in turns of the event
 * loop of at most {@link TEST_TURN_BUDGET_MS} each, so a pattern over a flood shares its thread with the
 * other sessions on it instead of holding it.
 */
import { DisposableOwner, DisposableSlot } from '../../shared/lifecycle.js';
import { compileWaitExpression } from '../../shared/wait-expression.js';

export { estimateProgramSize, MAX_WAIT_PROGRAM_SIZE } from '../../shared/wait-expression.js';

/** What a line is tested on: its last 8 KiB (a match further back in a longer line is not looked for). */
export const MAX_MATCH_CHARS = 8 * 1024;
/** The partial line is tested at most this often while output keeps arriving (and once after it stops). */
export const PARTIAL_TEST_INTERVAL_MS = 10;
/** Completed lines are tested for at most about this long per turn of the event loop, then the next turn goes on. */
const TEST_TURN_BUDGET_MS = 5;
/**
 * Characters of completed lines waiting to be tested, at most. A flood faster than its pattern can be
 * tested drops its oldest waiting lines beyond this (each line is still at most {@link MAX_MATCH_CHARS}).
 */
const MAX_QUEUED_CHARS = 1024 * 1024;
/** Lines passed over before the queue's array is compacted (below this, keeping them costs nothing). */
const QUEUE_COMPACT_MIN = 1024;

/** A compiled `waitFor` expression. */
export interface WaitPattern {
  /** The expression as the caller wrote it. */
  readonly source: string;
  /** True when the expression matches somewhere in `line`. */
  test(line: string): boolean;
}

/**
 * Compiles `source`; throws `INVALID_ARGUMENT` when it is empty, too long, too large a program,
 * invalid, or not RE2 syntax (the checks are `compileWaitExpression`'s, which the host also runs on a
 * send held for a person's hand-back).
 */
export function compileWaitPattern(source: string): WaitPattern {
  const compiled = compileWaitExpression(source);
  return { source, test: (line) => compiled.test(line) };
}

/** Typed lines longer than this are not looked for in the echo (the search is quadratic in the worst case). */
const MAX_ECHO_CHARS = 4 * 1024;

/**
 * Tests a send's output against its `waitFor`, line by line: the last {@link MAX_MATCH_CHARS} of each
 * completed line once, in turns of at most {@link TEST_TURN_BUDGET_MS}; the partial line when asked,
 * at most once per {@link PARTIAL_TEST_INTERVAL_MS}, and once more when output stopped meanwhile.
 * `onMatch` is called once, when a test that was not asked for directly (a later turn, the deferred
 * partial test) matched. The terminal echoes typed input: the first completed lines that end with
 * the typed lines, and a partial line's tail that is the start of the next typed line, are the echo
 * and never match (`echo ready` with `waitFor: 'ready'` waits for the output `ready`).
 */
export class PatternWatch extends DisposableOwner {
  /** True once the pattern matched. */
  matched = false;
  private partial = '';
  /** The partial line changed since it was last tested. */
  private partialDirty = false;
  private partialTestedAt = Number.NEGATIVE_INFINITY;
  private readonly echo: string[];
  /** Completed lines (their tails) waiting to be tested, oldest first, and their characters. */
  private queue: string[] = [];
  private queueHead = 0;
  private queuedChars = 0;
  private readonly nextTurn = this.owned.add(new DisposableSlot());
  private readonly partialTimer = this.owned.add(new DisposableSlot());

  constructor(
    private readonly pattern: WaitPattern,
    typed: string,
    private readonly onMatch: () => void = () => undefined,
  ) {
    super();
    this.echo = typed.split(/\r\n|\r|\n/).filter((line) => line !== '' && line.length <= MAX_ECHO_CHARS);
  }

  /** Printable text on the current line. */
  text(s: string): void {
    if (this.matched) return;
    this.partial += s;
    if (this.partial.length > MAX_MATCH_CHARS) this.partial = this.partial.slice(-MAX_MATCH_CHARS);
    this.partialDirty = true;
  }

  /** The current line ended. */
  newline(): void {
    const line = this.partial;
    this.partial = '';
    this.partialDirty = false;
    this.completed(line);
  }

  /** Several lines at once (line ends may be CRLF). */
  textBlock(block: string): void {
    if (this.matched) return;
    let start = 0;
    for (let end = block.indexOf('\n'); end !== -1; end = block.indexOf('\n', start)) {
      const lineEnd = end > start && block.charCodeAt(end - 1) === 0x0d ? end - 1 : end;
      // Only the tail of a line is tested: a long line is not copied whole.
      this.text(block.slice(Math.max(start, lineEnd - MAX_MATCH_CHARS), lineEnd));
      this.newline();
      start = end + 1;
    }
    if (start < block.length) this.text(block.slice(Math.max(start, block.length - MAX_MATCH_CHARS)));
  }

  /** A carriage-return rewrite: what follows replaces the line. */
  rewriteLine(): void {
    this.partial = '';
    this.partialDirty = false;
  }

  /**
   * Tests what is due: the completed lines of this turn's budget, and the partial line (without the
   * echo being typed into it) unless it was tested less than {@link PARTIAL_TEST_INTERVAL_MS} ago —
   * then that test runs when the interval ends. True once matched.
   */
  testPartial(): boolean {
    if (this.matched) return true;
    if (this.runQueue()) return true;
    if (!this.partialDirty || this.partial === '') return false;
    const wait = this.partialTestedAt + PARTIAL_TEST_INTERVAL_MS - performance.now();
    if (wait > 0) {
      this.partialTimer.value ??= this.owned.timeout('waitFor partial line', wait, () => {
        this.partialTimer.clear();
        if (this.testPartial()) this.onMatch();
      });
      return false;
    }
    this.partialDirty = false;
    this.partialTestedAt = performance.now();
    const text = this.withoutEcho(this.partial);
    if (text !== '' && this.pattern.test(text)) this.found();
    return this.matched;
  }

  private completed(line: string): void {
    if (this.matched || this.disposed) return;
    const next = this.echo[0];
    if (next !== undefined && line.endsWith(next)) {
      this.echo.shift();
      return;
    }
    this.queue.push(line);
    this.queuedChars += line.length;
    while (this.queuedChars > MAX_QUEUED_CHARS && this.queueHead < this.queue.length - 1) {
      this.queuedChars -= this.queue[this.queueHead++]!.length;
    }
    this.releaseTested();
    this.scheduleQueue();
  }

  /**
   * Lets go of the lines before `queueHead` (tested or dropped) once they are half of the array, so a
   * flood that outruns a slow pattern — the queue never empties then — keeps only what `queuedChars`
   * counts, not every line it ever queued. Amortised O(1) per line.
   */
  private releaseTested(): void {
    if (this.queueHead < QUEUE_COMPACT_MIN || this.queueHead * 2 < this.queue.length) return;
    this.queue = this.queue.slice(this.queueHead);
    this.queueHead = 0;
  }

  /** Tests queued lines until one matches, the queue is empty, or this turn's budget is spent. */
  private runQueue(): boolean {
    if (this.queueHead === this.queue.length) return false;
    const until = performance.now() + TEST_TURN_BUDGET_MS;
    while (this.queueHead < this.queue.length) {
      const line = this.queue[this.queueHead++]!;
      this.queuedChars -= line.length;
      if (this.pattern.test(line)) {
        this.found();
        return true;
      }
      if (performance.now() >= until) break;
    }
    if (this.queueHead === this.queue.length) {
      this.queue = [];
      this.queueHead = 0;
    } else {
      this.releaseTested();
      this.scheduleQueue();
    }
    return false;
  }

  /** The queued lines are tested in a later turn (the first of them in the next one). */
  private scheduleQueue(): void {
    if (this.nextTurn.value !== undefined || this.disposed) return;
    this.nextTurn.value = this.owned.immediate('waitFor lines', () => {
      this.nextTurn.clear();
      if (this.runQueue()) this.onMatch();
    });
  }

  private found(): void {
    this.matched = true;
    this.queue = [];
    this.queueHead = 0;
    this.queuedChars = 0;
    this.nextTurn.clear();
    this.partialTimer.clear();
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
