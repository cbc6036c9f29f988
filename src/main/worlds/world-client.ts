/**
 * The host's end of one execution world (SPEC §10): runs the transport command (`ssh host agent-pty
 * serve --stdio`, `kubectl exec -i …`, a local `agent-pty serve --stdio`), does the versioned
 * handshake, and turns calls into frames and answers back into settled promises.
 *
 * When the transport dies — the command exits, a pipe fails, the link goes silent, a frame is corrupt —
 * every pending call rejects at once with `TRANSPORT_CLOSED` (the message says why, with the tail of
 * the command's stderr), and the command is ended; the far side then closes every session it served.
 *
 * Event-loop references: the command and its pipes keep the host process alive only while a call is
 * pending or live output is subscribed, as an engine thread's ports do. An idle world never holds a
 * host that is done; when the host exits, the far side sees its stdin end and closes everything.
 */
import { TerminalError } from '../../shared/errors.js';
import { DisposableStore } from '../../shared/lifecycle.js';
import type { Disposable, SandboxSelection } from '../../shared/types.js';
import {
  type ClientFrame,
  commonProtocol,
  fromWireError,
  protocolMismatch,
  protocolRangeOf,
  type ServerFrame,
  WORLD_PROTOCOL,
  type WorldOperation,
} from '../../shared/world-protocol.js';
import { LiveOutputCredit } from './live-output-flow.js';
import { WorldLink } from './world-link.js';
import { startCommandTransport, TRANSPORT_END_TIMING, type WorldTransport } from './world-transport.js';

/** Timing of the transport command's life. */
export const TRANSPORT_TIMING = {
  /**
   * The far side must answer the handshake within this. Generous: ssh or kubectl may resolve names,
   * negotiate keys and start a process (Node's start alone takes ~50 ms) before the server speaks.
   */
  HANDSHAKE_MS: 30_000,
  /** See {@link TRANSPORT_END_TIMING}. */
  EXIT_WAIT_MS: TRANSPORT_END_TIMING.EXIT_WAIT_MS,
  KILL_WAIT_MS: TRANSPORT_END_TIMING.KILL_WAIT_MS,
} as const;

/** How the world's transport is started. */
export interface WorldTransportOptions {
  /** argv of the transport command; its stdin/stdout must reach `agent-pty serve --stdio`. */
  command: readonly string[];
  /** Extra environment variables for the command (added to the host's environment). */
  env?: Record<string, string>;
  /** Engine configuration of the far engine (SPEC §3), validated there. */
  config?: Record<string, unknown>;
}

/** What the client's hello says besides its versions. */
export interface WorldHelloOptions {
  /** Engine configuration of the far engine (SPEC §3); a daemon ignores it. */
  config?: Record<string, unknown>;
  /** The client's sandbox policy (a daemon scopes what the client sees by it, SPEC §12). */
  scope?: Pick<SandboxSelection, 'mode' | 'workspaceRoot'>;
  /** `watcher`: a daemon's viewer connection (lists every scope, views and holds only; SPEC §13). */
  role?: 'watcher';
  /** Say this one version as a plain number instead of the range: how a version-1 server is asked. */
  protocol?: number;
}

/**
 * A version-1 server refused the range form of hello (it greets unasked with the number it speaks and
 * accepts only that number): it can be asked again in its own words.
 */
class VersionOneRefusal extends TerminalError {
  constructor(
    readonly version: number,
    refusal: TerminalError,
  ) {
    super(refusal.code, refusal.message, { cause: refusal.cause });
  }
}

/** Handlers of a session's events beyond live output (version 2). */
export interface SessionEvents {
  /** The daemon took the session from this client. */
  detached?(reason: string): void;
}

interface PendingCall {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Removes the caller's abort listener. */
  cleanup(): void;
}

/** One connected world: calls, live output routing, and the transport's lifetime. */
export class WorldClient {
  private readonly link: WorldLink<ServerFrame, ClientFrame>;
  private readonly pending = new Map<number, PendingCall>();
  private readonly outputRoutes = new Map<string, (text: string, dropped: number) => void>();
  private readonly credits = new Map<string, LiveOutputCredit>();
  private readonly closedListeners = new Set<(error: TerminalError) => void>();
  private readonly sessionEvents = new Map<string, SessionEvents>();
  /** Frame handlers of raw channels and keyboard holds by their number (version 2, SPEC §13). */
  readonly rawChannels = new Map<number, (frame: ServerFrame & { t: 'raw' }) => void>();
  readonly holds = new Map<number, (frame: ServerFrame & { t: 'hold-ended' }) => void>();
  private nextChannel = 1;
  private terminating: Promise<void> | undefined;
  private nextCallId = 1;
  private refs = 0;
  private failure: TerminalError | undefined;
  private handshake:
    | { resolve(pid: number): void; reject(error: TerminalError): void; timer: Disposable }
    | undefined;
  /** The handshake's bound: the one timer of a client (a call's bound is its caller's signal). */
  private readonly timers = new DisposableStore();

  /** Pid of the server process on the far side (known once connected). */
  farPid = 0;
  /** The protocol version both ends speak (known once connected). */
  protocol = 0;
  /** Set when the server greeted unasked with a plain number this client speaks (a version-1 server). */
  private versionOneGreeting: number | undefined;

  private constructor(
    private readonly transport: WorldTransport,
    private readonly hello: WorldHelloOptions,
    /** What the link is, as the error of its death names it ("world link", "agent-pty daemon link"). */
    private readonly linkName: string,
  ) {
    transport.onEnded((error) => this.fail(error));
    this.link = new WorldLink(transport.input, transport.output, {
      onFrame: (frame) => this.onFrame(frame),
      onClosed: (error) => this.fail(error),
    });
    this.updateRefs();
  }

  /**
   * Starts the command and completes the handshake. Rejects with `PROTOCOL_MISMATCH` (naming both
   * versions), the far side's coded refusal (e.g. `INVALID_CONFIG`), or `TRANSPORT_CLOSED` (saying
   * why); the command is gone by then.
   */
  static async connect(options: WorldTransportOptions): Promise<WorldClient> {
    const [file, ...args] = options.command;
    if (file === undefined || file === '') {
      throw new TerminalError(
        'INVALID_ARGUMENT',
        'a world needs a command, e.g. ["ssh", "host", "agent-pty", "serve", "--stdio"]',
      );
    }
    const hello: WorldHelloOptions = options.config === undefined ? {} : { config: options.config };
    try {
      return await WorldClient.over(startCommandTransport([file, ...args], options.env), hello);
    } catch (error) {
      // An older far side (`serve --stdio` of a version-1 release): the command runs once more, and
      // the hello is the number it understands.
      if (!(error instanceof VersionOneRefusal)) throw error;
      return WorldClient.over(startCommandTransport([file, ...args], options.env), {
        ...hello,
        protocol: error.version,
      });
    }
  }

  /** Completes the handshake over a started transport (a command's pipes, a daemon's socket). */
  static async over(
    transport: WorldTransport,
    hello: WorldHelloOptions,
    linkName = 'world link',
  ): Promise<WorldClient> {
    const client = new WorldClient(transport, hello, linkName);
    try {
      client.farPid = await client.shakeHands();
      return client;
    } catch (error) {
      await client.terminate();
      // Now that the command has exited, its stderr is complete: it usually says what went wrong.
      const refusal = error as TerminalError;
      if (
        refusal.code === 'PROTOCOL_MISMATCH' &&
        client.versionOneGreeting !== undefined &&
        hello.protocol === undefined
      ) {
        throw new VersionOneRefusal(client.versionOneGreeting, refusal);
      }
      if (
        refusal.code !== 'TRANSPORT_CLOSED' ||
        client.stderr === '' ||
        refusal.message.includes(client.stderr)
      ) {
        throw refusal;
      }
      throw new TerminalError('TRANSPORT_CLOSED', `${refusal.message} (transport stderr: ${client.stderr})`, {
        cause: refusal.cause,
      });
    }
  }

  /** The error the link died with, or undefined while it is alive. */
  get closedWith(): TerminalError | undefined {
    return this.failure;
  }

  /** Calls `listener` once when the link dies (at once if it already has). */
  onClosed(listener: (error: TerminalError) => void): void {
    if (this.failure !== undefined) listener(this.failure);
    else this.closedListeners.add(listener);
  }

  /**
   * Calls `op` on the far side. `signal` aborting sends an abort for this call (a spawn is cancelled,
   * a send's wait ends); the call still settles with the far side's answer.
   */
  call<T>(op: WorldOperation, args: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
    if (this.failure !== undefined) return Promise.reject(this.transportClosed());
    const id = this.nextCallId++;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => this.link.send({ t: 'abort', id });
      // Only a call with a signal has a listener (a send per call is the hot path: nothing to allocate).
      const listening = signal === undefined ? undefined : new DisposableStore();
      this.pending.set(id, {
        resolve: resolve as (value: unknown) => void,
        reject,
        cleanup: () => listening?.dispose(),
      });
      this.hold();
      this.link.send({ t: 'call', id, op, args });
      if (signal?.aborted) onAbort();
      else if (signal !== undefined)
        listening?.listen('world call abort listener', signal, 'abort', onAbort, { once: true });
    });
  }

  /** Routes a session's live output to `deliver` (undefined stops routing). */
  routeOutput(session: string, deliver: ((text: string, dropped: number) => void) | undefined): void {
    if (deliver === undefined) this.outputRoutes.delete(session);
    else this.outputRoutes.set(session, deliver);
  }

  /** Forgets a closed session's routing and credit. */
  forgetSession(session: string): void {
    this.outputRoutes.delete(session);
    this.credits.delete(session);
  }

  /** Routes a session's events beyond output (undefined stops routing). */
  routeEvents(session: string, events: SessionEvents | undefined): void {
    if (events === undefined) this.sessionEvents.delete(session);
    else this.sessionEvents.set(session, events);
  }

  /** A fresh number for a raw channel or a keyboard hold of this link. */
  nextChannelNumber(): number {
    return this.nextChannel++;
  }

  /** Sends a frame that needs no answer (a raw channel's acknowledgement). */
  notify(frame: ClientFrame): void {
    this.link.send(frame);
  }

  /** Keeps the host process alive (a call pending, live output subscribed) until {@link release}. */
  hold(): void {
    this.refs++;
    if (this.refs === 1) this.updateRefs();
  }

  /** Ends one {@link hold}. */
  release(): void {
    this.refs = Math.max(0, this.refs - 1);
    if (this.refs === 0) this.updateRefs();
  }

  /**
   * Ends the link from this side (the far side closes every session once its stdin ends) and waits
   * for the command to exit: on its own, else after SIGTERM, else after SIGKILL. Idempotent.
   */
  terminate(): Promise<void> {
    this.terminating ??= (async () => {
      this.fail(new TerminalError('TRANSPORT_CLOSED', 'the world was closed'), false);
      await this.transport.finish();
    })();
    return this.terminating;
  }

  /** The command's last stderr lines, for a failed connection's message. */
  get stderr(): string {
    return this.transport.stderr();
  }

  private shakeHands(): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const timer = this.timers.timeout('world handshake bound', TRANSPORT_TIMING.HANDSHAKE_MS, () => {
        this.fail(
          new TerminalError(
            'TRANSPORT_CLOSED',
            `the world did not answer within ${TRANSPORT_TIMING.HANDSHAKE_MS} ms: is \`agent-pty serve --stdio\` at the end of the command?`,
          ),
        );
      });
      this.handshake = { resolve, reject, timer };
      this.link.send({
        t: 'hello',
        protocol: this.hello.protocol ?? WORLD_PROTOCOL,
        ...(this.hello.config === undefined ? {} : { config: this.hello.config }),
        ...(this.hello.scope === undefined ? {} : { scope: this.hello.scope }),
        ...(this.hello.role === undefined ? {} : { role: this.hello.role }),
      });
    });
  }

  private onFrame(frame: ServerFrame): void {
    switch (frame.t) {
      case 'hello': {
        // A version-1 server greets unasked with a number; a newer one answers with its range.
        const theirs = protocolRangeOf(frame.protocol);
        const version = theirs === undefined ? undefined : commonProtocol(WORLD_PROTOCOL, theirs);
        if (version === undefined) {
          this.fail(protocolMismatch(WORLD_PROTOCOL, frame.protocol, 'server'));
          return;
        }
        this.protocol = version;
        if (typeof frame.protocol === 'number' && this.hello.protocol === undefined) {
          this.versionOneGreeting = version;
        }
        return;
      }
      case 'ready':
        if (this.handshake !== undefined) {
          this.handshake.timer.dispose();
          if (frame.protocol !== undefined) this.protocol = frame.protocol;
          this.handshake.resolve(frame.pid);
          this.handshake = undefined;
          this.link.startHeartbeat();
        }
        return;
      case 'fatal':
        this.fail(fromWireError(frame.error));
        return;
      case 'result':
      case 'error': {
        const call = this.pending.get(frame.id);
        if (call === undefined) return;
        this.pending.delete(frame.id);
        call.cleanup();
        this.release();
        if (frame.t === 'result') call.resolve(frame.value);
        else call.reject(fromWireError(frame.error));
        return;
      }
      case 'output': {
        this.outputRoutes.get(frame.session)?.(frame.text, frame.dropped);
        // Acknowledged once delivered (even when nobody listens any more): credit for the next chunks.
        const credit = this.credits.get(frame.session) ?? new LiveOutputCredit();
        this.credits.set(frame.session, credit);
        const chars = credit.deliver(frame.text.length);
        if (chars > 0) this.link.send({ t: 'ack', session: frame.session, chars });
        return;
      }
      case 'detached':
        this.sessionEvents.get(frame.session)?.detached?.(frame.reason);
        return;
      case 'raw':
        this.rawChannels.get(frame.channel)?.(frame);
        return;
      case 'hold-ended':
        this.holds.get(frame.hold)?.(frame);
        return;
      default:
        return; // a frame this version does not know: ignored
    }
  }

  /**
   * The link is dead: everything pending rejects now with `TRANSPORT_CLOSED`, the handshake (if still
   * running) with the far side's refusal or the same error. A command still running is sent SIGTERM
   * (a hung server, or ssh over a cut link, would not end on its own), except when `terminate()` ends
   * the link and gives the command time to exit cleanly. Idempotent.
   */
  private fail(reason: TerminalError, endCommand = true): void {
    if (this.failure !== undefined) return;
    const stderr = this.transport.stderr();
    const detail = stderr === '' ? '' : ` (transport stderr: ${stderr.split('\n').slice(-3).join(' | ')})`;
    this.failure = new TerminalError(
      'TRANSPORT_CLOSED',
      `${this.linkName} closed: ${reason.message}${detail}`,
      {
        cause: reason,
      },
    );
    if (this.handshake !== undefined) {
      this.handshake.timer.dispose();
      // A refusal keeps its own code (PROTOCOL_MISMATCH, INVALID_CONFIG, …).
      this.handshake.reject(reason.code === 'TRANSPORT_CLOSED' ? this.failure : reason);
      this.handshake = undefined;
    }
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const call of calls) {
      call.cleanup();
      call.reject(this.transportClosed());
    }
    this.refs = 0;
    this.outputRoutes.clear();
    this.link.close();
    if (endCommand) this.transport.abort();
    for (const events of this.sessionEvents.values()) events.detached?.(this.failure.message);
    this.sessionEvents.clear();
    this.rawChannels.clear();
    for (const hold of this.holds.values()) hold({ t: 'hold-ended', hold: 0, end: 'closed' });
    this.holds.clear();
    for (const listener of this.closedListeners) listener(this.failure);
    this.closedListeners.clear();
    this.updateRefs();
  }

  /** A fresh TRANSPORT_CLOSED error for one caller. */
  private transportClosed(): TerminalError {
    const failure = this.failure!;
    return new TerminalError('TRANSPORT_CLOSED', failure.message, { cause: failure.cause });
  }

  /** The transport holds the event loop only while something waits on it. */
  private updateRefs(): void {
    this.transport.setRef(this.refs > 0 || this.handshake !== undefined || this.terminating !== undefined);
  }
}
