/**
 * The daemon's engine as `mcp --daemon` uses it (SPEC §12): when the daemon dies, the sessions it had
 * fail with `TRANSPORT_CLOSED` (their processes died with it), and the next spawn, list or attach
 * starts or reconnects the daemon through `connect` instead of failing for good.
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

  async spawn(options?: SpawnOptions, signal?: AbortSignal): Promise<TerminalSession> {
    return (await this.live()).spawn(options, signal);
  }

  sessions(): TerminalSession[] {
    return this.current.sessions();
  }

  async list(): Promise<SessionListing[]> {
    return (await this.live()).list();
  }

  async attach(target: AttachTarget, options?: { steal?: boolean }): ReturnType<RemoteEngine['attach']> {
    return (await this.live()).attach(target, options);
  }

  close(options?: CloseOptions): Promise<void> {
    this.closing ??= (async () => {
      // A reconnect under way finishes first, so the engine it makes is the one closed here.
      await this.reconnecting?.catch(() => undefined);
      await this.current.close(options);
    })();
    return this.closing;
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
