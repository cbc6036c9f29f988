/**
 * `engine.list()` and name uniqueness of the in-process engine (SPEC §5, §12). In process every
 * session has exactly one client, the engine's caller: each listing says `attached: true`.
 */
import { TerminalError } from '../../shared/errors.js';
import { LIMITS_UNKNOWN } from '../../shared/session-limits.js';
import type { SessionListing, SessionStatus, TerminalSession } from '../../shared/types.js';

/** A session that can tell whether a send is in flight (the engine's own sessions can). */
export interface ListableSession extends TerminalSession {
  readonly busy: boolean;
  /** When a person took the keyboard, while one holds it (SPEC §13). */
  readonly heldSince?: number | undefined;
  /** What held the terminal at the last result, when one was seen. */
  readonly lastForeground?: { command: string } | undefined;
}

/** One listing per session; a session that cannot answer (its thread died) is listed exited. */
export function listSessions(sessions: Iterable<ListableSession>): Promise<SessionListing[]> {
  return Promise.all(
    [...sessions].map(async (session) => ({
      id: session.id,
      name: session.name,
      attached: true,
      pid: session.pid,
      status: await statusOrExited(session),
      busy: session.busy,
      mode: session.sandbox?.mode ?? 'unconfined',
      dialect: session.dialect,
      ...(session.heldSince === undefined ? {} : { heldSince: session.heldSince }),
      ...(session.lastForeground === undefined ? {} : { foreground: session.lastForeground.command }),
    })),
  );
}

/**
 * Refuses a `name` already held by a session in `sessions`, or by a spawn in progress (`reserved`):
 * names are how a client finds a session again, so two sessions may never share one.
 */
export function assertNameFree(
  name: string | undefined,
  sessions: Iterable<TerminalSession>,
  reserved: ReadonlySet<string>,
): void {
  if (name === undefined) return;
  let taken = reserved.has(name);
  for (const session of sessions) taken ||= session.name === name;
  if (taken) {
    throw new TerminalError('NAME_TAKEN', `a session named "${name}" is already open; pick another name`);
  }
}

/**
 * The session's status, or exited when it cannot answer: its thread died, or it closed while the
 * listing was being made (a close racing a `list()` must not fail the whole listing).
 */
export async function statusOrExited(session: TerminalSession): Promise<SessionStatus> {
  try {
    return await session.status();
  } catch (threadGone) {
    void threadGone; // a session whose thread died is exited for every purpose of a listing
    return {
      kind: 'exited',
      exitCode: null,
      signal: null,
      containment: 'process-tree',
      limits: LIMITS_UNKNOWN,
    };
  }
}
