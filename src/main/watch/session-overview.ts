/**
 * What the watch page lists for a session (SPEC §13): name, mode, containment, foreground, busy and
 * limits. Busy, foreground and the hold come from the host-side handle where it keeps them
 * (`ThreadSession`); a handle that does not is listed without them.
 */
import type { SessionLimits, SessionStatus, TerminalSession } from '../../shared/types.js';
import type { WatchedSession } from './watch-protocol.js';
import type { WatchSource } from './watch-source.js';

/** What the server watches of an in-process engine (`mcp --watch`): its sessions. */
export interface WatchedEngine {
  sessions(): TerminalSession[];
}

/** The watch source of an engine: its own sessions, listed with {@link overviewOf}. */
export function engineWatchSource(engine: WatchedEngine): WatchSource {
  return {
    overview: async () =>
      (await Promise.all(engine.sessions().map(overviewOf))).filter(
        (entry): entry is WatchedSession => entry !== undefined,
      ),
    session: (id) => engine.sessions().find((session) => session.id === id),
  };
}

/** What a host-side handle may tell beyond `TerminalSession` (an in-process engine's handle does). */
interface SessionActivity {
  readonly busy?: boolean;
  readonly heldSince?: number;
  readonly lastForeground?: { command: string };
}

/** `session` as the page lists it; undefined once it is closed. */
export async function overviewOf(session: TerminalSession): Promise<WatchedSession | undefined> {
  let status: Awaited<ReturnType<TerminalSession['status']>>;
  try {
    status = await session.status();
  } catch {
    return undefined; // closed meanwhile: it leaves the list
  }
  const activity = session as TerminalSession & SessionActivity;
  return {
    id: session.id,
    name: session.name,
    mode: session.sandbox?.mode ?? 'unconfined',
    containment: status.containment,
    foreground: activity.lastForeground?.command,
    busy: activity.busy === true,
    limits: limitsInWords(status.limits),
    status: statusInWords(status),
    heldSince: activity.heldSince,
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
