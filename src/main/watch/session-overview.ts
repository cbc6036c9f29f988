/**
 * What the watch page lists for a session (SPEC §13): name, mode, containment, foreground, busy and
 * limits. Busy, foreground and the hold come from the host-side handle where it keeps them
 * (`ThreadSession`); for a handle that does not (a daemon's session seen through `mcp --daemon`), from
 * the engine's listing, which the daemon fills from the handle it keeps.
 */
import type { SessionLimits, SessionListing, SessionStatus, TerminalSession } from '../../shared/types.js';
import type { WatchedSession } from './watch-protocol.js';
import type { WatchSource } from './watch-source.js';

/** What the server watches of an engine (`mcp --watch`): its sessions, and its listing when it has one. */
export interface WatchedEngine {
  sessions(): TerminalSession[];
  /** The engine's listing (`PtyEngine.list()`): the hold and busy state of sessions kept elsewhere. */
  list?(): Promise<SessionListing[]>;
}

/** A listing as an engine may give it: a daemon's may also say the foreground (as a watcher's does). */
type ListingWithForeground = SessionListing & { readonly foreground?: string };

/** The watch source of an engine: its own sessions, listed with {@link overviewOf}. */
export function engineWatchSource(engine: WatchedEngine): WatchSource {
  return {
    overview: async () => {
      const listings = await listingsOf(engine);
      return (
        await Promise.all(engine.sessions().map((session) => overviewOf(session, listings.get(session.id))))
      ).filter((entry): entry is WatchedSession => entry !== undefined);
    },
    session: (id) => engine.sessions().find((session) => session.id === id),
  };
}

/** The engine's listings by id; none when it has no listing or it fails (the page still lists the sessions). */
async function listingsOf(engine: WatchedEngine): Promise<Map<string, ListingWithForeground>> {
  if (engine.list === undefined) return new Map();
  try {
    const listings: ListingWithForeground[] = await engine.list();
    return new Map(listings.map((listing) => [listing.id, listing]));
  } catch {
    return new Map(); // closing, or the daemon went away: the sessions' own status says so
  }
}

/** What a host-side handle may tell beyond `TerminalSession` (an in-process engine's handle does). */
interface SessionActivity {
  readonly busy?: boolean;
  readonly heldSince?: number;
  readonly lastForeground?: { command: string };
}

/**
 * `session` as the page lists it; undefined once it is closed. What its handle does not keep comes
 * from `listing`, the engine's listing of it.
 */
export async function overviewOf(
  session: TerminalSession,
  listing?: ListingWithForeground,
): Promise<WatchedSession | undefined> {
  let status: Awaited<ReturnType<TerminalSession['status']>>;
  try {
    status = await session.status();
  } catch {
    return undefined; // closed meanwhile: it leaves the list
  }
  const activity = session as TerminalSession & SessionActivity;
  // A handle that keeps the hold (`ThreadSession`) knows it best; a remote handle has no such field.
  const keepsHold = 'heldSince' in activity;
  return {
    id: session.id,
    name: session.name,
    mode: session.sandbox?.mode ?? 'unconfined',
    containment: status.containment,
    foreground: activity.lastForeground?.command ?? listing?.foreground,
    busy: activity.busy === true || listing?.busy === true,
    limits: limitsInWords(status.limits),
    status: statusInWords(status),
    heldSince: keepsHold ? activity.heldSince : listing?.heldSince,
  };
}

/** `running`, or `exited (code N)`. */
export function statusInWords(status: SessionStatus): string {
  return status.kind === 'running' ? 'running' : `exited (code ${status.exitCode ?? 'none'})`;
}

/** `memory 2 GiB (cgroup v2), pids 512 (cgroup v2)`, or why a limit is not enforced. */
export function limitsInWords(limits: SessionLimits): string {
  const memory =
    'bytes' in limits.memory
      ? `memory ${mebibytes(limits.memory.bytes)} (${limits.memory.enforcedBy})`
      : 'memory not limited';
  const pids =
    'max' in limits.pids ? `pids ${limits.pids.max} (${limits.pids.enforcedBy})` : 'pids not limited';
  return `${memory}, ${pids}`;
}

function mebibytes(bytes: number): string {
  return bytes >= 1024 ** 3
    ? `${(bytes / 1024 ** 3).toFixed(1)} GiB`
    : `${Math.round(bytes / 1024 ** 2)} MiB`;
}
