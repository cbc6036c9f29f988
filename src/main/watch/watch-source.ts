/**
 * What the watch server watches (SPEC §13): the sessions to list, and each one's raw channel, snapshot
 * and keyboard. An engine's own sessions (session-overview.ts, for `mcp --watch`), or a daemon's seen
 * through a watcher connection (daemon-watch-source.ts), which lists every scope without attaching any.
 */
import type { RawSession } from './viewer-connection.js';
import type { WatchedSession } from './watch-protocol.js';

/** A source of sessions for the page. */
export interface WatchSource {
  /** The sessions as the page lists them (a closed one is left out). */
  overview(): Promise<WatchedSession[]>;
  /** The live session `id` to view, if it is one of the last overview's. */
  session(id: string): RawSession | undefined;
}
