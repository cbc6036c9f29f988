/**
 * One client of the daemon (SPEC §12) on its socket connection: the versioned handshake, then the
 * engine protocol of §10 plus attach, detach and list. The connection holds handles, not sessions:
 * when it ends — a clean close, a client killed mid-send, a link gone silent — its sessions are
 * detached and keep running; a send in flight settles on the daemon and its result waits for the next
 * attach (`orphanedResult`).
 */
import type { Socket } from 'node:net';
import { TerminalError } from '../../shared/errors.js';
import type { SendRequest, SpawnOptions } from '../../shared/types.js';
import {
  type AttachedSession,
  type ClientFrame,
  DAEMON_PROTOCOL_VERSION,
  type DaemonStatus,
  type ServerFrame,
  type SpawnedSession,
  toWireError,
  WORLD_SESSION_METHODS,
  type WorldOperation,
} from '../../shared/world-protocol.js';
import { answerHello } from '../worlds/hello.js';
import { LiveOutputSender } from '../worlds/live-output-flow.js';
import { ServedCalls, ServedSends } from '../worlds/served-calls.js';
import { SessionExtensions } from '../worlds/session-extensions.js';
import { WorldLink } from '../worlds/world-link.js';
import type { Attachment, DaemonSession } from './daemon-session.js';
import type { ClientScope, SessionDirectory } from './session-directory.js';

/** What a connection needs of its daemon. */
export interface DaemonHost {
  readonly directory: SessionDirectory;
  /** `daemon --status`. */
  status(): Promise<DaemonStatus>;
  /** `daemon --stop`: close everything and exit. */
  stop(reason: string): void;
  /** Diagnostics for the daemon's log. */
  log(line: string): void;
}

/** A session this connection is attached to. */
interface Handle {
  readonly held: DaemonSession;
  /** Sends by this client's send id (ids are the client's, so they start afresh with each attach). */
  readonly sends: ServedSends;
  readonly liveOutput: LiveOutputSender;
}

/** One client connection. */
export class DaemonConnection implements Attachment {
  private readonly link: WorldLink<ClientFrame, ServerFrame>;
  private readonly handles = new Map<string, Handle>();
  /** Calls in flight: their answers, and the aborts of spawns and of sends' waits. */
  private readonly calls: ServedCalls;
  private readonly extensions: SessionExtensions;
  private scope: ClientScope;
  /**
   * A watcher (`agent-pty watch`): it sees every scope's sessions but may only list them, view them
   * and hold their keyboards. Scopes keep a model's client to its own policy (SPEC §12); a watcher is
   * the person, who runs as the daemon's own uid (the socket's directory proves that much).
   */
  private watcher = false;
  private greeted = false;
  private ended = false;

  constructor(
    private readonly socket: Socket,
    private readonly daemon: DaemonHost,
    private readonly onEnded: (connection: DaemonConnection) => void,
  ) {
    this.link = new WorldLink(socket, socket, {
      onFrame: (frame) => this.onFrame(frame),
      onClosed: () => this.end(),
    });
    this.extensions = new SessionExtensions((frame) => this.link.send(frame));
    this.calls = new ServedCalls((frame) => this.link.send(frame));
    socket.on('error', (reported: unknown) => void reported); // the link reports it as the end
    this.link.startHeartbeat();
  }

  /** Ends the connection from the daemon's side (its stop). */
  close(): void {
    this.link.close();
    this.end();
  }

  revoke(sessionId: string, reason: string): void {
    const handle = this.handles.get(sessionId);
    if (handle === undefined) return;
    this.drop(handle);
    this.link.send({ t: 'detached', session: sessionId, reason });
  }

  private onFrame(frame: ClientFrame): void {
    if (!this.greeted) {
      this.handshake(frame);
      return;
    }
    switch (frame.t) {
      case 'call': {
        void this.calls.answer(frame.id, () => this.invoke(frame.id, frame.op, frame.args ?? {}));
        return;
      }
      case 'abort':
        this.calls.abort(frame.id);
        return;
      case 'ack':
        try {
          this.handles.get(frame.session)?.liveOutput.acknowledge(frame.chars);
        } catch (error) {
          this.refuse(error);
        }
        return;
      case 'raw-ack':
        this.extensions.acknowledgeRaw(frame.channel, frame.chars);
        return;
      default:
        return; // a frame this version does not know: ignored
    }
  }

  /**
   * The client's hello: its versions and its scope. Its `config` is ignored — the daemon's
   * configuration is its own flags' and file's (SPEC §12), one client must not set another's limits.
   */
  private handshake(frame: ClientFrame): void {
    const answer = answerHello(frame);
    this.link.send(answer.hello);
    if (answer.version === undefined) {
      this.refuse(answer.refusal);
      return;
    }
    if (frame.t === 'hello' && frame.config !== undefined && Object.keys(frame.config).length > 0) {
      this.daemon.log(`a client's hello carried engine configuration; ignored (the daemon's is its own)`);
    }
    const scope = frame.t === 'hello' ? frame.scope : undefined;
    if (
      scope !== undefined &&
      (typeof scope !== 'object' || typeof scope.mode !== 'string' || typeof scope.workspaceRoot !== 'string')
    ) {
      this.refuse(new TerminalError('INVALID_ARGUMENT', 'hello: scope must be { mode, workspaceRoot }'));
      return;
    }
    const role = frame.t === 'hello' ? frame.role : undefined;
    if (
      role !== undefined &&
      (role !== 'watcher' || scope !== undefined || answer.version < DAEMON_PROTOCOL_VERSION)
    ) {
      this.refuse(
        new TerminalError(
          'INVALID_ARGUMENT',
          `hello: role must be 'watcher', without a scope, over protocol version 2 or later; got role ${JSON.stringify(role)}`,
        ),
      );
      return;
    }
    this.watcher = role === 'watcher';
    this.scope = scope === undefined ? undefined : { mode: scope.mode, workspaceRoot: scope.workspaceRoot };
    this.greeted = true;
    this.link.send({ t: 'ready', pid: process.pid, protocol: answer.version });
  }

  private refuse(error: unknown): void {
    this.link.send({ t: 'fatal', error: toWireError(error) });
    this.link.close();
    this.end();
  }

  /** Runs one call; synchronous up to the engine's own call, so calls take effect in arrival order. */
  private invoke(callId: number, op: WorldOperation, args: Record<string, unknown>): unknown {
    if (this.ended) throw new TerminalError('TRANSPORT_CLOSED', 'the connection ended');
    if (this.watcher) return this.invokeAsWatcher(op, args);
    const { directory } = this.daemon;
    switch (op) {
      case 'spawn':
        return this.spawn((args.options ?? {}) as SpawnOptions, this.calls.signalFor(callId));
      case 'send':
        return this.startSend(callId, args);
      case 'send-output':
        return this.handle(args.session).sends.find(args.send).readOutput();
      case 'send-cancel':
        return this.handle(args.session).sends.find(args.send).cancel();
      case 'session':
        return this.callSession(args);
      case 'live-output': {
        const { liveOutput } = this.handle(args.session);
        if (args.on === true) liveOutput.start();
        else liveOutput.stop();
        return undefined;
      }
      case 'list':
        return directory.list(this.scope);
      case 'attach':
        return this.attach(args);
      case 'detach': {
        const handle = this.handle(args.session);
        this.drop(handle);
        handle.held.detach(this);
        return undefined;
      }
      case 'shutdown':
        return this.shutdown();
      case 'daemon-status':
        return this.daemon.status();
      case 'daemon-stop':
        this.daemon.stop('asked to stop by a client (daemon --stop)');
        return undefined;
      case 'raw-open':
      case 'raw-close':
      case 'snapshot':
      case 'keyboard-take':
      case 'keyboard-write':
      case 'keyboard-heartbeat':
      case 'keyboard-release':
        return this.extensions.invoke(op, args, (id) => this.handle(id).held.session);
      default:
        throw new TerminalError('INVALID_ARGUMENT', `unknown operation '${String(op)}'`);
    }
  }

  /** A watcher's call: listings of every scope and the operations of SPEC §13, nothing that drives a session. */
  private invokeAsWatcher(op: WorldOperation, args: Record<string, unknown>): unknown {
    const { directory } = this.daemon;
    switch (op) {
      case 'list':
        return directory.listForWatcher();
      case 'raw-open':
      case 'raw-close':
      case 'snapshot':
      case 'keyboard-take':
      case 'keyboard-write':
      case 'keyboard-heartbeat':
      case 'keyboard-release':
        return this.extensions.invoke(op, args, (id) => directory.findForWatcher(id).session);
      default:
        throw new TerminalError(
          'INVALID_ARGUMENT',
          `a watcher connection only lists sessions, views them and holds their keyboards; '${String(op)}' needs a client connection`,
        );
    }
  }

  private async spawn(options: SpawnOptions, signal: AbortSignal): Promise<SpawnedSession> {
    // The daemon's own environment is never a base (SPEC §12): a client that sent none gets none.
    const held = await this.daemon.directory.spawn(
      this,
      this.scope,
      { ...options, baseEnv: options.baseEnv ?? {} },
      signal,
    );
    if (this.ended) {
      held.detach(this); // the client vanished while its spawn ran: the session waits to be attached
      return spawnedOf(held);
    }
    this.adopt(held);
    return spawnedOf(held);
  }

  private async attach(args: Record<string, unknown>): Promise<AttachedSession> {
    const held = this.daemon.directory.find(this.scope, args);
    const { report, takenFrom } = await held.attach(this, args.steal === true);
    takenFrom?.revoke(held.id, 'another client attached it with steal');
    if (this.ended) {
      held.detach(this);
    } else if (!this.handles.has(held.id)) {
      this.adopt(held);
    }
    return { session: spawnedOf(held), report };
  }

  private async shutdown(): Promise<void> {
    const key = this.scope;
    const sessions = await this.daemon.directory.list(key);
    const failures: unknown[] = [];
    await Promise.all(
      sessions.map((listing) =>
        this.daemon.directory
          .find(key, { id: listing.id })
          .close('shut down by a client')
          .catch((error: unknown) => failures.push(error)),
      ),
    );
    if (failures.length > 0)
      throw new AggregateError(failures, `${failures.length} session(s) failed to close`);
  }

  private adopt(held: DaemonSession): void {
    const liveOutput = new LiveOutputSender(held.session, (text, dropped) =>
      this.link.send({ t: 'output', session: held.id, text, dropped }),
    );
    this.handles.set(held.id, { held, sends: new ServedSends(held.id), liveOutput });
  }

  private drop(handle: Handle): void {
    handle.liveOutput.stop();
    this.extensions.dropSession(handle.held.id);
    this.handles.delete(handle.held.id);
  }

  /** Starts the send at once (so the client's next `send-output` finds it) and answers when it settles. */
  private startSend(callId: number, args: Record<string, unknown>): Promise<unknown> {
    const handle = this.handle(args.session);
    const { operation, endWait } = handle.held.startSend(this, (args.request ?? {}) as SendRequest);
    // Registered before anything awaits: an `abort` frame in the same chunk as the call finds it.
    this.calls.abortableBy(callId, endWait);
    handle.sends.track(Number(args.send), operation);
    return operation.done;
  }

  private async callSession(args: Record<string, unknown>): Promise<unknown> {
    const handle = this.handle(args.session);
    const method = String(args.method);
    if (!(WORLD_SESSION_METHODS as readonly string[]).includes(method)) {
      throw new TerminalError('INVALID_ARGUMENT', `sessions of this daemon have no method '${method}'`);
    }
    const callArgs = Array.isArray(args.args) ? args.args : [];
    if (method === 'close') {
      // Dropped first: the close's own revocation must not reach the client that asked for it.
      this.drop(handle);
      return handle.held.close(String(callArgs[0] ?? 'closed'), callArgs[1] as never);
    }
    const session = handle.held.session as unknown as Record<string, (...values: unknown[]) => unknown>;
    return session[method]!.apply(handle.held.session, callArgs);
  }

  /**
   * The session `id` this client is attached to. A session of its scope attached elsewhere says so;
   * anything else is unknown, worded like a missing one.
   */
  private handle(id: unknown): Handle {
    const handle = this.handles.get(String(id));
    if (handle !== undefined) return handle;
    const held = this.daemon.directory.find(this.scope, { id: String(id) });
    throw new TerminalError(
      held.attached ? 'SESSION_ATTACHED' : 'INVALID_ARGUMENT',
      held.attached
        ? `session ${String(id)} is attached to another client; attach it with steal to take it`
        : `session ${String(id)} is detached; attach it first`,
    );
  }

  /** The client is gone: its sessions detach and run on; spawns in progress finish detached. */
  private end(): void {
    if (this.ended) return;
    this.ended = true;
    // Nothing in flight is aborted: a send's wait ends on its own bound and its result is kept for the
    // next attach (orphanedResult); a spawn finishes and its session waits, detached, to be attached.
    this.calls.forgetAll();
    for (const handle of [...this.handles.values()]) {
      this.drop(handle);
      handle.held.detach(this);
    }
    this.extensions.dispose();
    this.socket.destroy();
    this.onEnded(this);
  }
}

/** The fixed properties of a session as the client learns them. */
function spawnedOf(held: DaemonSession): SpawnedSession {
  const { session } = held;
  return {
    id: held.id,
    ...(held.name === undefined ? {} : { name: held.name }),
    pid: session.pid,
    motd: session.motd,
    dialect: session.dialect,
    ...(session.sandbox === undefined ? {} : { sandbox: session.sandbox }),
  };
}
