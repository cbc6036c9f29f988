/**
 * The daemon's engine as `mcp --daemon` uses it (SPEC §12): when the daemon dies, the sessions it had
 * fail with `TRANSPORT_CLOSED` (their processes died with it), and the next spawn, list or attach
 * starts or reconnects the daemon through `connect` instead of failing for good — also when the death
 * is seen only by that call's own failure.
 */
import { TerminalError } from '../../shared/errors.js';
import type {
  CloseOptions,
  PtyEngine,
  SessionListing,
  SpawnOptions,
  TerminalSession,
} from '../../shared/types.js';
import type { AttachTarget, RemoteEngine } from '../worlds/remote-engine.js';

/** A daemon engine that reconnects after its link died. */
export interface ReconnectingDaemonEngine extends PtyEngine {
  /** Reattaches a session of the daemon (see {@link RemoteEngine.attach}). */
  attach(target: AttachTarget, options?: { steal?: boolean }): ReturnType<RemoteEngine['attach']>;
}

/** Connects once now (rejecting as `connect` does) and again whenever the link has died. */
export async function createReconnectingDaemonEngine(
  connect: () => Promise<RemoteEngine>,
): Promise<ReconnectingDaemonEngine> {
  return new Reconnecting(await connect(), connect);
}

class Reconnecting implements ReconnectingDaemonEngine {
  private reconnecting: Promise<RemoteEngine> | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private current: RemoteEngine,
    private readonly connect: () => Promise<RemoteEngine>,
  ) {}

  spawn(options?: SpawnOptions, signal?: AbortSignal): Promise<TerminalSession> {
    // Sent again only to a new daemon: over a cut link to a daemon still alive, the spawn may have run.
    return this.onLiveLink((engine) => engine.spawn(options, signal), 'to-a-new-daemon');
  }

  sessions(): TerminalSession[] {
    return this.current.sessions();
  }

  list(): Promise<SessionListing[]> {
    return this.onLiveLink((engine) => engine.list(), 'always');
  }

  attach(target: AttachTarget, options?: { steal?: boolean }): ReturnType<RemoteEngine['attach']> {
    return this.onLiveLink((engine) => engine.attach(target, options), 'always');
  }

  close(options?: CloseOptions): Promise<void> {
    this.closing ??= (async () => {
      // A reconnect under way finishes first, so the engine it makes is the one closed here.
      await this.reconnecting?.catch(() => undefined);
      await this.current.close(options);
    })();
    return this.closing;
  }

  /**
   * Runs `call` on the live link; when the link dies under it, reconnects and runs it once more.
   * Why: a daemon killed a moment ago is noticed by this process when its socket's end is read, and
   * that read and a tool call's request are two events here, in either order — so the first call
   * after the death may go out on the dead link and fail `TRANSPORT_CLOSED` (seen in CI: a
   * `terminal_open` right after a SIGKILL of the daemon failed instead of starting a new one).
   * `to-a-new-daemon` repeats it only when the new connection is to another daemon process (the old
   * one is gone with everything it ran), never over a link cut to a daemon that may have run it.
   */
  private async onLiveLink<T>(
    call: (engine: RemoteEngine) => Promise<T>,
    repeat: 'always' | 'to-a-new-daemon',
  ): Promise<T> {
    const engine = await this.live();
    try {
      return await call(engine);
    } catch (error) {
      const linkDied =
        (error as { code?: unknown }).code === 'TRANSPORT_CLOSED' && engine.transportError !== undefined;
      if (!linkDied || this.closing !== undefined) throw error;
      const next = await this.live();
      if (repeat === 'to-a-new-daemon' && next.serverPid === engine.serverPid) throw error;
      return call(next);
    }
  }

  /** The engine over a live link: the current one, or a new one once the daemon link died. */
  private live(): Promise<RemoteEngine> {
    if (this.closing !== undefined) {
      return Promise.reject(new TerminalError('ENGINE_CLOSED', 'the engine is closed'));
    }
    if (this.current.transportError === undefined) return Promise.resolve(this.current);
    // One reconnect at a time: concurrent calls after the death share it. A failed one is not kept,
    // so the next call tries again (the daemon may have been started meanwhile).
    this.reconnecting ??= (async () => {
      try {
        await this.current.close().catch(() => undefined);
        const next = await this.connect();
        this.current = next;
        return next;
      } finally {
        this.reconnecting = undefined;
      }
    })();
    return this.reconnecting;
  }
}
