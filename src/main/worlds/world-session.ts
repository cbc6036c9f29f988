/**
 * A `TerminalSession` whose shell runs in an execution world (SPEC §10): every method is a call over
 * the world's link, with the engine API's own request and result objects passed through unchanged.
 * Once the link is dead, calls reject with `TRANSPORT_CLOSED`; a `close()` then resolves at once, since
 * the far side closes every session of a link that ended.
 */

import { TerminalError } from '../../shared/errors.js';
import { LIMITS_UNKNOWN } from '../../shared/session-limits.js';
import { assertTerminalSize } from '../../shared/terminal-size.js';
import type {
  CloseOptions,
  Containment,
  Dialect,
  Disposable,
  KeyboardHold,
  OutputChunk,
  RawChunk,
  RawView,
  ReadRequest,
  ReadResult,
  ReattachReport,
  SandboxSelection,
  SendOperation,
  SendOutputDelta,
  SendRequest,
  SessionLimits,
  SessionOutcome,
  SessionStatus,
  SignalName,
  SignalResult,
  TakeKeyboardOptions,
  TerminalSendResult,
  TerminalSession,
  TerminalSize,
  TerminalSnapshot,
} from '../../shared/types.js';
import type { SpawnedSession, WorldOperation } from '../../shared/world-protocol.js';
import { openFarRaw, takeFarKeyboard } from './far-session-views.js';
import type { WorldClient } from './world-client.js';

/** A session in a world. */
export class WorldSession implements TerminalSession {
  readonly id: string;
  readonly name: string | undefined;
  readonly pid: number;
  readonly motd: string;
  readonly dialect: Dialect;
  readonly sandbox: SandboxSelection | undefined;

  /** What the daemon reported when this handle attached the session (SPEC §12); absent for a spawn. */
  readonly reattach: ReattachReport | undefined;

  private readonly listeners = new Set<(chunk: OutputChunk) => void>();
  private nextSendId = 1;
  private sendsInFlight = 0;
  private closeCall: Promise<SessionOutcome> | undefined;
  private closed = false;
  /** The containment the far side last reported; what a session of a dead link is said to have had. */
  private containment: Containment = 'process-tree';
  /** The limits the far side last reported, likewise. */
  private limits: SessionLimits = LIMITS_UNKNOWN;

  constructor(
    private readonly client: WorldClient,
    spawned: SpawnedSession,
    private readonly onClosed: (session: WorldSession) => void,
    reattach?: ReattachReport,
  ) {
    this.reattach = reattach;
    this.id = spawned.id;
    this.name = spawned.name;
    this.pid = spawned.pid;
    this.motd = spawned.motd;
    this.dialect = (spawned.dialect ?? 'bash') as Dialect;
    this.sandbox = spawned.sandbox as SandboxSelection | undefined;
    // The daemon took the session from this handle (stolen, or closed): later calls say so.
    client.routeEvents(this.id, { detached: () => this.release() });
  }

  /** True while a send of this handle has not settled. */
  get busy(): boolean {
    return this.sendsInFlight > 0;
  }

  /** Lets go of the session: it keeps running on the daemon for a later `attach` (SPEC §12). */
  async detach(): Promise<void> {
    if (this.closed) return;
    try {
      await this.call('detach', {});
    } finally {
      this.release();
    }
  }

  /** `session.snapshot()` of the far session (SPEC §13). */
  snapshot(): Promise<TerminalSnapshot> {
    return this.call<TerminalSnapshot>('snapshot', {});
  }

  /** `session.openRaw(listener)` of the far session (SPEC §13): its snapshot, then its raw chunks. */
  openRaw(listener: (chunk: RawChunk) => void): Promise<RawView> {
    return openFarRaw(this.client, (op, args) => this.call(op, args), listener);
  }

  /** `session.takeKeyboard(options)` of the far session (SPEC §13). */
  takeKeyboard(options: TakeKeyboardOptions): Promise<KeyboardHold> {
    return takeFarKeyboard(this.client, (op, args) => this.call(op, args), options);
  }

  startSend(request: SendRequest): SendOperation {
    const send = this.nextSendId++;
    // The signal stays here (an abort is forwarded as a frame); every other field crosses as it is.
    const { signal, ...plain } = request;
    const done = this.call<TerminalSendResult>('send', { send, request: plain }, signal);
    this.sendsInFlight++;
    const settled = () => {
      this.sendsInFlight--;
    };
    done.then(settled, settled);
    return {
      done,
      readOutput: () => this.call<SendOutputDelta>('send-output', { send }),
      cancel: async () => {
        await this.call('send-cancel', { send });
      },
    };
  }

  read(request: ReadRequest = {}): Promise<ReadResult> {
    return this.method('read', request);
  }

  signal(signal: SignalName): Promise<SignalResult> {
    return this.method('signal', signal);
  }

  async resize(size: TerminalSize): Promise<void> {
    // Checked here too: only a plain, valid `{ rows, cols }` crosses the link.
    assertTerminalSize(size);
    await this.method('resize', { rows: size.rows, cols: size.cols });
  }

  async status(): Promise<SessionStatus> {
    const status = await this.method<SessionStatus>('status');
    this.containment = status.containment;
    this.limits = status.limits;
    return status;
  }

  onOutput(listener: (chunk: OutputChunk) => void): Disposable {
    this.listeners.add(listener);
    if (this.listeners.size === 1 && !this.closed) {
      this.client.hold(); // subscribed live output keeps the host alive, as a local session's port does
      this.client.routeOutput(this.id, this.deliver);
      this.call('live-output', { on: true }).catch(() => undefined);
    }
    let disposed = false;
    return {
      dispose: () => {
        if (disposed) return;
        disposed = true;
        this.listeners.delete(listener);
        if (this.listeners.size === 0 && !this.closed) this.unsubscribe();
      },
    };
  }

  close(reason = 'closed', options: CloseOptions = {}): Promise<SessionOutcome> {
    if (this.client.closedWith !== undefined && this.closeCall === undefined) {
      this.release();
      return Promise.resolve({
        status: {
          kind: 'exited',
          exitCode: null,
          signal: null,
          containment: this.containment,
          limits: this.limits,
        },
        reason: `${reason} (${this.client.closedWith.message}; the far side closes the sessions of a link that ended)`,
      });
    }
    this.closeCall ??= this.method<SessionOutcome>('close', reason, options).then(
      (outcome) => {
        this.release();
        return outcome;
      },
      (error: unknown) => {
        this.closeCall = undefined; // a failed close is retried by the next close()
        throw error;
      },
    );
    return this.closeCall;
  }

  /** Marks the session closed without a call (the world shut down, or its link died). */
  release(): void {
    if (this.closed) return;
    if (this.listeners.size > 0) this.unsubscribe();
    this.closed = true;
    this.listeners.clear();
    this.client.forgetSession(this.id);
    this.client.routeEvents(this.id, undefined);
    this.onClosed(this);
  }

  private unsubscribe(): void {
    this.client.routeOutput(this.id, undefined);
    this.client.release();
    if (this.client.closedWith === undefined && !this.closed) {
      this.call('live-output', { on: false }).catch(() => undefined);
    }
  }

  private method<T>(method: string, ...args: unknown[]): Promise<T> {
    return this.call<T>('session', { method, args });
  }

  private call<T>(op: WorldOperation, args: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
    if (this.closed && this.client.closedWith === undefined) {
      return Promise.reject(new TerminalError('SESSION_CLOSED', `session ${this.id} is closed`));
    }
    return this.client.call<T>(op, { session: this.id, ...args }, signal);
  }

  private readonly deliver = (text: string, dropped: number): void => {
    const chunk: OutputChunk = { text, dropped };
    for (const listener of this.listeners) {
      try {
        listener(chunk);
      } catch {
        // A throwing subscriber must not break delivery to the others, nor the link's reading.
      }
    }
  };
}
