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

/**
 * Version of this protocol. Both ends send it first thing (`hello`) and refuse a peer of another
 * version with `PROTOCOL_MISMATCH`. Bump it when a frame's meaning changes, not when the engine API
 * gains a field (those pass through).
 */
export const WORLD_PROTOCOL_VERSION = 1;

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
  | 'shutdown';

/** What the client sends. */
export type ClientFrame =
  /** First frame: the client's protocol version and the far engine's configuration (SPEC §3). */
  | { t: 'hello'; protocol: number; config?: Record<string, unknown> }
  /** A call; `args` is the operation's plain JSON arguments. */
  | { t: 'call'; id: number; op: WorldOperation; args: Record<string, unknown> }
  /** The caller's AbortSignal of call `id` fired (a spawn's, or a send's: it ends only the wait). */
  | { t: 'abort'; id: number }
  /** The client delivered `chars` characters of a session's live output: credit for that much more. */
  | { t: 'ack'; session: string; chars: number }
  /** Heartbeat. */
  | { t: 'ping' };

/** What the server sends. */
export type ServerFrame =
  /** First frame: the server's protocol version. */
  | { t: 'hello'; protocol: number }
  /** The server's engine is up; calls may follow. `pid` is the server process on the far side. */
  | { t: 'ready'; pid: number }
  /** The server refuses the link (protocol mismatch, bad config) and exits. */
  | { t: 'fatal'; error: WireError }
  /** Call `id` succeeded. */
  | { t: 'result'; id: number; value: unknown }
  /** Call `id` failed with a coded error. */
  | { t: 'error'; id: number; error: WireError }
  /** Live output of a session; `dropped` counts characters lost before `text` (lagging link or subscriber). */
  | { t: 'output'; session: string; text: string; dropped: number }
  /** Heartbeat. */
  | { t: 'ping' };

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

/** The refusal both ends give a peer of another protocol version, naming both versions. */
export function protocolMismatch(mine: number, theirs: unknown, peer: 'client' | 'server'): TerminalError {
  const local = peer === 'server' ? 'client' : 'server';
  return new TerminalError(
    'PROTOCOL_MISMATCH',
    `agent-pty engine protocol mismatch: the ${local} speaks version ${mine}, the ${peer} speaks version ${String(theirs)}; install the same agent-pty version on both ends`,
  );
}
