/**
 * The watch page's source for `agent-pty watch` (SPEC §13): the daemon's sessions of every scope, seen
 * through a watcher connection (daemon-viewer.ts), so the page lists them without attaching any — the
 * model's client keeps its sessions, and a hold taken here gates its sends inside the daemon, where the
 * session's keyboard lives (engine/keyboard-hold.ts).
 */
import type { DaemonViewer, ViewedSession } from '../worlds/daemon-viewer.js';
import { limitsInWords, statusInWords } from './session-overview.js';
import type { WatchedSession } from './watch-protocol.js';
import type { WatchSource } from './watch-source.js';

/** The source of a daemon viewer's sessions. */
export function daemonWatchSource(viewer: DaemonViewer): WatchSource {
  /** The sessions of the last listing; ids never repeat, so a closed one's handle is never reused. */
  let known = new Map<string, ViewedSession>();
  return {
    overview: async () => {
      const listings = await viewer.list();
      const next = new Map<string, ViewedSession>();
      for (const listing of listings)
        next.set(listing.id, known.get(listing.id) ?? viewer.session(listing.id));
      known = next;
      return listings.map(
        (listing): WatchedSession => ({
          id: listing.id,
          name: listing.name,
          mode: listing.mode,
          ...(listing.workspaceRoot === undefined ? {} : { workspace: listing.workspaceRoot }),
          containment: listing.status.containment,
          foreground: listing.foreground,
          busy: listing.busy,
          limits: limitsInWords(listing.status.limits),
          status: statusInWords(listing.status),
          heldSince: listing.heldSince,
        }),
      );
    },
    session: (id) => known.get(id),
  };
}
