/**
 * The messages between the watch page (or `agent-pty attach`) and the watch server, one JSON object
 * per WebSocket text frame. The page only ever sees sessions, screens and hold states; what a person
 * types travels one way (`key`) and is never echoed back by the server.
 */
import type { HoldEnd, TerminalSnapshot } from '../../shared/types.js';

/** One session as the page lists it. */
export interface WatchedSession {
  id: string;
  name: string | undefined;
  /** The sandbox mode, or `unconfined`. */
  mode: string;
  /** The sandbox's workspace root, where the page shows sessions of several (`agent-pty watch`). */
  workspace?: string;
  containment: string;
  /** What held the terminal at the model's last result, when known. */
  foreground: string | undefined;
  /** A send of the model is in flight. */
  busy: boolean;
  /** The session's limits in words (memory and pids, and what enforces them). */
  limits: string;
  /** `running`, or `exited` with its code. */
  status: string;
  /** When a person took the keyboard, while one holds it. */
  heldSince: number | undefined;
}

/** A finished session's recording the page can replay. */
export interface RecordingEntry {
  /** File name under the recordings directory. */
  file: string;
  /** Size in bytes. */
  bytes: number;
  /** Last modified (ms since the epoch). */
  modifiedAt: number;
}

/** From the page to the server. */
export type ViewerMessage =
  /** Start showing session `id`: the server answers with a snapshot, then the raw channel. */
  | { t: 'watch'; id: string }
  | { t: 'unwatch'; id: string }
  /** Take the keyboard of `id` (`force` takes it from another viewer, who is told). */
  | { t: 'take'; id: string; force?: boolean }
  /** Hand the keyboard back. */
  | { t: 'release'; id: string }
  /** The person's keys, for a session this viewer holds. */
  | { t: 'key'; id: string; data: string }
  /** Keeps this viewer's holds alive (SPEC §13: 30 s without one ends a hold). */
  | { t: 'beat' };

/** From the server to the page. */
export type ServerMessage =
  | { t: 'sessions'; sessions: WatchedSession[]; recordings: RecordingEntry[] }
  /** Draw this first (reset the terminal to `snapshot.rows` × `snapshot.cols`, then write `ansi`). */
  | { t: 'snapshot'; id: string; snapshot: TerminalSnapshot }
  /** Raw output of the session, after the snapshot. */
  | { t: 'out'; id: string; data: string }
  /** Who holds the keyboard of `id` now, as seen by this viewer. */
  | { t: 'hold'; id: string; state: 'mine' | 'other' | 'free'; since?: number; ended?: HoldEnd }
  /** A take was refused (the message says by whom and since when). */
  | { t: 'refused'; id: string; message: string }
  /** The session is gone. */
  | { t: 'gone'; id: string };

/** Parses a frame from a viewer; undefined for anything that is not a known message. */
export function parseViewerMessage(text: string): ViewerMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const message = value as Record<string, unknown>;
  const id = message.id;
  switch (message.t) {
    case 'beat':
      return { t: 'beat' };
    case 'watch':
    case 'unwatch':
    case 'release':
      return typeof id === 'string' ? { t: message.t, id } : undefined;
    case 'take':
      return typeof id === 'string' ? { t: 'take', id, force: message.force === true } : undefined;
    case 'key':
      return typeof id === 'string' && typeof message.data === 'string'
        ? { t: 'key', id, data: message.data }
        : undefined;
    default:
      return undefined;
  }
}
