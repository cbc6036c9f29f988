/**
 * One send's whole lifecycle (SPEC §4.2, §4.4): the write, the readiness evidence gathered after it, the
 * wait bound, the silence tier, `waitFor`, the probe timer, cancellation and the output slice. The
 * session holds at most one. Its state is a closed union, and every timer it arms is registered with
 * its store, which is disposed on settle: a settled send arms nothing more.
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
import type { EngineConfig } from '../../shared/config.js';
import { TerminalError } from '../../shared/errors.js';
import { DisposableOwner, DisposableSlot } from '../../shared/lifecycle.js';
import type {
  CappedWait,
  ForegroundProcess,
  SendOutputDelta,
  SessionStatus,
  TerminalSendResult,
  WaitReason,
} from '../../shared/types.js';
import type { OutputMark, OutputWindow } from '../output/output-window.js';
import type { ForegroundSample } from '../proc/stdin-wait.js';
import { SLICE_BYTES, type WriteOutcome } from '../pty/pty-input-writer.js';
import type { DrainOutcome } from '../pty/pty-output-drain.js';
import type { PromptCandidate, PromptTracker } from './prompt-tracker.js';
import {
  baselineOf,
  judgeReadiness,
  noteLeftWait,
  type ReadinessVerdict,
  type ShellIdentity,
  shellHoldsPartialLine,
  type WaitBaseline,
} from './readiness.js';
import { CALLER_SEND, type ReadinessPolicy } from './readiness-policy.js';
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

/** How long a half-typed line must sit at the prompt, output-free, before a cancel clears it. */
const RESIDUE_CONFIRM_MS = 20;

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

/**
 * What a send needs from its session: three narrow ports and two settings. Built once per session;
 * every member reads the session's state when called.
 */
export interface SendContext {
  readonly config: EngineConfig;
  /** Whether `/proc` wait probes work here (Linux, a known syscall table); without them silence decides. */
  readonly exactTier: boolean;
  /** Where the send's input and signals go. */
  readonly terminal: TerminalPort;
  /** What the kernel says about the session's processes. */
  readonly probe: ProbePort;
  /** The session's output as the pipeline processed it. */
  readonly output: OutputPort;
}

/** The terminal, for writing: replies first, then the caller's input; signals to its foreground. */
export interface TerminalPort {
  /** Resolves once terminal replies queued so far are written (replies go before caller input). */
  drainReplies(): Promise<void>;
  /** Writes caller input; stops before the next slice once `isCancelled()` is true. */
  writeInput(data: string, isCancelled: () => boolean): Promise<WriteOutcome>;
  /** Sends SIGINT to the foreground process group; returns the group. Throws on failure. */
  interrupt(): number;
  /** When the terminal replier last wrote a reply into the pty (`performance.now()` ms; -Infinity: never). */
  lastReplyAt(): number;
}

/** `/proc`: the foreground, the shell, the session's status. */
export interface ProbePort {
  /** Samples the foreground process group; undefined when it cannot be read. */
  sample(): ForegroundSample | undefined;
  /** The session's shell, when known. During startup it may be resolved from a prompt candidate. */
  shell(candidate?: PromptCandidate): ShellIdentity | undefined;
  /** What holds the terminal: `readerPid` when given and alive, else the foreground group's leader. */
  foreground(readerPid?: number): ForegroundProcess | undefined;
  /** Current shell status. */
  status(): SessionStatus;
}

/** The output read so far, and how to make sure all of it was read. */
export interface OutputPort {
  /** The session's prompt evidence (fed by the pipeline all the time; reset at a write boundary). */
  readonly prompt: PromptTracker;
  /** The session's output, read from marks (the send's viewport and deltas). */
  readonly window: OutputWindow;
  /** Where the previous result's output ended: this send's result starts there (continuity, SPEC §4.2). */
  resultCursor(): OutputMark;
  /** Moves the continuity cursor to where this send's result ended. */
  advanceResultCursor(mark: OutputMark): void;
  /** Processes output already read from the pty but not yet through the pipeline. */
  flush(): void;
  /**
   * Reads what the kernel still holds of the pty's output into the pipeline (processed on a later turn):
   * `empty` proves that every byte the pty produced before this call has been read (pty-output-drain.ts).
   */
  drain(): DrainOutcome;
}

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

/** States of a send; each carries what belongs to it. */
type SendState =
  /** Terminal replies are drained before the caller's input. */
  | { kind: 'draining' }
  /** The input is being written. */
  | { kind: 'writing' }
  /** Gathering evidence; `since` is when the write finished (or the send began, without input). */
  | { kind: 'waiting'; since: number }
  | { kind: 'settled' };

/** A readiness verdict waiting out its confirm window. */
interface PendingConfirm {
  kind: 'prompt' | 'stdin_wait';
  tid: number;
  switches: number | undefined;
  tpgid: number;
  outputSeq: number;
  /** Run counters of the reader's process when first seen: none of its threads may run meanwhile. */
  processRuns: string;
}

/** Whether the foreground group ran while the pty was quiet (the silence tier's "nothing ran" test). */
interface QuietRun {
  /** Run counters of every foreground thread, as last seen. */
  runs: string;
  /** When they last changed (or output arrived). */
  since: number;
}

/**
 * One send. Feed it the sanitized stream (`text`, `newline`, `textBlock`, `rewriteLine`, `markerArrived`)
 * and call `endOfChunk()` after each processed pty chunk, with or without text in it.
 */
export class SendOperation extends DisposableOwner {
  /** Settles exactly once with the send's result (or rejects on a write/signal transport failure). */
  readonly done: Promise<TerminalSendResult>;
  /** Resolves once neither a write nor a cancel signal of this send can still happen (slot release). */
  readonly quiesced: Promise<void>;

  private state: SendState = { kind: 'draining' };
  private readonly startedAt = performance.now();
  private readonly tracker: PromptTracker;
  /** What may settle this send. */
  private readonly policy: ReadinessPolicy;
  /** A caller's send without input: no write boundary, any wait already there is readiness. */
  private readonly waitOnly: boolean;
  /** This send presses Enter after its input (see {@link lineEndSeen}). */
  private readonly submitsInput: boolean;
  /** Where this send's result starts (the previous result's end). */
  private readonly resultMark: OutputMark;
  private deltaMark: OutputMark;
  private baseline: WaitBaseline | undefined;
  private readonly leftWait = new Set<number>();
  private readonly watch: PatternWatch | undefined;
  private hadOutput = false;
  /**
   * A line end arrived since the write boundary. The shell waiting in its line editor proves a wait
   * (a continuation prompt, `read -e`) only after the echo of this send's Enter: the kernel may hand the
   * typed text to the shell before its final `\r`, and the shell then waits in its line editor for the
   * rest — with nothing run yet.
   */
  private lineEndSeen = false;
  private outputSeq = 0;
  private cancelRequested = false;
  private interruptsSent = 0;
  private outputPending = false;
  private residueSeen: { outputSeq: number; at: number } | undefined;
  /**
   * Last sanitized output (text, line ends, our marker). None yet counts as a pause: the first output of
   * a send (the echo of its input, a prompt) is a burst whose writer may block moments later, so it is
   * probed on the next turns rather than after QUIET_PROBE_MS (which cost `read x` a millisecond).
   */
  private lastOutputAt = Number.NEGATIVE_INFINITY;
  /** Last pty bytes of any kind: silence is measured on these (rule 5), not on sanitized text. */
  private lastByteAt = 0;
  private quietRun: QuietRun = { runs: '', since: 0 };
  private probeDueAt = Number.POSITIVE_INFINITY;
  /** The next probe on a timer, or on the next turn of the event loop: at most one is armed. */
  private readonly probeTimer = this.owned.add(new DisposableSlot());
  private readonly probeImmediate = this.owned.add(new DisposableSlot());
  /** Until when probes may run on consecutive event-loop turns (see SPIN_PROBE_MS). */
  private spinUntil = 0;
  /** Output characters processed since the current spin began (see SPIN_MAX_CHARS). */
  private spinChars = 0;
  private readinessStopped = false;
  private inputMayBePending: boolean;
  /**
   * Nothing read the terminal at the write boundary: the shell prints a prompt for what ran before
   * (a job that ended, a loop a SIGINT stopped, with its status) before it reads this input, so the
   * first new prompt after the boundary is never this input's. Only a later one is. (Should the shell
   * have read the input at once after all, its prompt is skipped and its line editor's wait proves
   * readiness, without an exit code: slower to report, never early.)
   */
  private typedAhead = false;
  private confirm: PendingConfirm | undefined;
  private probeStep = 0;
  private writeDone: Promise<WriteOutcome | 'failed'> = Promise.resolve('written');
  private cancelDone: Promise<void> = Promise.resolve();
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
    this.inputMayBePending =
      Buffer.byteLength(options.text) + (options.submit ? 1 : 0) > LARGE_WRITE_BYTES ||
      /[\r\n]/.test(options.text.replace(/[\r\n]+$/, ''));
    this.resultMark = this.deltaMark = env.output.resultCursor();
    if (options.waitFor !== undefined) {
      // A match found in a later turn (lines tested over several turns, the deferred partial line)
      // settles the send when it is waiting; one found earlier is seen when the wait begins.
      this.watch = this.owned.add(
        new PatternWatch(options.waitFor, options.text, () => {
          if (this.state.kind === 'waiting' && !this.readinessStopped) this.settle('pattern');
        }),
      );
    }
    this.lastByteAt = this.startedAt;
    this.done = new Promise<TerminalSendResult>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    // A transport failure rejects `done`; the session observes it, so it is never unhandled.
    this.done.catch(() => undefined);
    const deadlineAt = options.deadlineAt ?? this.startedAt + (options.timeoutMs ?? env.config.timeoutMs);
    this.owned.timeout('send deadline', Math.max(0, deadlineAt - performance.now()), () => this.onDeadline());
    this.quiesced = this.done.then(
      () => this.settledSideEffects(),
      () => this.settledSideEffects(),
    );
  }

  /** True once the send has a result. */
  get settled(): boolean {
    return this.state.kind === 'settled';
  }

  /** Begins the send: drains terminal replies, marks the write boundary, writes. */
  async start(): Promise<void> {
    if (this.policy.startup && this.options.text === '' && !this.options.submit) {
      // A startup phase without input: collect from the very first byte the shell prints.
      this.beginWaiting();
      return;
    }
    if (this.waitOnly) {
      // No input, no write boundary: the output since the previous result and a prompt that arrived
      // since are this send's evidence, and a wait already there is readiness.
      this.watchEarlierOutput();
      this.beginWaiting();
      return;
    }
    try {
      await this.env.terminal.drainReplies();
    } catch {
      // Replies failing to drain means the pty is gone; exit handling settles the send.
    }
    if (this.state.kind !== 'draining') return;
    if (this.cancelRequested) {
      // Cancelled before a byte was written: the queued input is never written (SPEC §4.4).
      this.beginWaiting();
      return;
    }
    // Write boundary (rule 5): evidence gathered before this point is discarded — including output read
    // from the pty but not yet through the pipeline (a prompt printed before the write).
    this.env.output.flush();
    // The stream ends in the shell's own prompt: its line editor reads this input, whatever the sample
    // below shows (a shell stopped or woken by a signal at its prompt is not seen waiting).
    const atShellPrompt = this.tracker.candidate !== undefined;
    this.tracker.reset();
    this.hadOutput = false;
    this.lineEndSeen = false;
    const atBoundary = this.env.probe.sample();
    this.baseline = baselineOf(atBoundary);
    const shell = this.env.probe.shell();
    // Typed ahead: nothing in the foreground is reading the terminal now — a job owns it, or the shell
    // does but is still on its way back to its prompt (a job just ended: after a SIGINT, the shell
    // takes the terminal back before it prints its prompt) — so the input is read only later, and the
    // prompt that comes first (the ended job's, with its status) is not this input's. Not when a
    // process is blocked reading the terminal (the shell at its prompt, a REPL at its own): it reads
    // the input now, and a line of it arrives in one piece. (Without that exception, every line sent
    // to python3 or node paid PENDING_INPUT_CONFIRM_MS.)
    const readsNow = atBoundary?.members.some((m) => m.verdict === 'waiting' && m.outside !== true);
    if (shell === undefined || readsNow !== true) {
      this.inputMayBePending = true;
      // Only when the foreground was read, the stream does not end at the shell's prompt, and no
      // process waits on the terminal, not even one outside the foreground group that opened it itself
      // (a pinentry reads the input at once). An unreadable sample proves nothing either way: the
      // confirm window alone guards then.
      this.typedAhead =
        shell !== undefined &&
        atBoundary !== undefined &&
        !atShellPrompt &&
        !atBoundary.members.some((m) => m.verdict === 'waiting');
    }
    const data = this.options.submit ? `${this.options.text}\r` : this.options.text;
    if (data.length === 0) {
      this.beginWaiting();
      return;
    }
    this.state = { kind: 'writing' };
    this.writeDone = this.env.terminal
      .writeInput(data, () => this.cancelRequested || this.settled)
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
    const outcome = await this.writeDone;
    if (outcome !== 'failed' && this.state.kind === 'writing') this.beginWaiting();
  }

  /** Sanitized text of the current line. */
  text(s: string): void {
    if (!this.collecting()) return;
    this.watch?.text(s);
    this.outputPending = true;
  }

  /** End of line. */
  newline(): void {
    if (!this.collecting()) return;
    this.lineEndSeen = true;
    this.watch?.newline();
    this.outputPending = true;
  }

  /** Several lines at once. */
  textBlock(block: string): void {
    if (!this.collecting()) return;
    if (!this.lineEndSeen && block.includes('\n')) this.lineEndSeen = true;
    this.watch?.textBlock(block);
    this.outputPending = true;
  }

  /** Carriage-return rewrite of the current line. */
  rewriteLine(): void {
    if (!this.collecting()) return;
    this.watch?.rewriteLine();
    this.outputPending = true;
  }

  /** One of our prompt markers arrived (the session's tracker has it). */
  markerArrived(): void {
    if (!this.collecting()) return;
    this.outputPending = true;
  }

  /**
   * The end of one pty data chunk (with or without text in it). Readiness bookkeeping runs here once per
   * chunk, never per line: a flood delivers thousands of lines per chunk, and re-arming timers for each
   * would dominate its cost. `processingStartedAt` is when the session began processing the chunk
   * (default: now), `chars` its length.
   */
  endOfChunk(processingStartedAt?: number, chars = 0): void {
    this.lastByteAt = performance.now();
    if (!this.outputPending) return;
    this.outputPending = false;
    this.hadOutput = true;
    this.outputSeq++;
    const previousOutputAt = this.lastOutputAt;
    this.lastOutputAt = this.lastByteAt;
    if (this.state.kind !== 'waiting') return;
    if (this.watch?.testPartial()) {
      this.settle('pattern');
      return;
    }
    this.probeStep = 0;
    if (this.promptCandidate() !== undefined) {
      this.spinUntil = this.lastOutputAt + SPIN_PROBE_MS;
      this.probe(); // a prompt settles the moment it is proven: no quiet period in between
      return;
    }
    // The pause before this chunk ends where its processing began: processing takes time of its own, and
    // a flood this thread cannot keep up with (each chunk takes over a millisecond through xterm) would
    // otherwise look like a burst after a pause on every chunk, each paying a /proc sample (2 600 in a
    // 1.1 s `\r` progress flood). A chunk that waited in the queue began right after the one before.
    const pause = (processingStartedAt ?? this.lastOutputAt) - previousOutputAt;
    if (pause >= QUIET_PROBE_MS) {
      // A burst after a pause (a prompt, an echo): its writer blocks microseconds later. Look on the
      // next turns of the event loop; the confirm (a drain) guards against output still on its way.
      this.spinUntil = this.lastOutputAt + SPIN_PROBE_MS;
      this.spinChars = chars;
      if (this.probeImmediate.value === undefined) this.scheduleImmediateProbe();
      return;
    }
    this.spinChars += chars;
    if (this.spinChars > SPIN_MAX_CHARS) this.spinUntil = 0; // a flood, not a burst before a prompt
    if (this.lastOutputAt < this.spinUntil) {
      // More of a burst that came after a pause (python's `42` and `>>> ` 0.3 ms behind the echo of
      // `6*7`): keep looking on every turn. This chunk may have been flushed by the spinning probe itself,
      // which cleared its own schedule first and looks again after its flush.
      if (this.probeImmediate.value === undefined && this.probeTimer.value === undefined) {
        this.scheduleImmediateProbe();
      }
      return;
    }
    // Output is flowing: probe shortly after it stops; a probe already due that soon stays as it is.
    if (this.probeDueAt > this.lastOutputAt + QUIET_PROBE_MS) this.scheduleProbe(QUIET_PROBE_MS);
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
    if (this.settled || this.cancelRequested) return this.cancelDone;
    this.cancelRequested = true;
    this.inputMayBePending = true; // part of the write may still be in the kernel's buffers
    this.cancelDone = (async () => {
      const outcome = await this.writeDone;
      if (outcome === 'failed' || this.settled) return;
      try {
        this.env.terminal.interrupt();
        this.interruptsSent++;
      } catch (error) {
        this.fail(error);
      }
    })();
    return this.cancelDone;
  }

  /**
   * The session is closing: stop readiness work (no probe, no silence), so teardown killing the
   * foreground job cannot make the send settle as a prompt or as silence.
   */
  stopReadiness(): void {
    if (this.settled) return;
    this.readinessStopped = true;
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
    this.state = { kind: 'settled' };
    this.dispose();
    this.rejectDone(error);
  }

  private collecting(): boolean {
    return (this.state.kind === 'writing' || this.state.kind === 'waiting') && !this.readinessStopped;
  }

  private beginWaiting(): void {
    const now = performance.now();
    this.state = { kind: 'waiting', since: now };
    if (this.readinessStopped) return;
    if (this.watch?.testPartial()) {
      this.settle('pattern');
      return;
    }
    this.quietRun = { runs: '', since: now };
    this.probeStep = 0;
    // Without output yet, the first exact probe waits `exactProbeAfterMs` (the input is still being
    // read); output brings it forward. A wait-only send asks at once: nothing was typed.
    this.scheduleProbe(this.hadOutput || this.waitOnly ? 0 : this.env.config.exactProbeAfterMs);
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

  private onDeadline(): void {
    if (this.settled) return;
    // Rule 6: what the pty produced before the bound belongs to this result.
    if (!this.readinessStopped) this.env.output.flush();
    if (this.settled) return;
    // `running` only where the foreground could be read: it was observed, and not waiting for input.
    const observed = this.env.exactTier && !this.readinessStopped && this.env.probe.sample() !== undefined;
    this.settle(observed ? 'running' : 'timeout');
  }

  /**
   * The silence tier: whether `quietFor` ms without pty bytes settle `inferred_idle` now. With the exact
   * tier only where the probes cannot see the reader: a relay, or an unterminated last line while no
   * process of the foreground group ran (a prompt read some way the probes do not know).
   */
  private silenceSettles(sample: ForegroundSample | undefined, quietFor: number): boolean {
    const config = this.env.config;
    const candidate = this.promptCandidate();
    // Rule 2: the shell may print its marker before the kernel shows it back in the foreground; a
    // candidate gets `handoffGraceMs` past the silence bound so the handoff can still win.
    const bound = config.idleSilenceMs + (candidate !== undefined ? config.handoffGraceMs : 0);
    if (quietFor < bound) return false;
    if (this.policy.silence === 'never') return false; // proof only
    if (this.policy.silence === 'after-output') return this.hadOutput; // zero output never publishes
    if (!this.env.exactTier) return true;
    if (sample === undefined) return false; // unreadable now: never positive evidence
    if (sample.relay) return true;
    const stillFor = performance.now() - Math.max(this.quietRun.since, this.lastByteAt);
    return this.env.output.window.endsInPartialLine() && stillFor >= bound;
  }

  /** Notes whether any foreground thread ran since the previous probe (see `silenceSettles`). */
  private noteRuns(sample: ForegroundSample | undefined): void {
    if (sample === undefined) return;
    let runs = `${sample.tpgid}`;
    for (const member of sample.members) {
      if (member.outside !== true) runs += ` ${member.tid}:${member.switches}`;
    }
    if (runs !== this.quietRun.runs) this.quietRun = { runs, since: performance.now() };
  }

  private scheduleProbe(delayMs: number): void {
    this.clearProbe();
    this.probeDueAt = performance.now() + delayMs;
    this.probeTimer.value = this.owned.timeout('send probe timer', delayMs, () => this.probe());
  }

  private nextBackoff(): number {
    const delay = PROBE_BACKOFF_MS[this.probeStep] ?? this.env.config.pollIntervalMs;
    this.probeStep++;
    return Math.min(delay, this.env.config.pollIntervalMs);
  }

  /** The tracker's prompt candidate, unless it is the prompt before typed-ahead input (see `typedAhead`). */
  private promptCandidate(): PromptCandidate | undefined {
    const candidate = this.tracker.candidate;
    if (candidate === undefined || !this.typedAhead) return candidate;
    return this.tracker.promptsSinceBoundary >= 2 ? candidate : undefined;
  }

  private probe(): void {
    this.clearProbe();
    this.probeDueAt = Number.POSITIVE_INFINITY;
    if (this.state.kind !== 'waiting' || this.readinessStopped) return;
    // Output already read from the pty is judged before /proc is: a prompt the shell printed before it
    // blocked must be seen together with that block. (Flushing may settle this send re-entrantly.)
    this.env.output.flush();
    if (
      this.state.kind !== 'waiting' ||
      this.probeTimer.value !== undefined ||
      this.probeImmediate.value !== undefined
    )
      return;
    const waitingSince = this.state.since;
    const now = performance.now();
    const quietFor = now - this.lastByteAt;
    const spinning = now < this.spinUntil;
    if (quietFor < QUIET_PROBE_MS && this.promptCandidate() === undefined && !spinning) {
      // Output is still flowing: nobody is blocked on input yet. Look again once it pauses.
      this.scheduleProbe(QUIET_PROBE_MS - quietFor);
      return;
    }
    const candidate = this.promptCandidate();
    const sample = this.env.probe.sample();
    const shell = this.env.probe.shell(candidate);
    noteLeftWait(sample, this.leftWait);
    this.noteRuns(sample);
    this.clearResidue(sample, shell, candidate);
    const verdict = judgeReadiness({
      candidate,
      shell,
      sample,
      baseline: this.baseline,
      leftWait: this.leftWait,
      shellEditorCounts:
        this.interruptsSent === 0 && !this.cancelRequested && (this.lineEndSeen || !this.submitsInput),
    });
    if (verdict.kind === 'prompt' || verdict.kind === 'stdin_wait') {
      if (this.proveWait(verdict, sample)) return;
    } else {
      this.confirm = undefined;
      if (verdict.kind === 'unwoken_wait' && this.policy.unwokenWait) {
        // Rule 4: a wait from before the write that the write did not wake (a canonical-mode `read`
        // given text without Enter) is proof once its counters stayed put for `handoffGraceMs` after
        // the echo arrived.
        const still = now - Math.max(waitingSince, this.lastByteAt);
        if (still >= this.env.config.handoffGraceMs) {
          this.settle('stdin_read', undefined, verdict.pid);
          return;
        }
      }
    }
    // An unwoken wait becomes proof within `handoffGraceMs`: silence does not pre-empt it.
    if (verdict.kind !== 'unwoken_wait' && this.silenceSettles(sample, quietFor)) {
      this.settle('inferred_idle');
      return;
    }
    if (spinning) {
      // The shell printed its prompt (or a program its output) and blocks on the terminal moments
      // later: look again on the next turn of the event loop rather than after a timer's millisecond.
      this.scheduleImmediateProbe();
      return;
    }
    this.scheduleProbe(this.nextBackoff());
  }

  /**
   * A prompt or stdin-wait verdict: settles at once when nothing can still be on its way, else starts or
   * completes its confirm window. Returns true when it settled or scheduled the next probe.
   */
  private proveWait(
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
      this.confirm = undefined;
      this.scheduleProbe(REPLY_GRACE_MS - sinceReply);
      return true;
    }
    // A prompt's reader is the shell, by its host pid (the marker carries `$$`, a namespace pid when
    // the shell is confined; the verdict matched it against the shell identified at startup).
    const readerPid =
      verdict.kind === 'prompt' ? (this.env.probe.shell()?.pid ?? verdict.candidate.shellPid) : verdict.pid;
    const processRuns = processRunsOf(sample, readerPid);
    const needsConfirm = verdict.kind === 'stdin_wait' || this.inputMayBePending;
    const pending = this.confirm;
    const confirmed =
      pending !== undefined &&
      pending.kind === verdict.kind &&
      pending.tid === verdict.tid &&
      pending.tpgid === verdict.tpgid &&
      pending.switches === verdict.switches &&
      pending.outputSeq === this.outputSeq &&
      pending.processRuns === processRuns;
    // A stdin wait's reader may have written output the kernel has not handed over yet (it was seen
    // blocked, so it wrote it before this sample). Draining the pty's output now makes the kernel hand
    // it over first: `empty` proves all of it read and processed (`probe` flushed before sampling, and
    // nothing is delivered during this turn), `read` means output is still arriving. A prompt needs no
    // drain: its marker and PS1 are the last thing the shell prints before it blocks.
    // A prompt is drained as well, before it settles at once: its marker and PS1 are the last thing the
    // shell printed before it blocked only if nothing followed. The shell may have gone on to read part
    // of the input (the kernel can hand a line over without its `\r`), echo it and block for the rest;
    // that echo, still in the kernel, voids the prompt once it is read; settling on it would answer
    // with the exit code of the command before.
    const drains = verdict.kind === 'stdin_wait' ? !this.inputMayBePending : !needsConfirm;
    const drained: DrainOutcome = drains ? this.env.output.drain() : 'unavailable';
    if (!needsConfirm && drained === 'read') {
      this.scheduleImmediateProbe(); // the output it moved is processed first, then judged again
      return true;
    }
    if (!needsConfirm || (confirmed && drained !== 'read')) {
      this.settle('stdin_read', verdict.kind === 'prompt' ? verdict.candidate : undefined, readerPid);
      return true;
    }
    this.confirm = {
      kind: verdict.kind,
      tid: verdict.tid,
      switches: verdict.switches,
      tpgid: verdict.tpgid,
      outputSeq: this.outputSeq,
      processRuns,
    };
    if (drained === 'unavailable') {
      this.scheduleProbe(this.inputMayBePending ? PENDING_INPUT_CONFIRM_MS : STDIN_CONFIRM_MS);
    } else {
      // Confirm on the next turn, with the same checks and another drain, instead of after a quiet
      // window: the drain already proved what the window waited for. Output the drain moved (`read`)
      // is processed before that probe and changes `outputSeq`, so the confirm starts over.
      this.scheduleImmediateProbe();
    }
    return true;
  }

  /**
   * A cancelled write can leave part of a line typed at the prompt (its slice was already in the kernel).
   * One more SIGINT makes the line editor discard it and print a fresh prompt, so the residue never joins
   * the next send's command. Only once the state held, without any output, for RESIDUE_CONFIRM_MS: a
   * prompt still unread in the pty buffer would otherwise look like residue.
   */
  private clearResidue(
    sample: ForegroundSample | undefined,
    shell: ShellIdentity | undefined,
    candidate: PromptCandidate | undefined,
  ): void {
    if (this.interruptsSent !== 1 || !shellHoldsPartialLine(sample, shell, candidate)) {
      this.residueSeen = undefined;
      return;
    }
    const seen = this.residueSeen;
    const now = performance.now();
    if (seen === undefined || seen.outputSeq !== this.outputSeq) {
      this.residueSeen = { outputSeq: this.outputSeq, at: now };
    } else if (now - seen.at >= RESIDUE_CONFIRM_MS) {
      try {
        this.env.terminal.interrupt();
      } catch {
        // The shell vanished; exit handling settles the send.
      }
      this.interruptsSent++;
    }
  }

  private scheduleImmediateProbe(): void {
    this.clearProbe();
    this.probeDueAt = performance.now();
    this.probeImmediate.value = this.owned.immediate('send probe', () => this.probe());
  }

  /** Cancels a pending probe, whichever way it was scheduled. */
  private clearProbe(): void {
    this.probeTimer.clear();
    this.probeImmediate.clear();
  }

  private settle(reason: WaitReason, candidate?: PromptCandidate, readerPid?: number): void {
    if (this.settled) return;
    const result = this.buildResult(reason, candidate, readerPid);
    this.state = { kind: 'settled' };
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

  private async settledSideEffects(): Promise<void> {
    // The slot is held until no byte and no signal of this send can still reach the terminal.
    await this.writeDone;
    await this.cancelDone;
  }
}

/** Run counters of every thread of `pid` in `sample`, as one comparable string. */
function processRunsOf(sample: ForegroundSample | undefined, pid: number): string {
  let runs = '';
  for (const member of sample?.members ?? []) {
    if (member.pid === pid) runs += ` ${member.tid}:${member.switches}`;
  }
  return runs;
}
