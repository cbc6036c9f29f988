/**
 * The wire between the host thread and an engine thread: what a session task receives, the Comlink
 * control-plane interface it exposes, and the data-plane messages. Nothing else crosses the boundary.
 */
import type { MessagePort } from 'node:worker_threads';
import type { EngineConfig } from './config.js';
import { joinCrlfToLf } from './crlf-to-lf.js';
import type { ProcessIdentity } from './proc-stat.js';
import type {
  Dialect,
  ReadRequest,
  ReadResult,
  SendOutputDelta,
  SessionOutcome,
  SessionStatus,
  SignalName,
  SignalResult,
  TerminalSendResult,
} from './types.js';

/** Everything the engine thread needs to start one shell. */
export interface SessionLaunchSpec {
  /** Engine-unique id, for error messages. */
  id: string;
  /** Exact argv to spawn (already wrapped by the sandbox provider when confined). */
  argv: string[];
  /** Working directory of the pty child. */
  cwd: string;
  /** Caller's explicit environment, applied after scrubbing. */
  env: Record<string, string> | undefined;
  /** Shell dialect. */
  dialect: Dialect;
  /** Terminal size. */
  rows: number;
  cols: number;
  /** Validated engine configuration. */
  config: EngineConfig;
  /** Test-only fault injection (see `FaultPlan`). */
  faults?: FaultPlan;
}

/** Deliberate failures, enabled only by tests through the engine option `faultInjection`. */
export interface FaultPlan {
  /** Number of teardown attempts whose kills are swallowed (so verification fails). */
  failTeardowns?: number;
}

/** Data given to the Piscina task that hosts one session. */
export interface SessionTaskData {
  /** Control-plane port: the session is exposed on it with Comlink. */
  controlPort: MessagePort;
  /** Data-plane port: live output batches flow out, acknowledgements flow in. */
  dataPort: MessagePort;
  /** What to launch. */
  spec: SessionLaunchSpec;
}

/** What `launch()` reports once the pty child exists (before the shell is ready). */
export interface LaunchInfo {
  /** Identity of the pty child, for the host-exit guard. */
  identity: ProcessIdentity;
  /** Path of the terminal's slave side (e.g. /dev/pts/3). */
  ttyPath: string;
  /** Engine thread id, for diagnostics. */
  threadId: number;
}

/** The control-plane interface an engine thread exposes for one session (wrapped by Comlink on the host). */
export interface RemoteSessionApi {
  /** Spawns the pty child. The host serializes launches across threads (node-pty's spawn is not thread-safe). */
  launch(): Promise<LaunchInfo>;
  /** Resolves with the MOTD once the shell is proven ready; rejects (coded) on timeout or exit. */
  awaitStartup(): Promise<{ motd: string }>;
  /** Starts a send with a host-chosen id; returns once the send owns the session's send slot. */
  startSend(sendId: number, text: string, submit: boolean): Promise<void>;
  /** Settles with the result of send `sendId`. */
  awaitSend(sendId: number): Promise<TerminalSendResult>;
  /** Output of send `sendId` since the previous call. */
  readSendOutput(sendId: number): Promise<SendOutputDelta>;
  /** Cancels send `sendId` (SIGINT to the foreground group after any in-flight write). */
  cancelSend(sendId: number): Promise<void>;
  /** A page of scrollback. */
  read(request: ReadRequest): Promise<ReadResult>;
  /** Delivers a signal to the foreground process group. */
  signal(signal: SignalName): Promise<SignalResult>;
  /** Whether the shell is alive. */
  status(): Promise<SessionStatus>;
  /** Turns live output publishing on the data port on or off. */
  setLiveOutput(enabled: boolean): Promise<void>;
  /** Tears the session down; the Piscina task resolves afterwards. Retries if an earlier close failed. */
  close(reason: string): Promise<SessionOutcome>;
  /** Test-only: makes the engine thread die (uncaught throw, or process.exit of the thread). */
  crashThreadForTest(kind: 'throw' | 'exit'): Promise<void>;
}

/** A batch of live output, engine → host. */
export interface LiveOutputMessage {
  type: 'output';
  /**
   * Sanitized text, in the pieces the engine produced (a flood's are whole reads: joining them is left
   * to the host, off the reading thread). `\n` or `\r\n` ends a line, and a lone `\r` starts a rewrite
   * of the current line. A rewrite is always followed by the text that replaces the line, never by a
   * line end, so `\r\n` is unambiguous. The engine leaves CRLFs as the program wrote them (normalizing
   * costs its reading thread a pass over every byte); the host joins the pieces and turns CRLFs into
   * `\n` with {@link liveTextForSubscribers}.
   */
  parts: string[];
  /** Characters in `parts`: what an acknowledgement counts. */
  chars: number;
  /** Characters dropped before this batch because the host had not acknowledged enough (as subscribers count them). */
  dropped: number;
}

/** A batch's text as subscribers get it: every line ends with `\n`; a lone `\r` starts a rewrite. */
export function liveTextForSubscribers(parts: readonly string[]): string {
  return joinCrlfToLf(parts);
}

/**
 * The engine stops sending live output while this many characters are unacknowledged (and counts
 * what it drops instead) …
 */
export const LIVE_HIGH_WATERMARK_CHARS = 1024 * 1024;
/** … and resumes once the host has acknowledged all but this many. */
export const LIVE_LOW_WATERMARK_CHARS = 256 * 1024;
/**
 * The host acknowledges once it has processed this many characters since its last acknowledgement:
 * one message back per several batches, not one per batch (each message wakes the engine thread in the
 * middle of a flood). At most the low watermark, so a paused engine always resumes: once the host has
 * processed everything sent, what it has not acknowledged is below this.
 */
export const LIVE_ACK_EVERY_CHARS = LIVE_LOW_WATERMARK_CHARS;

/** An acknowledgement, host → engine: the host processed `chars` more characters. */
export interface LiveOutputAck {
  type: 'ack';
  chars: number;
}
