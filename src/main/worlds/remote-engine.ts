/**
 * `createRemoteEngine({ command })` (SPEC §10): the engine API over a world's link. The command's
 * stdin/stdout must reach `agent-pty serve --stdio` — locally, over `ssh`, `kubectl exec -i` or
 * `docker exec -i`. Sessions, sends, live output and coded errors behave as with `createPtyEngine`;
 * what the link adds is `TRANSPORT_CLOSED` when it dies.
 */
import { TerminalBackendCleanupError, TerminalError } from '../../shared/errors.js';
import type { PtyEngine, SpawnOptions, TerminalSession } from '../../shared/types.js';
import type { SpawnedSession } from '../../shared/world-protocol.js';
import { WorldClient } from './world-client.js';
import { WorldSession } from './world-session.js';

/** Options of {@link createRemoteEngine}. */
export interface RemoteEngineOptions {
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

/** What a remote engine tells beyond the engine API. */
export interface RemoteEngineInternals {
  /** Pid of the `serve --stdio` process on the far side. */
  readonly serverPid: number;
  /** The error the link died with, or undefined while it is alive. */
  readonly transportError: TerminalError | undefined;
}

/**
 * Starts the command and connects: resolves once the far engine is up. Rejects with
 * `PROTOCOL_MISMATCH` (naming both versions), the far side's coded refusal (`INVALID_CONFIG`), or
 * `TRANSPORT_CLOSED` (with the command's stderr); nothing is left running then.
 */
export async function createRemoteEngine(
  options: RemoteEngineOptions,
): Promise<PtyEngine & RemoteEngineInternals> {
  const client = await WorldClient.connect(options);
  return new RemoteEngine(client);
}

class RemoteEngine implements PtyEngine, RemoteEngineInternals {
  private readonly live = new Map<string, WorldSession>();
  private closing: Promise<void> | undefined;

  constructor(private readonly client: WorldClient) {
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

  sessions(): TerminalSession[] {
    return [...this.live.values()];
  }

  async spawn(options: SpawnOptions = {}, signal?: AbortSignal): Promise<TerminalSession> {
    if (this.closing !== undefined) throw new TerminalError('ENGINE_CLOSED', 'the engine is closed');
    signal?.throwIfAborted();
    let spawned: SpawnedSession;
    try {
      spawned = await this.client.call<SpawnedSession>('spawn', { options }, signal);
    } catch (error) {
      // The far engine closed the unpublished shell; the caller gets its own abort reason.
      if (signal?.aborted) throw signal.reason;
      throw error;
    }
    const session = new WorldSession(this.client, spawned, (closed) => this.live.delete(closed.id));
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
    this.live.set(session.id, session);
    return session;
  }

  /** Closes every session (the far engine closes them), then ends the link and the command. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      let failure: unknown;
      if (this.client.closedWith === undefined) {
        try {
          await this.client.call('shutdown', {});
        } catch (error) {
          failure = error;
        }
      }
      for (const session of [...this.live.values()]) session.release();
      await this.client.terminate();
      // A link that died is no failure to close: its far side closed everything on its own.
      if (
        failure !== undefined &&
        !(failure instanceof TerminalError && failure.code === 'TRANSPORT_CLOSED')
      ) {
        throw failure;
      }
    })();
    return this.closing;
  }
}
