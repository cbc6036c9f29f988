/**
 * `createRemoteEngine({ command })` (SPEC §10) and `createRemoteEngine({ socket })` (SPEC §12): the
 * engine API over a world's link. The command's stdin/stdout must reach `agent-pty serve --stdio` —
 * locally, over `ssh`, `kubectl exec -i` or `docker exec -i`; the socket is an `agent-pty daemon`'s.
 * Sessions, sends, live output and coded errors behave as with `createPtyEngine`; what the link adds is
 * `TRANSPORT_CLOSED` when it dies. Over a daemon's socket, sessions outlive the client: `close()`
 * detaches them, `attach()` takes one up again, `shutdown()` closes them.
 */
import { connect } from 'node:net';
import { describeError, TerminalBackendCleanupError, TerminalError } from '../../shared/errors.js';
import { DisposableStore } from '../../shared/lifecycle.js';
import type { PtyEngine, SandboxSelection, SessionListing, SpawnOptions } from '../../shared/types.js';
import {
  type AttachedSession,
  DAEMON_PROTOCOL_VERSION,
  type SpawnedSession,
} from '../../shared/world-protocol.js';
import { checkSocketDirectory } from './socket-directory.js';
import { WorldClient, type WorldHelloOptions } from './world-client.js';
import { WorldSession } from './world-session.js';
import { socketTransport, type WorldTransport } from './world-transport.js';

/** Options of {@link createRemoteEngine} over a transport command. */
export interface CommandEngineOptions {
  /**
   * argv of the transport command, whose stdin/stdout reach `agent-pty serve --stdio`, e.g.
   * `['ssh', 'build-box', 'agent-pty', 'serve', '--stdio']`.
   */
  command: readonly string[];
  /** Extra environment variables for the command (added to this process's environment). */
  env?: Record<string, string>;
  /** Configuration of the far engine (SPEC §3: timeouts, scrollback, shell), validated there. */
  config?: Record<string, unknown>;
}

/** Options of {@link createRemoteEngine} over a daemon's socket (SPEC §12). */
export interface SocketEngineOptions {
  /** The daemon's Unix socket (its directory must be this uid's, mode 0700). */
  socket: string;
  /**
   * This client's sandbox policy: the daemon shows it only sessions of the same mode and workspace
   * root, and runs its spawns under it. Without one it sees and spawns only unconfined sessions.
   */
  scope?: Pick<SandboxSelection, 'mode' | 'workspaceRoot'>;
}

/** Options of {@link createRemoteEngine}. */
export type RemoteEngineOptions = CommandEngineOptions | SocketEngineOptions;

/** What a remote engine tells beyond the engine API. */
export interface RemoteEngineInternals {
  /** Pid of the `serve --stdio` process (or the daemon) on the far side. */
  readonly serverPid: number;
  /** The error the link died with, or undefined while it is alive. */
  readonly transportError: TerminalError | undefined;
}

/** Which session `attach` takes up: by name (in this client's scope) or by id. */
export type AttachTarget = { name: string } | { id: string };

/** The daemon's API beyond the engine API (SPEC §12). */
export interface DaemonEngineApi {
  /**
   * Attaches a running session of this client's scope; `SESSION_ATTACHED` while another client holds
   * it, unless `steal` (that client is told). The session's `reattach` says what happened meanwhile.
   */
  attach(target: AttachTarget, options?: { steal?: boolean }): Promise<WorldSession>;
  /** Closes every session of this client's scope, then the link. */
  shutdown(): Promise<void>;
}

/** A remote engine: its sessions can also detach (SPEC §12). */
export interface RemoteEngine extends PtyEngine, RemoteEngineInternals, DaemonEngineApi {
  spawn(options?: SpawnOptions, signal?: AbortSignal): Promise<WorldSession>;
  sessions(): WorldSession[];
}

/**
 * Connects: resolves once the far engine is up. Rejects with `PROTOCOL_MISMATCH` (naming both
 * ranges), the far side's coded refusal (`INVALID_CONFIG`), `INVALID_CONFIG` for a socket directory
 * that is not this user's alone, or `TRANSPORT_CLOSED` (saying why); nothing is left running then.
 */
export async function createRemoteEngine(options: RemoteEngineOptions): Promise<RemoteEngine> {
  if ('socket' in options) {
    const client = await connectSocket(options);
    return new RemoteEngineClient(client, options.scope);
  }
  return new RemoteEngineClient(await WorldClient.connect(options), undefined, false);
}

async function connectSocket(options: SocketEngineOptions): Promise<WorldClient> {
  return connectDaemonSocket(options.socket, options.scope === undefined ? {} : { scope: options.scope });
}

/**
 * Connects to the daemon on `socketPath` and shakes hands. The socket's directory is checked first
 * (socket-directory.ts): a directory another user controls could hold their socket, not the daemon's.
 */
export async function connectDaemonSocket(
  socketPath: string,
  hello: WorldHelloOptions,
): Promise<WorldClient> {
  if (checkSocketDirectory(socketPath) === 'missing') {
    throw new TerminalError(
      'TRANSPORT_CLOSED',
      `no agent-pty daemon answers on ${socketPath}: its directory does not exist (start one with agent-pty daemon)`,
    );
  }
  const socket = connect(socketPath);
  // The connect wait's listeners: released once the transport listens on the socket itself (a later
  // error then meets the transport's listener, never this wait's).
  const connecting = new DisposableStore();
  let transport: WorldTransport;
  try {
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => {
        socket.destroy();
        reject(
          new TerminalError(
            'TRANSPORT_CLOSED',
            `no agent-pty daemon answers on ${socketPath}: ${describeError(error)} (start one with agent-pty daemon)`,
            { cause: error },
          ),
        );
      };
      connecting.listen('daemon connect listener', socket, 'connect', resolve, { once: true });
      connecting.listen('daemon connect listener', socket, 'error', onError, { once: true });
    });
    transport = socketTransport(socket);
  } finally {
    connecting.dispose();
  }
  return WorldClient.over(transport, hello, 'agent-pty daemon link');
}

class RemoteEngineClient implements RemoteEngine {
  private readonly live = new Map<string, WorldSession>();
  private closing: Promise<void> | undefined;

  constructor(
    private readonly client: WorldClient,
    private readonly scope: SocketEngineOptions['scope'],
    /** Over a daemon: sessions outlive this client, and spawns carry its environment and cwd. */
    private readonly daemon = true,
  ) {
    client.onClosed(() => {
      for (const session of [...this.live.values()]) session.release();
      // Reaps the command (and its pipes) whether or not anyone calls close().
      void client.terminate();
    });
  }

  get serverPid(): number {
    return this.client.farPid;
  }

  get transportError(): TerminalError | undefined {
    return this.client.closedWith;
  }

  sessions(): WorldSession[] {
    return [...this.live.values()];
  }

  async list(): Promise<SessionListing[]> {
    if (this.client.protocol >= DAEMON_PROTOCOL_VERSION)
      return this.client.call<SessionListing[]>('list', {});
    // A version-1 world serves only this client: its sessions are exactly our handles.
    return Promise.all(
      [...this.live.values()].map(async (session) => ({
        id: session.id,
        name: session.name,
        attached: true,
        pid: session.pid,
        status: await session.status(),
        busy: session.busy,
        mode: session.sandbox?.mode ?? 'unconfined',
      })),
    );
  }

  async spawn(options: SpawnOptions = {}, signal?: AbortSignal): Promise<WorldSession> {
    if (this.closing !== undefined) throw new TerminalError('ENGINE_CLOSED', 'the engine is closed');
    signal?.throwIfAborted();
    let spawned: SpawnedSession;
    try {
      spawned = await this.client.call<SpawnedSession>(
        'spawn',
        { options: this.spawnOptions(options) },
        signal,
      );
    } catch (error) {
      // The far engine closed the unpublished shell; the caller gets its own abort reason.
      if (signal?.aborted) throw signal.reason;
      throw error;
    }
    const session = this.adopt(spawned, undefined);
    if (signal?.aborted) {
      // Race: the abort reached the far side after its spawn had finished. Nobody has the session yet.
      try {
        await session.close('spawn aborted');
      } catch (cleanupError) {
        throw new TerminalBackendCleanupError(
          `spawn aborted and closing the new session ${session.id} failed`,
          signal.reason,
          cleanupError,
        );
      }
      throw signal.reason;
    }
    return session;
  }

  async attach(target: AttachTarget, options: { steal?: boolean } = {}): Promise<WorldSession> {
    if (this.closing !== undefined) throw new TerminalError('ENGINE_CLOSED', 'the engine is closed');
    const attached = await this.client.call<AttachedSession>('attach', {
      ...('id' in target ? { id: target.id } : { name: target.name }),
      steal: options.steal === true,
    });
    const existing = this.live.get(attached.session.id);
    existing?.release();
    return this.adopt(attached.session, attached.report);
  }

  /** Over a daemon, detaches (its sessions run on); over a command, closes every session. */
  close(): Promise<void> {
    this.closing ??= this.end(!this.daemon);
    return this.closing;
  }

  shutdown(): Promise<void> {
    this.closing ??= this.end(true);
    return this.closing;
  }

  private async end(closeSessions: boolean): Promise<void> {
    let failure: unknown;
    if (closeSessions && this.client.closedWith === undefined) {
      try {
        await this.client.call('shutdown', {});
      } catch (error) {
        failure = error;
      }
    }
    for (const session of [...this.live.values()]) session.release();
    await this.client.terminate();
    // A link that died is no failure to close: its far side closed (or detached) everything on its own.
    if (failure !== undefined && !(failure instanceof TerminalError && failure.code === 'TRANSPORT_CLOSED')) {
      throw failure;
    }
  }

  /**
   * Over a daemon, a spawn carries this client's environment and cwd (the daemon scrubs the
   * environment and never uses its own, SPEC §12) and this client's scope as its sandbox.
   */
  private spawnOptions(options: SpawnOptions): SpawnOptions {
    if (!this.daemon) return options;
    const baseEnv: Record<string, string> = {};
    for (const [name, value] of Object.entries(process.env)) if (value !== undefined) baseEnv[name] = value;
    return {
      ...options,
      baseEnv: options.baseEnv ?? baseEnv,
      ...(options.sandbox === undefined && this.scope !== undefined ? { sandbox: { ...this.scope } } : {}),
      ...(options.cwd === undefined && options.sandbox === undefined && this.scope === undefined
        ? { cwd: process.cwd() }
        : {}),
    };
  }

  private adopt(spawned: SpawnedSession, report: AttachedSession['report'] | undefined): WorldSession {
    const session = new WorldSession(
      this.client,
      spawned,
      (closed) => {
        if (this.live.get(closed.id) === closed) this.live.delete(closed.id);
      },
      report,
    );
    this.live.set(session.id, session);
    return session;
  }
}
