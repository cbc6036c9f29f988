/**
 * The wire between the host thread and an engine thread: what a session task receives, the Comlink
 * control-plane interface it exposes, and the data-plane messages. Besides these, only the live-output
 * ring's shared memory crosses the boundary; its record layout is in live-ring.ts.
 */
import type { MessagePort } from 'node:worker_threads';
import type { EngineConfig } from './config.js';
import type { ProcessIdentity } from './proc-stat.js';
import type {
  Dialect,
  ReadRequest,
  ReadResult,
  SendOutputDelta,
  SendRequest,
  SessionOutcome,
  SessionStatus,
  SignalName,
  SignalResult,
  TerminalSendResult,
  TerminalSize,
  TerminalSnapshot,
} from './types.js';

/** What every engine thread of a pool receives at start (Piscina's `workerData`). */
export interface EngineWorkerData {
  /** Config `cgroupRoot`: where session cgroups go (default: the process's own cgroup). */
  cgroupRoot: string | undefined;
  /** This engine's key among the engines of the process: its cgroups are `engine-<key>` (SPEC §4.8). */
  engineKey: string;
  /** Config `engineMemoryBytes`: the memory cap of all the engine's sessions together. */
  engineMemoryBytes: number;
  /** The pool's heartbeat buffer: one counter per thread (src/shared/heartbeat.ts). */
  heartbeats: SharedArrayBuffer;
}

/** A send as it crosses to the engine thread: the request without its `AbortSignal` (ends the wait via `endWait`). */
export type SendSpec = Omit<SendRequest, 'signal'>;

/** Everything the engine thread needs to start one shell (its argv comes from `plan()`). */
export interface SessionLaunchSpec {
  /** Engine-unique id, for error messages. */
  id: string;
  /** Working directory of the pty child. */
  cwd: string;
  /** Caller's explicit environment, applied after scrubbing. */
  env: Record<string, string> | undefined;
  /** The environment to start from instead of the engine process's own (scrubbed alike; SPEC §12). */
  baseEnv?: Record<string, string>;
  /** Shell dialect. */
  dialect: Dialect;
  /** Terminal size. */
  rows: number;
  cols: number;
  /** Validated engine configuration. */
  config: EngineConfig;
  /** True when `argv` runs the shell in a PID namespace of its own (a confined sandbox mode). */
  pidNamespace: boolean;
  /** This session's limits, resolved from the spawn's `limits` and the config (default: the config's). */
  limits?: { memoryBytes: number; pids: number };
  /** Deliberate failures (see `FaultPlan`); set only through the internal test entry. */
  faults?: FaultPlan;
}

/** Deliberate failures, enabled only by tests through the internal test entry (src/main/engine/testing.ts). */
export interface FaultPlan {
  /** Number of teardown attempts whose kills are swallowed (so verification fails). */
  failTeardowns?: number;
}

/** Data given to the Piscina task that hosts one session. */
export interface SessionTaskData {
  /** Control-plane port: the session is exposed on it with Comlink. */
  controlPort: MessagePort;
  /** Data-plane port: the live ring and wake-ups flow out, resume messages flow in (live-ring.ts). */
  dataPort: MessagePort;
  /** What to launch. */
  spec: SessionLaunchSpec;
  /** The task's heartbeat buffer (src/shared/heartbeat.ts): the task writes its thread's slot there. */
  heartbeat: SharedArrayBuffer;
}

/**
 * Deaths of an engine thread the tests cause: an uncaught throw, `process.exit()` of the thread, a busy loop
 * that never yields (wedged: only the heartbeat notices), allocation until the heap limit kills it.
 */
export type ThreadFaultKind = 'throw' | 'exit' | 'spin' | 'oom';

/**
 * What the engine thread's dialect will start (SPEC §8), before the host confines it: the host wraps
 * `argv` through the sandbox provider and passes the result to `launch()`.
 */
export interface ShellPlan {
  /** The shell's argv, unconfined: config `shellPath`/`shellArgs`, else the dialect's default. */
  argv: string[];
  /** Paths the shell reads at startup (the dialect's rc files): a confined shell must read them too. */
  readablePaths: string[];
}

/** What `launch()` reports once the pty child exists (before the shell is ready). */
export interface LaunchInfo {
  /** Identity of the pty child, for the host-exit guard. */
  identity: ProcessIdentity;
  /** Path of the terminal's slave side (e.g. /dev/pts/3). */
  ttyPath: string;
  /** Engine thread id, for diagnostics. */
  threadId: number;
  /** The session's cgroup directory, when it has one: the host-exit guard kills it as a whole. */
  cgroupDir: string | undefined;
  /** The session's cgroup v1 limit directories: the host-exit guard kills their members too. */
  limitDirs: string[];
}

/** The control-plane interface an engine thread exposes for one session (wrapped by Comlink on the host). */
export interface SessionThreadApi {
  /** Prepares the dialect's files for this session and says what to start (see {@link ShellPlan}). */
  plan(): Promise<ShellPlan>;
  /**
   * Spawns the pty child running `argv` (the plan's, confined when the session is). The host serializes
   * launches across threads (node-pty's spawn is not thread-safe).
   */
  launch(argv: string[]): Promise<LaunchInfo>;
  /**
   * Resolves with the MOTD and the shell's host pid (below a sandbox launcher, not the pty child's)
   * once the shell is proven ready; rejects (coded) on timeout or exit.
   */
  awaitStartup(): Promise<{ motd: string; shellPid: number }>;
  /**
   * Starts a send with a host-chosen id; returns once the send owns the session's send slot. Rejects
   * with `INVALID_ARGUMENT` (nothing written) when the request is invalid.
   */
  startSend(sendId: number, request: SendSpec): Promise<void>;
  /** Settles with the result of send `sendId`. */
  awaitSend(sendId: number): Promise<TerminalSendResult>;
  /**
   * `startSend` and `awaitSend` in one call: one message each way, so the engine thread posts no reply
   * (and wakes no host) between taking the send and writing its input. Rejects as `startSend` does.
   */
  send(sendId: number, request: SendSpec): Promise<TerminalSendResult>;
  /** Output of send `sendId` since the previous call. */
  readSendOutput(sendId: number): Promise<SendOutputDelta>;
  /** Cancels send `sendId` (SIGINT to the foreground group after any in-flight write). */
  cancelSend(sendId: number): Promise<void>;
  /** Ends only the wait of send `sendId`: it settles `running` (unless settled already); nothing is signalled. */
  endWait(sendId: number): Promise<void>;
  /** A page of scrollback. */
  read(request: ReadRequest): Promise<ReadResult>;
  /** Delivers a signal to the foreground process group. */
  signal(signal: SignalName): Promise<SignalResult>;
  /** Whether the shell is alive. */
  status(): Promise<SessionStatus>;
  /** Resizes the pty and the screen models; INVALID_ARGUMENT for a size that is not positive integers. */
  resize(size: TerminalSize): Promise<void>;
  /**
   * Writes a person's input (SPEC §13: the holder of the keyboard) straight to the pty, past the send
   * slot; nothing of it is kept. Resolves once written.
   */
  writePersonInput(data: string): Promise<void>;
  /** Turns live output publishing (the data plane) on or off. */
  setLiveOutput(enabled: boolean): Promise<void>;
  /**
   * Subscribes `port` (transferred; a raw data port, same messages as the data port) to the raw
   * channel, and resolves with the snapshot its first record continues. Closing the port ends it.
   */
  openRaw(port: MessagePort): Promise<TerminalSnapshot>;
  /** The terminal model serialized now (SPEC §2). */
  snapshot(): Promise<TerminalSnapshot>;
  /**
   * Tears the session down (with a SIGTERM grace of at most `graceMs`, when given); the Piscina task
   * resolves afterwards. Retries if an earlier close failed.
   */
  close(reason: string, graceMs?: number): Promise<SessionOutcome>;
}

/** What a session task exposes besides `SessionThreadApi` when its spec carries a `FaultPlan`. */
export interface ThreadFaultApi {
  /** Makes the engine thread die or wedge, after this call's reply (see `ThreadFaultKind`). */
  crashThread(kind: ThreadFaultKind): Promise<void>;
}

/** Name of the engine thread's diagnostics task (a Piscina named export of the worker module). */
export const THREAD_DIAGNOSTICS_TASK = 'threadDiagnostics';

/** What an engine thread holds right now, as its diagnostics task reports it. */
export interface ThreadDiagnostics {
  /** Timers and listeners registered with an owner and not yet released, by label (lifecycle.ts). */
  ownedResources: Record<string, number>;
  /** The thread's active libuv resources (`process.getActiveResourcesInfo()`), sorted. */
  activeResources: string[];
}

/**
 * Live output, engine → host on the data port. The text itself is in the shared ring (live-ring.ts):
 * - `ring`: once, before the first record — the ring's memory;
 * - `output`: records were published; the host drains the ring (`LiveRingReader.drain`).
 *
 * A record's text is sanitized output as subscribers get it: `\n` ends a line, and a lone `\r` starts a
 * rewrite of the current line. The engine's terminal model passes line ends on as the program wrote them
 * (`\r\n` from a pty); a rewrite is always followed by the text that replaces the line, never by a
 * line end, so `\r\n` is unambiguous and the engine turns it into `\n` as it writes a record.
 */
export type LiveOutputMessage = { type: 'ring'; buffer: SharedArrayBuffer } | { type: 'output' };

/**
 * Host → engine on the data port: the host has read the ring down to the low watermark, which the
 * paused engine asked to hear (`LiveRingWriter.requestResume`). The only message that flows back.
 */
export interface LiveOutputResume {
  type: 'resume';
}

/**
 * Settled sends a session keeps answering for, so an `awaitSend`/`readSendOutput` (or a world's
 * `readOutput()`) right after the settle still finds its send. The engine thread's session and a
 * world's server keep the same number.
 */
export const SETTLED_SENDS_KEPT = 4;
