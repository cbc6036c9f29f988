/**
 * `connectDaemonViewer({ socket })`: a watcher's connection to the per-user daemon (SPEC §12, §13), what
 * `agent-pty watch` shows. Unlike `createRemoteEngine({ socket })` it attaches nothing: it lists every
 * session of every scope and views one by id — its snapshot, its raw channel, its keyboard — while the
 * client that uses the session keeps it. It cannot spawn, send, signal or close (the daemon refuses
 * those on a watcher connection), so a person's page never takes a session from the model using it.
 */
import { TerminalError } from '../../shared/errors.js';
import type {
  KeyboardHold,
  RawChunk,
  RawView,
  TakeKeyboardOptions,
  TerminalSnapshot,
} from '../../shared/types.js';
import { DAEMON_PROTOCOL_VERSION, type WatchedListing } from '../../shared/world-protocol.js';
import { openFarRaw, takeFarKeyboard } from './far-session-views.js';
import { connectDaemonSocket } from './remote-engine.js';
import type { WorldClient } from './world-client.js';

/** One session as a watcher sees it: what SPEC §13 lets a viewer do, nothing else. */
export interface ViewedSession {
  readonly id: string;
  snapshot(): Promise<TerminalSnapshot>;
  openRaw(listener: (chunk: RawChunk) => void): Promise<RawView>;
  takeKeyboard(options: TakeKeyboardOptions): Promise<KeyboardHold>;
}

/** A watcher's connection to the daemon. */
export interface DaemonViewer {
  /** Every session of the daemon, of every scope, each with its mode and workspace. */
  list(): Promise<WatchedListing[]>;
  /** The session `id` to view (calls on a closed or unknown one reject with `UNKNOWN_SESSION`). */
  session(id: string): ViewedSession;
  /** Calls `listener` once when the connection ends (the daemon stopped, or {@link close}). */
  onClosed(listener: (error: TerminalError) => void): void;
  /** Ends the connection: its views close and its holds are handed back. */
  close(): Promise<void>;
}

/**
 * Connects to the daemon on `socket` as a watcher. Rejects like `createRemoteEngine({ socket })` does
 * (the socket directory's check, `TRANSPORT_CLOSED` when nobody answers), and with `PROTOCOL_MISMATCH`
 * when the far side speaks only version 1 (it has no watchers).
 */
export async function connectDaemonViewer(options: { socket: string }): Promise<DaemonViewer> {
  const client = await connectDaemonSocket(options.socket, { role: 'watcher' });
  if (client.protocol < DAEMON_PROTOCOL_VERSION) {
    await client.terminate();
    throw new TerminalError(
      'PROTOCOL_MISMATCH',
      `the agent-pty on ${options.socket} speaks protocol version ${client.protocol}; watching needs version ${DAEMON_PROTOCOL_VERSION} (upgrade the daemon)`,
    );
  }
  return new Viewer(client);
}

class Viewer implements DaemonViewer {
  constructor(private readonly client: WorldClient) {
    // Reaps the transport whether or not anyone calls close().
    client.onClosed(() => void client.terminate());
  }

  list(): Promise<WatchedListing[]> {
    return this.client.call<WatchedListing[]>('list', {});
  }

  session(id: string): ViewedSession {
    const call = <T>(op: Parameters<WorldClient['call']>[0], args: Record<string, unknown>) =>
      this.client.call<T>(op, { session: id, ...args });
    return {
      id,
      snapshot: () => call<TerminalSnapshot>('snapshot', {}),
      openRaw: (listener) => openFarRaw(this.client, call, listener),
      takeKeyboard: (options) => takeFarKeyboard(this.client, call, options),
    };
  }

  onClosed(listener: (error: TerminalError) => void): void {
    this.client.onClosed(listener);
  }

  close(): Promise<void> {
    return this.client.terminate();
  }
}
