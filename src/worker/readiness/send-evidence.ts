/**
 * The evidence one send gathers (SPEC §4.2), as data: what its output showed and when (`OutputEvidence`),
 * what held at its write boundary (`WriteBoundary`), a verdict waiting out its confirm window
 * (`PendingConfirm`) and whether the foreground ran while the pty was quiet (`QuietRun`). The send's
 * states (send-operation.ts) carry these; nothing here arms a timer or calls anyone.
 */
import type { ForegroundSample } from '../proc/stdin-wait.js';
import type { WaitBaseline } from './readiness.js';

/**
 * What the send's output showed so far, fed from the pipeline's stream while the send collects. Line
 * ends and the output count matter for readiness; the byte clock for silence.
 */
export class OutputEvidence {
  /** Output (text, line ends, our marker) arrived since the write boundary. */
  hadOutput = false;
  /**
   * A line end arrived since the write boundary. The shell waiting in its line editor proves a wait
   * (a continuation prompt, `read -e`) only after the echo of this send's Enter: the kernel may hand the
   * typed text to the shell before its final `\r`, and the shell then waits in its line editor for the
   * rest — with nothing run yet.
   */
  lineEndSeen = false;
  /** Chunks with output so far: a confirm or a residue seen at one count is void at the next. */
  seq = 0;
  /**
   * Last text output (text, line ends, our marker). None yet counts as a pause: the first output of
   * a send (the echo of its input, a prompt) is a burst whose writer may block moments later, so it is
   * probed on the next turns rather than after a quiet period (which cost `read x` a millisecond).
   */
  lastOutputAt = Number.NEGATIVE_INFINITY;
  /** Last pty bytes of any kind: silence is measured on these (rule 5), not on the text stream. */
  lastByteAt: number;
  /** The chunk being processed has output in it. */
  private pending = false;

  constructor(startedAt: number) {
    this.lastByteAt = startedAt;
  }

  /** Text, a rewrite or our marker arrived in the current chunk. */
  noteOutput(): void {
    this.pending = true;
  }

  /** A line end arrived in the current chunk. */
  noteLineEnd(): void {
    this.lineEndSeen = true;
    this.pending = true;
  }

  /** The write boundary (rule 5): output from before it is not this send's. */
  resetAtBoundary(): void {
    this.hadOutput = false;
    this.lineEndSeen = false;
  }

  /**
   * The end of one pty chunk at `now`: the byte clock moves; when the chunk had output, the output
   * count and clock move too and the previous output's time is returned (else undefined).
   */
  endOfChunk(now: number): number | undefined {
    this.lastByteAt = now;
    if (!this.pending) return undefined;
    this.pending = false;
    this.hadOutput = true;
    this.seq++;
    const previousOutputAt = this.lastOutputAt;
    this.lastOutputAt = now;
    return previousOutputAt;
  }
}

/** What held at the write boundary, and what it means for the evidence after it. */
export interface WriteBoundary {
  /** The foreground's waits at the boundary (rule 4); none without a boundary. */
  readonly baseline: WaitBaseline | undefined;
  /**
   * Nothing read the terminal at the write boundary: the shell prints a prompt for what ran before
   * (a job that ended, a loop a SIGINT stopped, with its status) before it reads this input, so the
   * first new prompt after the boundary is never this input's. Only a later one is. (Should the shell
   * have read the input at once after all, its prompt is skipped and its line editor's wait proves
   * readiness, without an exit code: slower to report, never early.)
   */
  readonly typedAhead: boolean;
  /** Input may still be pending in the kernel when a reader is seen waiting (see LARGE_WRITE_BYTES). */
  readonly inputMayBePending: boolean;
}

/** A readiness verdict waiting out its confirm window. */
export interface PendingConfirm {
  readonly kind: 'prompt' | 'stdin_wait';
  readonly tid: number;
  readonly switches: number | undefined;
  readonly tpgid: number;
  /** The send's output count when first seen: output since voids it. */
  readonly outputSeq: number;
  /** Run counters of the reader's process when first seen: none of its threads may run meanwhile. */
  readonly processRuns: string;
}

/** Whether the foreground group ran while the pty was quiet (the silence tier's "nothing ran" test). */
export interface QuietRun {
  /** Run counters of every foreground thread, as last seen. */
  readonly runs: string;
  /** When they last changed (or the wait began). */
  readonly since: number;
}

/** `previous`, or a new run starting now when the foreground's run counters in `sample` changed. */
export function nextQuietRun(previous: QuietRun, sample: ForegroundSample | undefined): QuietRun {
  if (sample === undefined) return previous;
  let runs = `${sample.tpgid}`;
  for (const member of sample.members) {
    if (member.outside !== true) runs += ` ${member.tid}:${member.switches}`;
  }
  return runs === previous.runs ? previous : { runs, since: performance.now() };
}

/** Run counters of every thread of `pid` in `sample`, as one comparable string. */
export function processRunsOf(sample: ForegroundSample | undefined, pid: number): string {
  let runs = '';
  for (const member of sample?.members ?? []) {
    if (member.pid === pid) runs += ` ${member.tid}:${member.switches}`;
  }
  return runs;
}
