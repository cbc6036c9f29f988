/**
 * What a send sees of its session (SPEC §2, "Inside a session"): three narrow ports and two settings,
 * built once per session (session.ts), each member reading the session's state when called. None of
 * them calls back into the send, except the output port's `flush`, during which the pipeline feeds the
 * send in the slot; the send takes what it hears then as data only (send-operation.ts,
 * `processPendingOutput`).
 */
import type { EngineConfig } from '../../shared/config.js';
import type { ForegroundProcess, SessionStatus } from '../../shared/types.js';
import type { OutputMark, OutputWindow } from '../output/output-window.js';
import type { ForegroundSample } from '../proc/stdin-wait.js';
import type { WriteOutcome } from '../pty/pty-input-writer.js';
import type { DrainOutcome } from '../pty/pty-output-drain.js';
import type { PromptCandidate, PromptTracker } from './prompt-tracker.js';
import type { ShellIdentity } from './readiness.js';

/** What a send needs from its session: three narrow ports and two settings. */
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
  /**
   * Processes output already read from the pty but not yet through the pipeline. The pipeline feeds the
   * send in the slot synchronously meanwhile (its `OutputListener` calls), so a send calling this must
   * treat those calls as data it reads after the call returns.
   */
  flush(): void;
  /**
   * Reads what the kernel still holds of the pty's output into the pipeline (processed on a later turn):
   * `empty` proves that every byte the pty produced before this call has been read (pty-output-drain.ts).
   */
  drain(): DrainOutcome;
}
