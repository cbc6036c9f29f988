/**
 * The engine protocol of execution worlds (SPEC §10): what `agent-pty serve --stdio` and
 * `createRemoteEngine` say to each other over a byte stream. Frames are newline-delimited JSON
 * objects (JSON.stringify never emits a raw newline), each at most {@link MAX_FRAME_BYTES}.
 *
 * Requests and results are forwarded as plain JSON: the protocol names the operation and the session,
 * and carries the engine API's own request and result objects untouched, so fields added to the engine
 * API later pass through without a protocol change. Types only, plus the version and the error codec.
 */
import { TerminalError, type TerminalErrorCode } from './errors.js';
import type { HoldEnd, RawChunk, ReattachReport, SandboxMode, SessionListing } from './types.js';

/** A span of protocol versions one end speaks (SPEC §12). */
export interface ProtocolRange {
  min: number;
  max: number;
}

/**
 * The versions of this protocol this release speaks. Both ends use the highest version both speak and
 * refuse each other (`PROTOCOL_MISMATCH`, naming both ranges) only when the ranges do not overlap. A
 * release keeps the previous version (`min` one below `max`), so upgrading one end never strands the
 * other. Bump `max` when a frame's meaning changes, not when the engine API gains a field (those pass
 * through). Version 2 adds the daemon's operations (attach, detach, list, the raw channel, snapshot and
 * keyboard holding of SPEC §13) and the range form of hello; version 1 is `serve --stdio` as it was.
 */
export const WORLD_PROTOCOL: ProtocolRange = { min: 1, max: 2 };

/** The first version with the daemon's operations (SPEC §12, §13). */
export const DAEMON_PROTOCOL_VERSION = 2;

/** Kept for version-1 peers' tests and tools: the version a version-1 hello names. */
export const WORLD_PROTOCOL_VERSION = 1;

/** A hello's `protocol` as a range: version 1 sent a plain number. Undefined when it is neither. */
export function protocolRangeOf(value: unknown): ProtocolRange | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return { min: value, max: value };
  if (typeof value !== 'object' || value === null) return undefined;
  const { min, max } = value as Record<string, unknown>;
  if (typeof min !== 'number' || typeof max !== 'number') return undefined;
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min > max) return undefined;
  return { min, max };
}

/** The highest version both ranges hold, or undefined when they do not overlap. */
export function commonProtocol(mine: ProtocolRange, theirs: ProtocolRange): number | undefined {
  const highest = Math.min(mine.max, theirs.max);
  return highest >= Math.max(mine.min, theirs.min) ? highest : undefined;
}

/** `version 2` or `versions 1 to 2`: how a refusal names a range. */
function describeRange(value: unknown): string {
  const range = protocolRangeOf(value);
  if (range === undefined) return `an unreadable version (${JSON.stringify(value) ?? String(value)})`;
  return range.min === range.max ? `version ${range.min}` : `versions ${range.min} to ${range.max}`;
}

/**
 * Longest frame either end accepts. The largest legitimate frames are a send's result and a page of
 * scrollback, both bounded by `maxReadBytes` (default 256 KiB; JSON escaping can multiply control
 * characters by 6); 32 MiB leaves room for a raised `maxReadBytes` while a corrupt stream cannot grow
 * a buffer without end.
 */
export const MAX_FRAME_BYTES = 32 * 1024 * 1024;

/** A coded error as it crosses the link: the `TerminalError` code and message survive. */
export interface WireError {
  /** The `TerminalError` code (`INTERNAL` for an uncoded failure). */
  code: TerminalErrorCode;
  /** The message, unchanged. */
  message: string;
}

/** Operations the client calls; each is answered by one `result` or `error` frame with the call's id. */
export type WorldOperation =
  /** `engine.spawn(options)` → {@link SpawnedSession}. */
  | 'spawn'
  /** `session.startSend(request)`, answered when the send settles → its result. */
  | 'send'
  /** `op.readOutput()` of a send → its delta. */
  | 'send-output'
  /** `op.cancel()` of a send. */
  | 'send-cancel'
  /** A session method (`read`, `signal`, `status`, `close`, …) with its arguments. */
  | 'session'
  /** Starts or stops forwarding a session's live output. */
  | 'live-output'
  /** `engine.close()`: every session of this link closes; the server exits once stdin ends. */
  | 'shutdown'
  // Version 2 (the daemon, SPEC §12):
  /** `engine.list()` → {@link SessionListing}[] of the client's scope (a watcher's: {@link WatchedListing}[] of every scope). */
  | 'list'
  /** `engine.attach({ name } | { id }, { steal? })` → {@link AttachedSession}. */
  | 'attach'
  /** `session.detach()`: the session keeps running for a later attach. */
  | 'detach'
  /** `agent-pty daemon --status` → {@link DaemonStatus}. */
  | 'daemon-status'
  /** `agent-pty daemon --stop`: the daemon closes every session and exits. */
  | 'daemon-stop'
  // Version 2, SPEC §13 (raw channel, snapshot, keyboard holding):
  /** `session.openRaw()`: opens raw channel `channel` → its {@link TerminalSnapshot}; chunks follow as `raw` frames. */
  | 'raw-open'
  /** Closes raw channel `channel`. */
  | 'raw-close'
  /** `session.snapshot()` → {@link TerminalSnapshot}. */
  | 'snapshot'
  /** `session.takeKeyboard(options)` as hold `hold` → `{ since }`; its end comes as a `hold-ended` frame. */
  | 'keyboard-take'
  /** `hold.write(data)`. */
  | 'keyboard-write'
  /** `hold.heartbeat()`. */
  | 'keyboard-heartbeat'
  /** `hold.release()`. */
  | 'keyboard-release';

/** What the client sends. */
export type ClientFrame =
  /**
   * First frame: the versions the client speaks (version 1 sent a number) and the far engine's
   * configuration (SPEC §3; a daemon ignores it: its configuration is its own). `scope` (version 2) is
   * the client's sandbox policy: a daemon shows it only sessions of that mode and workspace root, and
   * spawns its sessions under it; without one the client sees only unconfined sessions. `role:
   * 'watcher'` (version 2, a daemon only) is `agent-pty watch`: it lists every session of every scope
   * and may only view them and hold their keyboards (docs/watch.md says why), never spawn or send.
   */
  | {
      t: 'hello';
      protocol: ProtocolRange | number;
      config?: Record<string, unknown>;
      scope?: { mode: SandboxMode; workspaceRoot: string };
      role?: 'watcher';
    }
  /** A call; `args` is the operation's plain JSON arguments. */
  | { t: 'call'; id: number; op: WorldOperation; args: Record<string, unknown> }
  /** The caller's AbortSignal of call `id` fired (a spawn's, or a send's: it ends only the wait). */
  | { t: 'abort'; id: number }
  /** The client delivered `chars` characters of a session's live output: credit for that much more. */
  | { t: 'ack'; session: string; chars: number }
  /** Raw channel `channel` delivered `chars` characters: credit for that much more (version 2). */
  | { t: 'raw-ack'; channel: number; chars: number }
  /** Heartbeat. */
  | { t: 'ping' };

/** What the server sends. */
export type ServerFrame =
  /**
   * Answer to the client's hello: the versions the server speaks (a plain number to a client whose
   * hello was a number, as version 1 expects). A version-1 server sent it first, unasked.
   */
  | { t: 'hello'; protocol: ProtocolRange | number }
  /**
   * The server's engine is up; calls may follow. `pid` is the server process on the far side;
   * `protocol` the version chosen (absent from a version-1 server: 1).
   */
  | { t: 'ready'; pid: number; protocol?: number }
  /** The server refuses the link (protocol mismatch, bad config) and exits. */
  | { t: 'fatal'; error: WireError }
  /** Call `id` succeeded. */
  | { t: 'result'; id: number; value: unknown }
  /** Call `id` failed with a coded error. */
  | { t: 'error'; id: number; error: WireError }
  /** Live output of a session; `dropped` counts characters lost before `text` (lagging link or subscriber). */
  | { t: 'output'; session: string; text: string; dropped: number }
  /** A chunk of raw channel `channel` (version 2, SPEC §13). */
  | { t: 'raw'; channel: number; chunk: RawChunk }
  /** Keyboard hold `hold` ended (version 2, SPEC §13). */
  | { t: 'hold-ended'; hold: number; end: HoldEnd }
  /**
   * The daemon took session `session` from this client (another client attached it with `steal`, or
   * it closed on its own): its handle here is gone (version 2).
   */
  | { t: 'detached'; session: string; reason: string }
  /** Heartbeat. */
  | { t: 'ping' };

/** What `daemon-status` answers. */
export interface DaemonStatus {
  pid: number;
  /** The agent-pty version the daemon runs. */
  version: string;
  /** The protocol versions it speaks. */
  protocol: ProtocolRange;
  /** The socket it listens on. */
  socket: string;
  /** Every session it holds, of every scope (same uid: the status is its owner's). */
  sessions: Array<SessionListing & { scope: string }>;
}

/** A session as a watcher connection lists it: every scope's, each saying its workspace. */
export interface WatchedListing extends SessionListing {
  /** The workspace root of its sandbox (absent for an unconfined session). */
  workspaceRoot?: string;
}

/** What an `attach` call returns: the session, and what happened while nobody was attached. */
export interface AttachedSession {
  session: SpawnedSession;
  report: ReattachReport;
}

/** What a `spawn` call returns: the far session's fixed properties. */
export interface SpawnedSession {
  /** Far engine's session id. */
  id: string;
  /** Human-readable name. */
  name?: string;
  /** The shell's pid on the far side, as that machine's host sees it. */
  pid: number;
  /** Bounded startup output. */
  motd: string;
  /** The shell dialect it runs (a far side of an older version may leave it out: bash). */
  dialect?: string;
  /** Sandbox the session runs in, when confined. */
  sandbox?: { mode: string; workspaceRoot: string };
}

/** Session methods the `session` operation may invoke (anything else is refused). */
export const WORLD_SESSION_METHODS = ['read', 'signal', 'status', 'resize', 'close'] as const;

/** The coded form of any thrown value. */
export function toWireError(error: unknown): WireError {
  if (error instanceof TerminalError) return { code: error.code, message: error.message };
  // The engine's only uncoded rejection: close() reporting the sessions that failed to close.
  if (error instanceof AggregateError) return { code: 'CLEANUP_FAILED', message: error.message };
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'INTERNAL', message };
}

/** A `TerminalError` with the far side's code and message. */
export function fromWireError(error: WireError): TerminalError {
  return new TerminalError(error.code, error.message);
}

/** The refusal both ends give a peer whose versions do not overlap theirs, naming both ranges. */
export function protocolMismatch(
  mine: ProtocolRange,
  theirs: unknown,
  peer: 'client' | 'server',
): TerminalError {
  const local = peer === 'server' ? 'client' : 'server';
  return new TerminalError(
    'PROTOCOL_MISMATCH',
    `agent-pty engine protocol mismatch: the ${local} speaks ${describeRange(mine)}, the ${peer} speaks ${describeRange(theirs)}; install the same agent-pty version on both ends`,
  );
}
