/**
 * One error class for the whole engine. Callers tell errors apart by `code`, never by message text.
 * The codes are a closed union so a harness can switch over them exhaustively.
 */

/** Stable error codes. Adding one is an API change; renaming one is a breaking change. */
export type TerminalErrorCode =
  /** A second send was started while one is still active on the session. */
  | 'SEND_ACTIVE'
  /** The session was closed (or is closing) and cannot take this call. */
  | 'SESSION_CLOSED'
  /** No session with this id exists for this owner (`unknown PTY session`). */
  | 'UNKNOWN_SESSION'
  /** The engine was closed; no further sessions can be spawned. */
  | 'ENGINE_CLOSED'
  /** The engine thread that hosted the session died; the session is gone. */
  | 'ENGINE_THREAD_DIED'
  /** The shell could not be started. */
  | 'SPAWN_FAILED'
  /** The shell did not reach a proven prompt before `timeoutMs`. */
  | 'SPAWN_TIMEOUT'
  /** The shell exited before its startup completed. */
  | 'SPAWN_EXITED'
  /** Configuration or options failed validation (the message names the field). */
  | 'INVALID_CONFIG'
  /** A call's arguments failed validation (the message says what to pass instead). */
  | 'INVALID_ARGUMENT'
  /** A signal was refused by policy (e.g. SIGKILL aimed at the shell's own process group). */
  | 'SIGNAL_REFUSED'
  /** Delivering a signal failed at the OS level. */
  | 'SIGNAL_FAILED'
  /** Writing input to the terminal failed. */
  | 'WRITE_FAILED'
  /** A send's input is larger than `maxInputBytes`; nothing of it was written. */
  | 'INPUT_TOO_LARGE'
  /** The requested sandbox mode cannot be enforced on this machine. */
  | 'SANDBOX_UNAVAILABLE'
  /** A sandbox mode change was rejected because the owner has open sessions or spawns. */
  | 'MODE_CHANGE_FENCED'
  /** Teardown could not verify that every process of the session is gone. */
  | 'CLEANUP_FAILED'
  /** The shell's launcher could not join the session's cgroup; the shell was never run (uncontained). */
  | 'CONTAINMENT_FAILED'
  /** A `keys` send named a key that does not exist (the message lists the valid names). */
  | 'UNKNOWN_KEY'
  /** Input was refused by policy: `C-c`, `C-z` or `C-\` (as a key or inside text) while no full-screen program owns the terminal. */
  | 'KEY_REFUSED'
  /** A count limit was reached: the engine's `maxSessions`, or an MCP connection's `--max-sessions`. */
  | 'SESSION_LIMIT'
  /** A session `name` is already open in this engine (or, on a daemon, in the client's scope). */
  | 'NAME_TAKEN'
  /** The session is attached to another client of the daemon; attach with `steal` to take it (SPEC §12). */
  | 'SESSION_ATTACHED'
  /** The operation was aborted by the caller. */
  | 'ABORTED'
  /** The link to an execution world (SPEC §10) closed, was cut or stopped answering; the call's outcome is unknown. */
  | 'TRANSPORT_CLOSED'
  /** The two ends of an execution world's link speak different protocol versions (the message names both). */
  | 'PROTOCOL_MISMATCH'
  /** A person holds the session's keyboard (SPEC §13): the model's signal, keys and resize wait for hand-back. */
  | 'HUMAN_HOLDS'
  /** An invariant broke inside the engine; this is a bug. */
  | 'INTERNAL';

/** Options of {@link TerminalError}. */
export interface TerminalErrorOptions {
  /** The underlying failure, preserved across the thread boundary. */
  cause?: unknown;
}

/** The error every engine API rejects with. */
export class TerminalError extends Error {
  /** Stable machine-readable code. */
  readonly code: TerminalErrorCode;

  constructor(code: TerminalErrorCode, message: string, options: TerminalErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TerminalError';
    this.code = code;
  }
}

/**
 * A spawn was cancelled (or failed) and closing the unpublished shell failed too. Both failures are
 * kept: `cause` is the original reason (the caller's exact abort reason), `cleanupError` the teardown.
 */
export class TerminalBackendCleanupError extends TerminalError {
  /** Why closing the unpublished shell failed. */
  readonly cleanupError: unknown;

  constructor(message: string, cause: unknown, cleanupError: unknown) {
    super('CLEANUP_FAILED', message, { cause });
    this.name = 'TerminalBackendCleanupError';
    this.cleanupError = cleanupError;
  }
}

/** True when `error` is a {@link TerminalError}, optionally with the given code. */
export function isTerminalError(error: unknown, code?: TerminalErrorCode): error is TerminalError {
  return error instanceof TerminalError && (code === undefined || error.code === code);
}

/** The message of any thrown value, for logs and error text. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
