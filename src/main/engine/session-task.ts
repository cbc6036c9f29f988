/**
 * What the engine keeps of one session task (SPEC §2: one long-lived Piscina task per session), from
 * the moment it is queued on a thread until the task has ended and its published session is closed:
 * one record per session instead of parallel maps keyed by its id. Each field says when it is set and
 * when it is cleared; the record is forgotten once it is `finished`.
 */
import type { TerminalError } from '../../shared/errors.js';
import type { ThreadFaultKind } from '../../shared/protocol.js';
import type { SessionRecording } from './session-recording.js';
import type { ThreadSession } from './thread-session.js';

/** Where a session task runs, and how the host declares it dead. */
export interface TaskPlacement {
  /** The engine thread's id, known once the session launched. */
  threadId: number | undefined;
  /** Rejects the session's `death` (idempotent: a promise settles once). */
  declareDead: (error: TerminalError) => void;
}

/** One session task of the engine. */
export class SessionTask {
  /**
   * Where the task runs; cleared once the task ended or its thread was declared dead (so no thread's
   * death is declared twice).
   */
  placement: TaskPlacement | undefined;
  /**
   * How to close the task again while it runs in a thread: set once it launched (the unpublished shell's
   * close, then the published session's); cleared once the task ended. A thread must never be
   * terminated while a pty child of it is alive, so `engine.close()` finishes every one of these first.
   */
  closeAgain: (() => Promise<unknown>) | undefined;
  /** How to crash its thread (only with a fault plan); cleared once the task ended. */
  crash: ((kind: ThreadFaultKind) => Promise<void>) | undefined;
  /** The session handed to the caller, until it is closed. */
  session: ThreadSession | undefined;
  /** Its recording (SPEC §13), when the spawn asked for one; closed with the session. */
  recording: SessionRecording | undefined;
  /** Whether the Piscina task still runs. */
  running = true;

  constructor(
    readonly id: string,
    placement: TaskPlacement,
  ) {
    this.placement = placement;
  }

  /** The task ended and its session (if it was ever published) is closed: the engine forgets it. */
  get finished(): boolean {
    return !this.running && this.session === undefined;
  }

  /** The task ended: nothing of it runs in a thread any more. */
  ended(): void {
    this.running = false;
    this.placement = undefined;
    this.closeAgain = undefined;
    this.crash = undefined;
  }
}
