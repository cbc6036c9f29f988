/**
 * One send's whole lifecycle (SPEC §4.2, §4.4): the write, the readiness evidence gathered after it, the
 * deadline, the silence bound, the probe timer, cancellation and the output slice. The session holds at
 * most one. Its state is a closed union, and every timer it arms is owned here and cleared on settle.
 */
import type { EngineConfig } from '../shared/config.js';
import { TerminalError } from '../shared/errors.js';
import type {
  ForegroundProcess,
  SendOutputDelta,
  SessionStatus,
  TerminalSendResult,
  WaitReason,
} from '../shared/types.js';
import type { OutputMark, OutputWindow } from './output-window.js';
import { CONTROLLED_PS1 } from './prompt-marker.js';
import { type PromptCandidate, PromptTracker } from './prompt-tracker.js';
import type { WriteOutcome } from './pty-input-writer.js';
import {
  baselineOf,
  judgeReadiness,
  noteLeftWait,
  type ShellIdentity,
  shellHoldsPartialLine,
  type WaitBaseline,
} from './readiness.js';
import type { ForegroundSample } from './stdin-wait.js';
import type { WaitPattern } from './wait-pattern.js';

/** Probe delays after output, in ms: a program that just printed its prompt blocks within microseconds,
 *  so look again almost at once, then back off to `pollIntervalMs` while it keeps running. */
const PROBE_BACKOFF_MS = [1, 2, 4, 8, 16, 32];

/** Quiet time before a stdin wait is confirmed: the waiting program's last output is already in the pty
 *  buffer, and this lets it reach the output slice before the send settles. */
const STDIN_CONFIRM_MS = 3;

/** How long a half-typed line must sit at the prompt, output-free, before a cancel clears it. */
const RESIDUE_CONFIRM_MS = 20;

/** Probes on consecutive event-loop turns after a prompt candidate, before falling back to timers. */
const CANDIDATE_SPIN_PROBES = 32;

/** Quiet time after output before a probe looks: while output flows, nobody is blocked on input. */
const QUIET_PROBE_MS = 1;

/**
 * Input that may still be pending in the kernel when the shell shows its prompt: more than the line
 * discipline holds (4 KiB, refilled asynchronously by a kernel worker), text with several lines, input
 * typed ahead while a job owned the terminal, or the rest of a cancelled write. In those cases the
 * shell can be seen blocked at a prompt for a moment although input is on its way (measured: bash
 * blocks in pselect right after switching a typed-ahead line from canonical to raw mode), so prompt
 * evidence is confirmed over a short quiet window; the input waking the shell voids it.
 */
const LARGE_WRITE_BYTES = 2048;
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

/** What a send needs from its session. */
export interface SendEnvironment {
  readonly config: EngineConfig;
  /** The session nonce, for the send's prompt tracker. */
  readonly nonce: string;
  /** Samples the foreground process group; undefined when it cannot be read. */
  sample(): ForegroundSample | undefined;
  /** The session's shell, when known. During startup it may be resolved from a prompt candidate. */
  shell(candidate?: PromptCandidate): ShellIdentity | undefined;
  /** Resolves once terminal replies queued so far are written (replies go before caller input). */
  drainReplies(): Promise<void>;
  /** Writes caller input; stops before the next slice once `isCancelled()` is true. */
  writeInput(data: string, isCancelled: () => boolean): Promise<WriteOutcome>;
  /** Sends SIGINT to the foreground process group; returns the group. Throws on failure. */
  interrupt(): number;
  /** Current shell status. */
  status(): SessionStatus;
  /** What holds the terminal: `readerPid` when given and alive, else the foreground group's leader. */
  foreground(readerPid?: number): ForegroundProcess | undefined;
  /** The session's output, read from marks (the send's viewport and deltas). */
  readonly output: OutputWindow;
  /** Processes output already read from the pty but not yet through the pipeline. */
  flushOutput(): void;
  /** When the terminal replier last wrote a reply into the pty (`performance.now()` ms; -Infinity: never). */
  lastReplyAt(): number;
}

/** Options of one send. */
export interface SendOptions {
  /** Text to type; empty for startup. */
  text: string;
  /** Append `\r`. */
  submit: boolean;
  /** Startup phase (SPEC §4.1, §8); absent for a caller's send. */
  startup?: StartupPhase;
  /** This send's wait bound in ms (default config `timeoutMs`). */
  timeoutMs?: number;
  /** Settle `pattern` once this matches a line of the send's output. */
  waitFor?: WaitPattern;
  /** Absolute deadline (`performance.now()` ms) shared by several phases; default start + timeoutMs. */
  deadlineAt?: number;
}

/**
 * What may publish a shell during startup. Zero-output silence never does.
 * - `bash`: nothing is written; the shell's own verified prompt (or output followed by silence).
 * - `pwsh-wait`: nothing is written; only a proven stdin wait (echoed text can never publish pwsh).
 * - `pwsh-setup`: the prompt setup is written; only the verified prompt marker it installs.
 */
export type StartupPhase = 'bash' | 'pwsh-wait' | 'pwsh-setup';

/** States of a send. */
type SendState = { kind: 'draining' } | { kind: 'writing' } | { kind: 'waiting' } | { kind: 'settled' };

/** A readiness verdict waiting out its confirm window. */
interface PendingConfirm {
  kind: 'prompt' | 'stdin_wait';
  tid: number;
  switches: number | undefined;
  tpgid: number;
  outputSeq: number;
}

/**
 * One send. Feed it the sanitized stream (`text`, `newline`, `textBlock`, `rewriteLine`, `osc`) and call
 * `endOfChunk()` after each processed batch.
 */
export class SendOperation {
  /** Settles exactly once with the send's result (or rejects on a write/signal transport failure). */
  readonly done: Promise<TerminalSendResult>;
  /** Resolves once neither a write nor a cancel signal of this send can still happen (slot release). */
  readonly quiesced: Promise<void>;

  private state: SendState = { kind: 'draining' };
  private readonly startedAt = performance.now();
  private readonly tracker: PromptTracker;
  private outputMark: OutputMark;
  private deltaMark: OutputMark;
  private baseline: WaitBaseline | undefined;
  private readonly leftWait = new Set<number>();
  private hadOutput = false;
  private outputSeq = 0;
  private graceUsed = false;
  private cancelRequested = false;
  private interruptsSent = 0;
  private outputPending = false;
  private residueSeen: { outputSeq: number; at: number } | undefined;
  private lastOutputAt = 0;
  private probeDueAt = Number.POSITIVE_INFINITY;
  private probeImmediate: NodeJS.Immediate | undefined;
  private candidateSpins = 0;
  private readinessStopped = false;
  private inputMayBePending: boolean;
  private confirm: PendingConfirm | undefined;
  private probeStep = 0;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private silenceTimer: NodeJS.Timeout | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private writeDone: Promise<WriteOutcome | 'failed'> = Promise.resolve('written');
  private cancelDone: Promise<void> = Promise.resolve();
  private resolveDone!: (result: TerminalSendResult) => void;
  private rejectDone!: (error: unknown) => void;

  constructor(
    private readonly env: SendEnvironment,
    private readonly options: SendOptions,
  ) {
    this.tracker = new PromptTracker(env.nonce);
    this.inputMayBePending =
      Buffer.byteLength(options.text) > LARGE_WRITE_BYTES ||
      /[\r\n]/.test(options.text.replace(/[\r\n]+$/, ''));
    this.outputMark = this.deltaMark = env.output.mark();
    this.done = new Promise<TerminalSendResult>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    // A transport failure rejects `done`; the session observes it, so it is never unhandled.
    this.done.catch(() => undefined);
    const deadlineAt = options.deadlineAt ?? this.startedAt + (options.timeoutMs ?? env.config.timeoutMs);
    this.deadlineTimer = setTimeout(
      () => this.settle('timeout'),
      Math.max(0, deadlineAt - performance.now()),
    );
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
    if (this.options.startup === 'bash' || this.options.startup === 'pwsh-wait') {
      // These phases write nothing: collect from the very first byte the shell prints.
      this.beginWaiting();
      return;
    }
    try {
      await this.env.drainReplies();
    } catch {
      // Replies failing to drain means the pty is gone; exit handling settles the send.
    }
    if (this.state.kind !== 'draining') return;
    if (this.cancelRequested) {
      // Cancelled before a byte was written: the queued input is never written (SPEC §4.4).
      this.beginWaiting();
      return;
    }
    // Write boundary (rule 5): evidence gathered before this point is discarded.
    this.tracker.reset();
    this.outputMark = this.deltaMark = this.env.output.mark();
    this.hadOutput = false;
    const atBoundary = this.env.sample();
    this.baseline = baselineOf(atBoundary);
    const shell = this.env.shell();
    // Typed ahead: a job owns the terminal, so the shell reads this input only after it finishes.
    if (shell === undefined || atBoundary?.tpgid !== shell.pgrp) this.inputMayBePending = true;
    const data = this.options.submit ? `${this.options.text}\r` : this.options.text;
    if (data.length === 0) {
      this.beginWaiting();
      return;
    }
    this.state = { kind: 'writing' };
    this.writeDone = this.env
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
    this.tracker.text(s);
    this.outputPending = true;
  }

  /** End of line. */
  newline(): void {
    if (!this.collecting()) return;
    this.tracker.newline();
    this.outputPending = true;
  }

  /** Several lines at once. */
  textBlock(block: string): void {
    if (!this.collecting()) return;
    this.tracker.textBlock(block);
    this.outputPending = true;
  }

  /** Carriage-return rewrite of the current line. */
  rewriteLine(): void {
    if (!this.collecting()) return;
    this.tracker.rewriteLine();
    this.outputPending = true;
  }

  /** An OSC payload (maybe our marker). */
  osc(payload: string): void {
    if (!this.collecting()) return;
    if (this.tracker.osc(payload)) this.outputPending = true;
  }

  /**
   * The end of one pty data chunk. Readiness bookkeeping runs here once per chunk, never per line: a
   * flood delivers thousands of lines per chunk, and re-arming timers for each would dominate its cost.
   */
  endOfChunk(): void {
    if (!this.outputPending) return;
    this.outputPending = false;
    this.hadOutput = true;
    this.outputSeq++;
    this.lastOutputAt = performance.now();
    if (this.state.kind !== 'waiting') return;
    this.probeStep = 0;
    if (this.tracker.candidate !== undefined) {
      this.candidateSpins = 0;
      this.probe(); // a prompt settles the moment it is proven: no quiet period in between
      return;
    }
    // Probe shortly after the output stops; a probe already due that soon stays as it is.
    if (this.probeDueAt > this.lastOutputAt + QUIET_PROBE_MS) this.scheduleProbe(QUIET_PROBE_MS);
  }

  /** Output since the previous call. */
  readOutput(): SendOutputDelta {
    const page = this.env.output.since(this.deltaMark, this.env.config.maxReadBytes);
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
        this.env.interrupt();
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
    clearTimeout(this.silenceTimer);
    this.silenceTimer = undefined;
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
    this.clearTimers();
    this.rejectDone(error);
  }

  private collecting(): boolean {
    return (this.state.kind === 'writing' || this.state.kind === 'waiting') && !this.readinessStopped;
  }

  private beginWaiting(): void {
    this.state = { kind: 'waiting' };
    if (this.readinessStopped) return;
    this.armSilence();
    this.probeStep = 0;
    // Without output yet, the first exact probe waits `exactProbeAfterMs`; output brings it forward.
    this.scheduleProbe(this.hadOutput ? 0 : this.env.config.exactProbeAfterMs);
  }

  private armSilence(): void {
    clearTimeout(this.silenceTimer);
    this.graceUsed = false;
    this.silenceTimer = setTimeout(() => this.onSilence(), this.env.config.idleSilenceMs);
  }

  private onSilence(): void {
    if (this.state.kind !== 'waiting') return;
    // Output does not re-arm this timer (that would cost a timer per chunk): catch up here instead.
    const quietFor = performance.now() - this.lastOutputAt;
    if (!this.graceUsed && quietFor < this.env.config.idleSilenceMs) {
      this.silenceTimer = setTimeout(() => this.onSilence(), this.env.config.idleSilenceMs - quietFor);
      return;
    }
    if (this.options.startup !== undefined && !this.hadOutput) return; // zero-output silence never publishes
    if (this.options.startup === 'pwsh-wait' || this.options.startup === 'pwsh-setup') return; // proof only
    if (this.tracker.candidate !== undefined && !this.graceUsed) {
      // Rule 2: bash may print its marker before the kernel shows it back in the foreground; keep the
      // candidate for `handoffGraceMs` past the silence bound so the handoff can still win.
      this.graceUsed = true;
      this.silenceTimer = setTimeout(() => this.onSilence(), this.env.config.handoffGraceMs);
      return;
    }
    if (this.graceUsed && this.tracker.candidate === undefined && quietFor < this.env.config.idleSilenceMs) {
      // Output during the grace voided the candidate: back to the ordinary silence bound.
      this.graceUsed = false;
      this.silenceTimer = setTimeout(() => this.onSilence(), this.env.config.idleSilenceMs - quietFor);
      return;
    }
    this.settle('inferred_idle');
  }

  private scheduleProbe(delayMs: number): void {
    this.clearProbe();
    this.probeDueAt = performance.now() + delayMs;
    this.probeTimer = setTimeout(() => this.probe(), delayMs);
  }

  private nextBackoff(): number {
    const delay = PROBE_BACKOFF_MS[this.probeStep] ?? this.env.config.pollIntervalMs;
    this.probeStep++;
    return Math.min(delay, this.env.config.pollIntervalMs);
  }

  private probe(): void {
    this.clearProbe();
    this.probeDueAt = Number.POSITIVE_INFINITY;
    if (this.state.kind !== 'waiting') return;
    // Output already read from the pty is judged before /proc is: a prompt the shell printed before it
    // blocked must be seen together with that block. (Flushing may settle this send re-entrantly.)
    this.env.flushOutput();
    if (this.state.kind !== 'waiting' || this.probeTimer !== undefined || this.probeImmediate !== undefined)
      return;
    const sinceOutput = performance.now() - this.lastOutputAt;
    if (sinceOutput < QUIET_PROBE_MS && this.tracker.candidate === undefined) {
      // Output is still flowing: nobody is blocked on input yet. Look again once it pauses.
      this.scheduleProbe(QUIET_PROBE_MS - sinceOutput);
      return;
    }
    const candidate = this.tracker.candidate;
    const sample = this.env.sample();
    const shell = this.env.shell(candidate);
    noteLeftWait(sample, this.leftWait);
    if (this.interruptsSent === 1 && shellHoldsPartialLine(sample, shell, candidate)) {
      // A cancelled write can leave part of a line typed at the prompt (its slice was already in the
      // kernel). One more SIGINT makes the line editor discard it and print a fresh prompt, so the
      // residue never joins the next send's command. Only once the state held, without any output, for
      // RESIDUE_CONFIRM_MS: a prompt still unread in the pty buffer would otherwise look like residue.
      const seen = this.residueSeen;
      const now = performance.now();
      if (seen === undefined || seen.outputSeq !== this.outputSeq) {
        this.residueSeen = { outputSeq: this.outputSeq, at: now };
      } else if (now - seen.at >= RESIDUE_CONFIRM_MS) {
        try {
          this.env.interrupt();
        } catch {
          // The shell vanished; exit handling settles the send.
        }
        this.interruptsSent++;
      }
    } else {
      this.residueSeen = undefined;
    }
    const verdict = judgeReadiness({
      candidate,
      shell,
      sample,
      baseline: this.baseline,
      leftWait: this.leftWait,
    });
    const proven =
      (verdict.kind === 'prompt' && this.options.startup !== 'pwsh-wait') ||
      (verdict.kind === 'stdin_wait' &&
        this.options.startup !== 'bash' &&
        this.options.startup !== 'pwsh-setup');
    if (proven) {
      // A prompt settles at once; a stdin wait (and a prompt after a large write) is confirmed after a
      // short quiet: same thread, same group, still blocked, did not run, no new output.
      const sinceReply =
        verdict.kind === 'stdin_wait' ? performance.now() - this.env.lastReplyAt() : Infinity;
      if (sinceReply < REPLY_GRACE_MS) {
        // Maybe blocked only until our own reply arrives: look again once it has had time to.
        this.confirm = undefined;
        this.scheduleProbe(REPLY_GRACE_MS - sinceReply);
        return;
      }
      const needsConfirm = verdict.kind === 'stdin_wait' || this.inputMayBePending;
      const pending = this.confirm;
      const confirmed =
        pending !== undefined &&
        pending.kind === verdict.kind &&
        pending.tid === verdict.tid &&
        pending.tpgid === verdict.tpgid &&
        pending.switches === verdict.switches &&
        pending.outputSeq === this.outputSeq;
      if (!needsConfirm || confirmed) {
        this.settle('stdin_read', verdict.kind === 'prompt' ? verdict.candidate : undefined);
        return;
      }
      this.confirm = {
        kind: verdict.kind,
        tid: verdict.tid,
        switches: verdict.switches,
        tpgid: verdict.tpgid,
        outputSeq: this.outputSeq,
      };
      this.scheduleProbe(verdict.kind === 'prompt' ? PENDING_INPUT_CONFIRM_MS : STDIN_CONFIRM_MS);
      return;
    }
    this.confirm = undefined;
    if (candidate !== undefined && this.candidateSpins < CANDIDATE_SPIN_PROBES) {
      // The shell printed its prompt and blocks on the terminal microseconds later: look again on the
      // next turn of the event loop rather than after a timer's millisecond.
      this.candidateSpins++;
      this.scheduleImmediateProbe();
      return;
    }
    this.scheduleProbe(this.nextBackoff());
  }

  private scheduleImmediateProbe(): void {
    this.clearProbe();
    this.probeDueAt = performance.now();
    this.probeImmediate = setImmediate(() => this.probe());
  }

  /** Cancels a pending probe, whichever way it was scheduled. */
  private clearProbe(): void {
    clearTimeout(this.probeTimer);
    clearImmediate(this.probeImmediate);
    this.probeTimer = undefined;
    this.probeImmediate = undefined;
  }

  private settle(reason: WaitReason, candidate?: PromptCandidate): void {
    if (this.settled) return;
    const result = this.buildResult(reason, candidate);
    this.state = { kind: 'settled' };
    this.clearTimers();
    this.resolveDone(result);
  }

  private buildResult(reason: WaitReason, candidate: PromptCandidate | undefined): TerminalSendResult {
    const output = this.env.output.since(this.outputMark, this.env.config.maxReadBytes);
    let viewport = output.text;
    if (candidate !== undefined && viewport.endsWith(CONTROLLED_PS1)) {
      // The prompt itself is not output of the command; the wait reason already says we are at it.
      viewport = viewport.slice(0, viewport.length - CONTROLLED_PS1.length).replace(/\n$/, '');
    }
    const result: TerminalSendResult = {
      viewport,
      waitReason: reason,
      sessionStatus: this.env.status(),
      truncated: output.truncated,
      elapsedMs: Math.round((performance.now() - this.startedAt) * 100) / 100,
    };
    if (candidate !== undefined) {
      result.exitCode = candidate.exitCode;
      result.cwd = candidate.cwd;
    }
    const foreground = this.env.foreground(candidate?.shellPid);
    if (foreground !== undefined) result.foreground = foreground;
    return result;
  }

  private clearTimers(): void {
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.silenceTimer);
    this.clearProbe();
    this.deadlineTimer = this.silenceTimer = undefined;
  }

  private async settledSideEffects(): Promise<void> {
    // The slot is held until no byte and no signal of this send can still reach the terminal.
    await this.writeDone;
    await this.cancelDone;
  }
}
