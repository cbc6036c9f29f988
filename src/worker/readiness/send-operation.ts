/**
 * One send's whole lifecycle (SPEC §4.2, §4.4): the write, the readiness evidence gathered after it, the
 * wait bound, the silence tier, `waitFor`, the probe timer, cancellation (send-cancellation.ts) and the
 * output slice. The session holds at most one. Its state is a closed union whose variants carry their
 * data (the evidence of send-evidence.ts), and every timer it arms is registered with its store, which is
 * disposed on settle: a settled send arms nothing more.
 *
 * How a send settles, where the exact tier works (Linux x86-64/arm64):
 * - `stdin_read`: the shell's verified prompt, or a thread of the session newly blocked reading the
 *   terminal (confirmed over a short quiet), or a wait the write did not wake (rule 4);
 * - `pattern`: `waitFor` matched a line;
 * - `inferred_idle`: no pty bytes for `idleSilenceMs` and the probes cannot see the reader — a relay, or
 *   an unterminated last line while no process of the foreground group ran;
 * - `running` at the wait bound (or when the caller ends the wait), `timeout` when the foreground could
 *   not be read then. Silence alone never settles anything else.
 * Without the exact tier the silence bound settles `inferred_idle` as before.
 */
import { TerminalError } from '../../shared/errors.js';
import { DisposableOwner, DisposableSlot } from '../../shared/lifecycle.js';
import type { CappedWait, SendOutputDelta, TerminalSendResult, WaitReason } from '../../shared/types.js';
import type { OutputMark } from '../output/output-window.js';
import { rowEditsTellSomething, tellRowEdits } from '../output/row-edit-text.js';
import type { ForegroundSample } from '../proc/stdin-wait.js';
import { SLICE_BYTES } from '../pty/pty-input-writer.js';
import type { DrainOutcome } from '../pty/pty-output-drain.js';
import type { PromptCandidate, PromptTracker } from './prompt-tracker.js';
import {
  baselineOf,
  judgeReadiness,
  noteLeftWait,
  type ReadinessVerdict,
  shellHoldsPartialLine,
} from './readiness.js';
import { CALLER_SEND, type ReadinessPolicy } from './readiness-policy.js';
import { SendCancellation, type SendWrite } from './send-cancellation.js';
import { nextQuietRun, OutputEvidence, processRunsOf, type WriteBoundary } from './send-evidence.js';
import type { SendContext } from './send-ports.js';
import {
  type OutputReaction,
  type ProbeSchedule,
  REACTION_URGENCY,
  type SendState,
  type Waiting,
} from './send-state.js';
import { PatternWatch, type WaitPattern } from './wait-pattern.js';

/** Probe delays after output, in ms: a program that just printed its prompt blocks within microseconds,
 *  so look again almost at once, then back off to `pollIntervalMs` while it keeps running. */
const PROBE_BACKOFF_MS = [1, 2, 4, 8, 16, 32];

/**
 * Quiet time before a stdin wait is confirmed when the pty's output cannot be drained (see
 * `drainOutput`): the waiting program's last output may still be in the kernel's pty flush work when
 * it is first seen blocked, and this lets it reach the output slice before the send settles. Under load
 * 15 on 2 CPUs such output arrived up to 4.6 ms after the wait was first seen (bench/README.md), so
 * only a drain, not a shorter window, makes this fast.
 */
const STDIN_CONFIRM_MS = 3;

/**
 * How long probes run on consecutive event-loop turns after a prompt candidate (or a burst of output),
 * before falling back to timers: bash blocks in its line editor ~0.3–1.5 ms after its marker arrives,
 * and a timer's millisecond would add to every settle.
 */
const SPIN_PROBE_MS = 2;

/**
 * Output a spin may see before it is taken for a flood and ends: a burst that ends at a prompt (an echo,
 * a REPL's answer, its prompt) is far smaller. Without this bound, a flood with pauses of a millisecond
 * here and there (its reads queue behind xterm's parse) sampled `/proc` on every turn of each spin: 5 000
 * samples in a 1.1 s `\r` progress flood, a fifth of the thread's time.
 */
const SPIN_MAX_CHARS = 16 * 1024;

/** Quiet time after output before a probe looks: while output flows, nobody is blocked on input. */
const QUIET_PROBE_MS = 1;

/**
 * Input that may still be pending in the kernel when the shell shows its prompt: more than one slice of
 * the writer (each slice reaches the tty through its own pass of a kernel worker, so a raw-mode reader
 * such as readline can block between two), text with several lines, input typed ahead while a job
 * owned the terminal, or the rest of a cancelled write. In those cases the shell can be seen blocked
 * at a prompt for a moment although input is on its way (measured: bash blocks in pselect right after
 * switching a typed-ahead line from canonical to raw mode), so the evidence is confirmed over a short
 * quiet window; the input waking the reader voids it. (Draining the output proves nothing here: the
 * input direction has its own buffer.)
 */
const LARGE_WRITE_BYTES = SLICE_BYTES;
/** Confirm window for prompt evidence when input may be pending. */
const PENDING_INPUT_CONFIRM_MS = 15;
/**
 * A stdin wait is not proven within this long after a terminal reply was written. A program that asked
 * the terminal something (`read -sdR -p $'\e[6n'`) sits blocked on stdin until the reply reaches it, and
 * that takes the kernel's pty flush work and a turn of the scheduler: under load, more than the stdin
 * confirmation's quiet. With 2 sessions flooding on a 2-CPU machine, 34 of 25 004 such sends settled
 * before the reply was read; with this grace, 0 of 16 756. Only a program that reads a reply and then
 * waits silently pays it (its output, if any, moves readiness on anyway).
 */
const REPLY_GRACE_MS = 30;

/** Options of one send. */
export interface SendOptions {
  /** Text to type; empty for startup and for a wait-only send. */
  text: string;
  /** Append `\r`. */
  submit: boolean;
  /** What may settle this send (default {@link CALLER_SEND}; a shell's startup phases bring their own). */
  readiness?: ReadinessPolicy;
  /** This send's wait bound in ms (default config `timeoutMs`). */
  timeoutMs?: number;
  /** Settle `pattern` once this matches a line of the send's output. */
  waitFor?: WaitPattern;
  /** How the send's cap cut its wait bound, when it did: the result reports it. */
  cappedWait?: CappedWait;
  /** Absolute deadline (`performance.now()` ms) shared by several phases; default start + timeoutMs. */
  deadlineAt?: number;
}

/**
 * One send (the pipeline's `OutputListener` while it holds the slot). The pipeline feeds it the text stream (`text`, `newline`, `textBlock`, `rewriteLine`,
 * `markerArrived`) and calls `endOfChunk()` after each processed pty chunk, with or without text in it.
 */
export class SendOperation extends DisposableOwner {
  /** Settles exactly once with the send's result (or rejects on a write/signal transport failure). */
  readonly done: Promise<TerminalSendResult>;
  /** Resolves once neither a write nor a cancel signal of this send can still happen (slot release). */
  readonly quiesced: Promise<void>;

  private state: SendState;
  private readonly startedAt = performance.now();
  private readonly tracker: PromptTracker;
  /** What may settle this send. */
  private readonly policy: ReadinessPolicy;
  /** A caller's send without input: no write boundary, any wait already there is readiness. */
  private readonly waitOnly: boolean;
  /** This send presses Enter after its input (see {@link OutputEvidence.lineEndSeen}). */
  private readonly submitsInput: boolean;
  /** The input is longer than one write slice or holds several lines (see LARGE_WRITE_BYTES). */
  private readonly largeInput: boolean;
  /** Where this send's result starts (the previous result's end). */
  private readonly resultMark: OutputMark;
  /** Where the next `readOutput` starts (the reader's cursor; moves in every state). */
  private deltaMark: OutputMark;
  private readonly watch: PatternWatch | undefined;
  private readonly cancellation: SendCancellation;
  /** The next probe on a timer, or on the next turn of the event loop: at most one is armed. */
  private readonly probeTimer = this.owned.add(new DisposableSlot());
  private readonly probeImmediate = this.owned.add(new DisposableSlot());
  private resolveDone!: (result: TerminalSendResult) => void;
  private rejectDone!: (error: unknown) => void;

  constructor(
    private readonly env: SendContext,
    private readonly options: SendOptions,
  ) {
    super();
    this.tracker = env.output.prompt;
    this.policy = options.readiness ?? CALLER_SEND;
    this.waitOnly = !this.policy.startup && options.text === '' && !options.submit;
    this.submitsInput = !this.policy.startup && options.submit;
    this.largeInput =
      Buffer.byteLength(options.text) + (options.submit ? 1 : 0) > LARGE_WRITE_BYTES ||
      /[\r\n]/.test(options.text.replace(/[\r\n]+$/, ''));
    this.resultMark = this.deltaMark = env.output.resultCursor();
    this.state = { kind: 'draining', output: new OutputEvidence(this.startedAt) };
    this.cancellation = new SendCancellation(env.terminal, (error) => this.fail(error));
    if (options.waitFor !== undefined) {
      // A match found in a later turn (lines tested over several turns, the deferred partial line)
      // settles the send when it is waiting; one found earlier is seen when the wait begins. The watch
      // reports such a match only from its own timers, never inside a call of ours.
      this.watch = this.owned.add(
        new PatternWatch(options.waitFor, options.text, () => {
          if (this.state.kind === 'waiting') this.settle('pattern');
        }),
      );
    }
    this.done = new Promise<TerminalSendResult>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    // A transport failure rejects `done`; the session observes it, so it is never unhandled.
    this.done.catch(() => undefined);
    const deadlineAt = options.deadlineAt ?? this.startedAt + (options.timeoutMs ?? env.config.timeoutMs);
    this.owned.timeout('send deadline', Math.max(0, deadlineAt - performance.now()), () => this.onDeadline());
    // The slot is held until no byte and no signal of this send can still reach the terminal.
    this.quiesced = this.done.then(
      () => this.cancellation.quiesced(),
      () => this.cancellation.quiesced(),
    );
  }

  /** True once the send has a result. */
  get settled(): boolean {
    return this.state.kind === 'settled';
  }

  /** Begins the send: drains terminal replies, marks the write boundary, writes. */
  async start(): Promise<void> {
    const draining = this.state;
    if (draining.kind !== 'draining') return;
    const { output } = draining;
    if (this.policy.startup && this.options.text === '' && !this.options.submit) {
      // A startup phase without input: collect from the very first byte the shell prints.
      this.beginWaiting(output, this.noBoundary());
      return;
    }
    if (this.waitOnly) {
      // No input, no write boundary: the output since the previous result and a prompt that arrived
      // since are this send's evidence, and a wait already there is readiness.
      this.watchEarlierOutput();
      this.beginWaiting(output, this.noBoundary());
      return;
    }
    try {
      await this.env.terminal.drainReplies();
    } catch {
      // Replies failing to drain means the pty is gone; exit handling settles the send.
    }
    if (this.state !== draining) return; // settled, or the session is closing
    if (this.cancellation.requested) {
      // Cancelled before a byte was written: the queued input is never written (SPEC §4.4).
      this.beginWaiting(output, this.noBoundary());
      return;
    }
    // Write boundary (rule 5): evidence gathered before this point is discarded — including output read
    // from the pty but not yet through the pipeline (a prompt printed before the write). While draining,
    // what the flush feeds this send moves only its byte clock: nothing reacts to it.
    this.env.output.flush();
    // The stream ends in the shell's own prompt: its line editor reads this input, whatever the sample
    // below shows (a shell stopped or woken by a signal at its prompt is not seen waiting).
    const atShellPrompt = this.tracker.candidate !== undefined;
    this.tracker.reset();
    output.resetAtBoundary();
    const atBoundary = this.env.probe.sample();
    const shell = this.env.probe.shell();
    // Typed ahead: nothing in the foreground is reading the terminal now — a job owns it, or the shell
    // does but is still on its way back to its prompt (a job just ended: after a SIGINT, the shell
    // takes the terminal back before it prints its prompt) — so the input is read only later, and the
    // prompt that comes first (the ended job's, with its status) is not this input's. Not when a
    // process is blocked reading the terminal (the shell at its prompt, a REPL at its own): it reads
    // the input now, and a line of it arrives in one piece. (Without that exception, every line sent
    // to python3 or node paid PENDING_INPUT_CONFIRM_MS.)
    const readsNow = atBoundary?.members.some((m) => m.verdict === 'waiting' && m.outside !== true);
    const readLater = shell === undefined || readsNow !== true;
    const boundary: WriteBoundary = {
      baseline: baselineOf(atBoundary),
      inputMayBePending: this.largeInput || readLater,
      // Only when the foreground was read, the stream does not end at the shell's prompt, and no
      // process waits on the terminal, not even one outside the foreground group that opened it itself
      // (a pinentry reads the input at once). An unreadable sample proves nothing either way: the
      // confirm window alone guards then.
      typedAhead:
        readLater &&
        shell !== undefined &&
        atBoundary !== undefined &&
        !atShellPrompt &&
        !atBoundary.members.some((m) => m.verdict === 'waiting'),
    };
    const data = this.options.submit ? `${this.options.text}\r` : this.options.text;
    if (data.length === 0) {
      this.beginWaiting(output, boundary);
      return;
    }
    const write: SendWrite = this.env.terminal
      .writeInput(data, () => this.cancellation.requested || this.settled)
      .then(
        (outcome) => outcome,
        (error: unknown) => {
          this.fail(
            new TerminalError('WRITE_FAILED', `writing to the terminal failed: ${String(error)}`, {
              cause: error,
            }),
          );
          return 'failed' as const;
        },
      );
    this.cancellation.writeStarted(write);
    const writing = { kind: 'writing', output, boundary, write } as const;
    this.state = writing;
    const outcome = await write;
    if (outcome !== 'failed' && this.state === writing) this.beginWaiting(output, boundary);
  }

  /** Text of the current line. */
  text(s: string): void {
    const output = this.collecting();
    if (output === undefined) return;
    this.watch?.text(s);
    output.noteOutput();
  }

  /** End of line. */
  newline(): void {
    const output = this.collecting();
    if (output === undefined) return;
    this.watch?.newline();
    output.noteLineEnd();
  }

  /** Several lines at once. */
  textBlock(block: string): void {
    const output = this.collecting();
    if (output === undefined) return;
    this.watch?.textBlock(block);
    if (block.includes('\n')) output.noteLineEnd();
    else output.noteOutput();
  }

  /** Carriage-return rewrite of the current line. */
  rewriteLine(): void {
    const output = this.collecting();
    if (output === undefined) return;
    this.watch?.rewriteLine();
    output.noteOutput();
  }

  /**
   * A read's row-edit text in one call: split for a `waitFor` watch, which tests lines as they come;
   * the evidence notes it as the calls one by one would have (a CRLF is a line end; backspaces alone
   * are nothing).
   */
  rowEdits(data: string): void {
    const output = this.collecting();
    if (output === undefined) return;
    if (this.watch !== undefined) tellRowEdits(this.watch, data);
    if (data.includes('\r\n')) output.noteLineEnd();
    else if (rowEditsTellSomething(data)) output.noteOutput();
  }

  /** One of our prompt markers arrived (the session's tracker has it). */
  markerArrived(): void {
    this.collecting()?.noteOutput();
  }

  /**
   * The end of one pty data chunk (with or without text in it). Readiness bookkeeping runs here once per
   * chunk, never per line: a flood delivers thousands of lines per chunk, and re-arming timers for each
   * would dominate its cost. `processingStartedAt` is when the session began processing the chunk
   * (default: now), `chars` its length.
   */
  endOfChunk(processingStartedAt?: number, chars = 0): void {
    const state = this.state;
    if (state.kind !== 'draining' && state.kind !== 'writing' && state.kind !== 'waiting') return;
    const previousOutputAt = state.output.endOfChunk(performance.now());
    if (previousOutputAt === undefined || state.kind !== 'waiting') return;
    const reaction = this.noteChunk(state, previousOutputAt, processingStartedAt, chars);
    if (state.flushing !== undefined) {
      // This send is inside its own flush (a probe, the deadline): the chunk is data for it, read once
      // the flush returned. Acting now would run a probe inside the probe that flushed.
      if (REACTION_URGENCY[reaction] > REACTION_URGENCY[state.flushing]) state.flushing = reaction;
      return;
    }
    this.react(state, reaction);
  }

  /** Output since the previous call. */
  readOutput(): SendOutputDelta {
    const page = this.env.output.window.since(this.deltaMark, this.env.config.maxReadBytes);
    this.deltaMark = page.next;
    return { delta: page.text, truncated: page.truncated };
  }

  /**
   * Cancels: queued input is never written; once an in-flight slice settled, a real SIGINT goes to the
   * foreground group (never `\x03`). A failed write sends no signal. The deadline stays armed and the
   * send keeps its slot until write and signal settled. Resolves once the signal was delivered.
   */
  cancel(): Promise<void> {
    if (this.settled) return this.cancellation.delivered;
    return this.cancellation.request(() => !this.settled);
  }

  /**
   * The session is closing: stop readiness work (no probe, no silence), so teardown killing the
   * foreground job cannot make the send settle as a prompt or as silence.
   */
  stopReadiness(): void {
    if (this.settled) return;
    this.state = { kind: 'stopping' };
    // The absolute deadline stays armed: if teardown fails, the send still settles within timeoutMs.
    this.clearProbe();
  }

  /** Ends only the wait: settles `running` (the command goes on); nothing is signalled. */
  endWait(): void {
    this.settle('running');
  }

  /** The shell exited or the session closed: settle `session_exit`. */
  sessionExited(): void {
    this.settle('session_exit');
  }

  /** Rejects the send with a transport failure. */
  fail(error: unknown): void {
    if (this.settled) return;
    this.state = { kind: 'settled', outcome: { kind: 'failed', error } };
    this.dispose();
    this.rejectDone(error);
  }

  /** The output evidence the stream feeds now: while writing and waiting, not before or after. */
  private collecting(): OutputEvidence | undefined {
    const state = this.state;
    return state.kind === 'writing' || state.kind === 'waiting' ? state.output : undefined;
  }

  /** The boundary of a send that writes nothing (or never wrote): no baseline, nothing typed ahead. */
  private noBoundary(): WriteBoundary {
    return { baseline: undefined, typedAhead: false, inputMayBePending: this.largeInput };
  }

  /** Input may still be pending in the kernel: a large write, typed ahead, or the rest of a cancelled one. */
  private inputMayBePending(waiting: Waiting): boolean {
    return waiting.boundary.inputMayBePending || this.cancellation.requested;
  }

  private beginWaiting(output: OutputEvidence, boundary: WriteBoundary): void {
    if (this.state.kind === 'stopping' || this.state.kind === 'settled') return;
    const now = performance.now();
    const waiting: Waiting = {
      kind: 'waiting',
      since: now,
      output,
      boundary,
      leftWait: new Set(),
      confirm: undefined,
      quietRun: { runs: '', since: now },
      schedule: { dueAt: Number.POSITIVE_INFINITY, step: 0, spinUntil: 0, spinChars: 0 },
      flushing: undefined,
    };
    this.state = waiting;
    if (this.watch?.testPartial()) {
      this.settle('pattern');
      return;
    }
    // Without output yet, the first exact probe waits `exactProbeAfterMs` (the input is still being
    // read); output brings it forward. A wait-only send asks at once: nothing was typed.
    this.scheduleProbe(waiting, output.hadOutput || this.waitOnly ? 0 : this.env.config.exactProbeAfterMs);
  }

  /**
   * A wait-only send's `waitFor` also looks at the lines completed since the previous result and at the
   * current partial line as a whole (a prompt the previous result already showed still matches).
   */
  private watchEarlierOutput(): void {
    if (this.watch === undefined) return;
    const earlier = this.env.output.window.since(this.resultMark, this.env.config.maxReadBytes).text;
    const lastEnd = earlier.lastIndexOf('\n');
    if (lastEnd !== -1) this.watch.textBlock(earlier.slice(0, lastEnd + 1));
    this.watch.text(this.env.output.window.mark().prefix);
  }

  /**
   * A chunk with output arrived while waiting: notes its timing in the probe schedule (the spin, the
   * backoff) and says what it asks for. Arms nothing and settles nothing.
   */
  private noteChunk(
    waiting: Waiting,
    previousOutputAt: number,
    processingStartedAt: number | undefined,
    chars: number,
  ): OutputReaction {
    if (this.watch?.testPartial()) return 'pattern';
    const { schedule, output } = waiting;
    schedule.step = 0;
    if (this.promptCandidate(waiting) !== undefined) {
      // A prompt settles the moment it is proven: no quiet period in between.
      schedule.spinUntil = output.lastOutputAt + SPIN_PROBE_MS;
      return 'judge';
    }
    // The pause before this chunk ends where its processing began: processing takes time of its own, and
    // a flood this thread cannot keep up with (each chunk takes over a millisecond through xterm) would
    // otherwise look like a burst after a pause on every chunk, each paying a /proc sample (2 600 in a
    // 1.1 s `\r` progress flood). A chunk that waited in the queue began right after the one before.
    const pause = (processingStartedAt ?? output.lastOutputAt) - previousOutputAt;
    if (pause >= QUIET_PROBE_MS) {
      // A burst after a pause (a prompt, an echo): its writer blocks microseconds later. Look on the
      // next turns of the event loop; the confirm (a drain) guards against output still on its way.
      schedule.spinUntil = output.lastOutputAt + SPIN_PROBE_MS;
      schedule.spinChars = chars;
      return 'burst';
    }
    schedule.spinChars += chars;
    if (schedule.spinChars > SPIN_MAX_CHARS) schedule.spinUntil = 0; // a flood, not a burst before a prompt
    // More of a burst that came after a pause (python's `42` and `>>> ` 0.3 ms behind the echo of
    // `6*7`): keep looking on every turn. Otherwise output is flowing: probe shortly after it stops.
    return output.lastOutputAt < schedule.spinUntil ? 'spin' : 'after-quiet';
  }

  /** Acts on what processed output asked for (outside any flush of this send's own). */
  private react(waiting: Waiting, reaction: OutputReaction): void {
    switch (reaction) {
      case 'pattern':
        this.settle('pattern');
        return;
      case 'judge':
        this.probe();
        return;
      case 'burst':
        if (this.probeImmediate.value === undefined) this.scheduleImmediateProbe(waiting);
        return;
      case 'spin':
        // A probe already armed (a confirm window, the reply grace) keeps its time.
        if (this.probeImmediate.value === undefined && this.probeTimer.value === undefined) {
          this.scheduleImmediateProbe(waiting);
        }
        return;
      case 'after-quiet':
        // A probe already due that soon stays as it is.
        if (waiting.schedule.dueAt > waiting.output.lastOutputAt + QUIET_PROBE_MS) {
          this.scheduleProbe(waiting, QUIET_PROBE_MS);
        }
        return;
      case 'none':
        return;
    }
  }

  /**
   * Processes output already read from the pty but not yet through the pipeline, before this send judges
   * anything: a prompt the shell printed before it blocked must be seen together with that block, and
   * what the pty produced before the wait bound belongs to this result (rule 6).
   *
   * Race: the pipeline processes those chunks synchronously inside `flush()` and feeds them to this very
   * send (the one in the slot) through its `OutputListener` calls, while the caller is in the middle of
   * a probe step or of the deadline. Reacting there — a prompt candidate runs a probe, a burst arms one,
   * `waitFor` settles — would run a second step inside the first, on state the first then reads as if
   * nothing had happened. So while `flushing` is set, `endOfChunk` only records the chunk (the evidence,
   * the spin) and keeps the most urgent reaction, which is returned here for the caller to apply once
   * the flush is over. Judging after the last chunk rather than after the first only sees more bytes.
   */
  private processPendingOutput(waiting: Waiting): OutputReaction {
    waiting.flushing = 'none';
    try {
      this.env.output.flush();
      return waiting.flushing;
    } finally {
      waiting.flushing = undefined;
    }
  }

  private onDeadline(): void {
    const state = this.state;
    if (state.kind === 'settled') return;
    if (state.kind === 'waiting') {
      // Rule 6: what the pty produced before the bound belongs to this result, and may prove it.
      const reaction = this.processPendingOutput(state);
      if (reaction === 'pattern' || reaction === 'judge') this.react(state, reaction);
      if (this.state !== state) return;
    } else if (state.kind !== 'stopping') {
      this.env.output.flush(); // draining or writing: nothing reacts to output before the wait
    }
    // `running` only where the foreground could be read: it was observed, and not waiting for input.
    const observed =
      this.env.exactTier && this.state.kind !== 'stopping' && this.env.probe.sample() !== undefined;
    this.settle(observed ? 'running' : 'timeout');
  }

  /**
   * The silence tier: whether `quietFor` ms without pty bytes settle `inferred_idle` now. With the exact
   * tier only where the probes cannot see the reader: a relay, or an unterminated last line while no
   * process of the foreground group ran (a prompt read some way the probes do not know).
   */
  private silenceSettles(waiting: Waiting, sample: ForegroundSample | undefined, quietFor: number): boolean {
    const config = this.env.config;
    const candidate = this.promptCandidate(waiting);
    // Rule 2: the shell may print its marker before the kernel shows it back in the foreground; a
    // candidate gets `handoffGraceMs` past the silence bound so the handoff can still win.
    const bound = config.idleSilenceMs + (candidate !== undefined ? config.handoffGraceMs : 0);
    if (quietFor < bound) return false;
    if (this.policy.silence === 'never') return false; // proof only
    if (this.policy.silence === 'after-output') return waiting.output.hadOutput; // zero output never publishes
    if (!this.env.exactTier) return true;
    if (sample === undefined) return false; // unreadable now: never positive evidence
    if (sample.relay) return true;
    const stillFor = performance.now() - Math.max(waiting.quietRun.since, waiting.output.lastByteAt);
    return this.env.output.window.endsInPartialLine() && stillFor >= bound;
  }

  private scheduleProbe(waiting: Waiting, delayMs: number): void {
    this.clearProbe();
    waiting.schedule.dueAt = performance.now() + delayMs;
    this.probeTimer.value = this.owned.timeout('send probe timer', delayMs, () => this.probe());
  }

  private scheduleImmediateProbe(waiting: Waiting): void {
    this.clearProbe();
    waiting.schedule.dueAt = performance.now();
    this.probeImmediate.value = this.owned.immediate('send probe', () => this.probe());
  }

  /** Cancels a pending probe, whichever way it was scheduled. */
  private clearProbe(): void {
    this.probeTimer.clear();
    this.probeImmediate.clear();
  }

  private nextBackoff(schedule: ProbeSchedule): number {
    const delay = PROBE_BACKOFF_MS[schedule.step] ?? this.env.config.pollIntervalMs;
    schedule.step++;
    return Math.min(delay, this.env.config.pollIntervalMs);
  }

  /** The tracker's prompt candidate, unless it is the prompt before typed-ahead input (see `WriteBoundary.typedAhead`). */
  private promptCandidate(waiting: Waiting): PromptCandidate | undefined {
    const candidate = this.tracker.candidate;
    if (candidate === undefined || !waiting.boundary.typedAhead) return candidate;
    return this.tracker.promptsSinceBoundary >= 2 ? candidate : undefined;
  }

  /** One probe: output read so far first, then `/proc`, then the verdict and what comes next. */
  private probe(): void {
    this.clearProbe();
    const waiting = this.state;
    if (waiting.kind !== 'waiting') return;
    waiting.schedule.dueAt = Number.POSITIVE_INFINITY;
    // Output already read from the pty is judged before /proc is: a prompt the shell printed before it
    // blocked must be seen together with that block.
    switch (this.processPendingOutput(waiting)) {
      case 'pattern':
        this.settle('pattern');
        return;
      case 'burst':
      case 'spin':
        this.scheduleImmediateProbe(waiting); // a burst: its writer blocks on one of the next turns
        return;
      case 'after-quiet':
        this.scheduleProbe(waiting, QUIET_PROBE_MS); // output is flowing: look once it pauses
        return;
      case 'judge': // a prompt candidate arrived: judge it now, with every byte read so far
      case 'none':
        break;
    }
    this.judge(waiting);
  }

  /** The probe's step on output fully processed: sample, verdict, settle or schedule the next look. */
  private judge(waiting: Waiting): void {
    const { output, schedule } = waiting;
    const now = performance.now();
    const quietFor = now - output.lastByteAt;
    const spinning = now < schedule.spinUntil;
    if (quietFor < QUIET_PROBE_MS && this.promptCandidate(waiting) === undefined && !spinning) {
      // Output is still flowing: nobody is blocked on input yet. Look again once it pauses.
      this.scheduleProbe(waiting, QUIET_PROBE_MS - quietFor);
      return;
    }
    const candidate = this.promptCandidate(waiting);
    const sample = this.env.probe.sample();
    const shell = this.env.probe.shell(candidate);
    noteLeftWait(sample, waiting.leftWait);
    waiting.quietRun = nextQuietRun(waiting.quietRun, sample);
    if (sample !== undefined) this.cancellation.followForeground(sample.tpgid, sample.shellPgrp);
    this.cancellation.clearResidue(() => shellHoldsPartialLine(sample, shell, candidate), output.seq);
    const verdict = judgeReadiness({
      candidate,
      shell,
      sample,
      baseline: waiting.boundary.baseline,
      leftWait: waiting.leftWait,
      shellEditorCounts: !this.cancellation.requested && (output.lineEndSeen || !this.submitsInput),
    });
    if (verdict.kind === 'prompt' || verdict.kind === 'stdin_wait') {
      if (this.proveWait(waiting, verdict, sample)) return;
    } else {
      waiting.confirm = undefined;
      if (verdict.kind === 'unwoken_wait' && this.policy.unwokenWait) {
        // Rule 4: a wait from before the write that the write did not wake (a canonical-mode `read`
        // given text without Enter) is proof once its counters stayed put for `handoffGraceMs` after
        // the echo arrived.
        const still = now - Math.max(waiting.since, output.lastByteAt);
        if (still >= this.env.config.handoffGraceMs) {
          this.settle('stdin_read', undefined, verdict.pid);
          return;
        }
      }
    }
    // An unwoken wait becomes proof within `handoffGraceMs`: silence does not pre-empt it.
    if (verdict.kind !== 'unwoken_wait' && this.silenceSettles(waiting, sample, quietFor)) {
      this.settle('inferred_idle');
      return;
    }
    if (spinning) {
      // The shell printed its prompt (or a program its output) and blocks on the terminal moments
      // later: look again on the next turn of the event loop rather than after a timer's millisecond.
      this.scheduleImmediateProbe(waiting);
      return;
    }
    this.scheduleProbe(waiting, this.nextBackoff(schedule));
  }

  /**
   * A prompt or stdin-wait verdict: settles at once when nothing can still be on its way, else starts or
   * completes its confirm window. Returns true when it settled or scheduled the next probe.
   */
  private proveWait(
    waiting: Waiting,
    verdict: Extract<ReadinessVerdict, { kind: 'prompt' | 'stdin_wait' }>,
    sample: ForegroundSample | undefined,
  ): boolean {
    if (!(verdict.kind === 'prompt' ? this.policy.prompt : this.policy.stdinWait)) return false;
    // A prompt settles at once; a stdin wait (and a prompt after a large write) is confirmed after a
    // short quiet: same thread, same group, still blocked, no thread of its process ran, no new output.
    const sinceReply =
      verdict.kind === 'stdin_wait' ? performance.now() - this.env.terminal.lastReplyAt() : Infinity;
    if (sinceReply < REPLY_GRACE_MS) {
      // Maybe blocked only until our own reply arrives: look again once it has had time to.
      waiting.confirm = undefined;
      this.scheduleProbe(waiting, REPLY_GRACE_MS - sinceReply);
      return true;
    }
    // A prompt's reader is the shell, by its host pid (the marker carries `$$`, a namespace pid when
    // the shell is confined; the verdict matched it against the shell identified at startup).
    const readerPid =
      verdict.kind === 'prompt' ? (this.env.probe.shell()?.pid ?? verdict.candidate.shellPid) : verdict.pid;
    const processRuns = processRunsOf(sample, readerPid);
    const inputMayBePending = this.inputMayBePending(waiting);
    const needsConfirm = verdict.kind === 'stdin_wait' || inputMayBePending;
    const pending = waiting.confirm;
    const outputSeq = waiting.output.seq;
    const confirmed =
      pending !== undefined &&
      pending.kind === verdict.kind &&
      pending.tid === verdict.tid &&
      pending.tpgid === verdict.tpgid &&
      pending.switches === verdict.switches &&
      pending.outputSeq === outputSeq &&
      pending.processRuns === processRuns;
    // A stdin wait's reader may have written output the kernel has not handed over yet (it was seen
    // blocked, so it wrote it before this sample). Draining the pty's output now makes the kernel hand
    // it over first: `empty` proves all of it read and processed (`probe` flushed before sampling, and
    // nothing is delivered during this turn), `read` means output is still arriving.
    // A prompt is drained as well, before it settles at once: its marker and PS1 are the last thing the
    // shell printed before it blocked only if nothing followed. The shell may have gone on to read part
    // of the input (the kernel can hand a line over without its `\r`), echo it and block for the rest;
    // that echo, still in the kernel, voids the prompt once it is read; settling on it would answer
    // with the exit code of the command before.
    const drains = verdict.kind === 'stdin_wait' ? !inputMayBePending : !needsConfirm;
    const drained: DrainOutcome = drains ? this.env.output.drain() : 'unavailable';
    if (!needsConfirm && drained === 'read') {
      this.scheduleImmediateProbe(waiting); // the output it moved is processed first, then judged again
      return true;
    }
    if (!needsConfirm || (confirmed && drained !== 'read')) {
      this.settle('stdin_read', verdict.kind === 'prompt' ? verdict.candidate : undefined, readerPid);
      return true;
    }
    waiting.confirm = {
      kind: verdict.kind,
      tid: verdict.tid,
      switches: verdict.switches,
      tpgid: verdict.tpgid,
      outputSeq,
      processRuns,
    };
    if (drained === 'unavailable') {
      this.scheduleProbe(waiting, inputMayBePending ? PENDING_INPUT_CONFIRM_MS : STDIN_CONFIRM_MS);
    } else {
      // Confirm on the next turn, with the same checks and another drain, instead of after a quiet
      // window: the drain already proved what the window waited for. Output the drain moved (`read`)
      // is processed before that probe and changes the output count, so the confirm starts over.
      this.scheduleImmediateProbe(waiting);
    }
    return true;
  }

  private settle(reason: WaitReason, candidate?: PromptCandidate, readerPid?: number): void {
    if (this.settled) return;
    const result = this.buildResult(reason, candidate, readerPid);
    this.state = { kind: 'settled', outcome: { kind: 'result', result } };
    this.dispose();
    this.resolveDone(result);
  }

  private buildResult(
    reason: WaitReason,
    candidate: PromptCandidate | undefined,
    readerPid: number | undefined,
  ): TerminalSendResult {
    // Continuity: everything since the previous result (what arrived between two sends leads), bounded
    // with the tail kept; the next result starts where this one ends.
    const output = this.env.output.window.since(this.resultMark, this.env.config.maxReadBytes);
    if (!this.policy.startup) this.env.output.advanceResultCursor(output.next);
    let viewport = output.text;
    const prompt = this.tracker.prompt;
    if (candidate !== undefined && viewport.endsWith(prompt)) {
      // The prompt itself is not output of the command; the wait reason already says we are at it.
      viewport = viewport.slice(0, viewport.length - prompt.length).replace(/\n$/, '');
    }
    const result: TerminalSendResult = {
      viewport,
      waitReason: reason,
      sessionStatus: this.env.probe.status(),
      truncated: output.truncated,
      ...(output.omittedLines > 0 ? { omittedLines: output.omittedLines } : {}),
      elapsedMs: Math.round((performance.now() - this.startedAt) * 100) / 100,
    };
    if (candidate !== undefined && !candidate.reported) {
      // The marker's status belongs to the first result after it; a later wait-only send at the same
      // prompt does not repeat it.
      result.exitCode = candidate.exitCode;
      result.cwd = candidate.cwd;
      this.tracker.markReported();
    }
    if (this.options.cappedWait !== undefined) result.cappedWait = { ...this.options.cappedWait };
    if (reason !== 'session_exit') {
      const foreground = this.env.probe.foreground(readerPid);
      if (foreground !== undefined) result.foreground = foreground;
    }
    return result;
  }
}
