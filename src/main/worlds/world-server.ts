/**
 * The far end of an execution world (SPEC §10): an engine of its own, served over a pair of streams
 * (`agent-pty serve --stdio` uses stdin/stdout). Readiness, teardown and the sandbox run here, next to
 * the shells; only requests, results and live output cross the link.
 *
 * Lifetime: the server serves one client. When the link ends — stdin closes, a write fails, the
 * client goes silent (a cut link keeps stdin open), or the client asks to shut down — every session
 * it served is closed and `serveWorld` resolves, so nothing keeps running on a machine nobody talks to.
 */
import type { Readable, Writable } from 'node:stream';
import { describeError, TerminalError } from '../../shared/errors.js';
import { CLIENT_GONE_GRACE_MS } from '../../shared/session-limits.js';
import type {
  CloseOptions,
  PtyEngine,
  SendRequest,
  SpawnOptions,
  TerminalSession,
} from '../../shared/types.js';
import {
  type ClientFrame,
  type ServerFrame,
  type SpawnedSession,
  toWireError,
  WORLD_SESSION_METHODS,
  type WorldOperation,
} from '../../shared/world-protocol.js';
import { startSendUntil, WaitEnd } from '../engine/wait-end.js';
import { answerHello } from './hello.js';
import { LiveOutputSender } from './live-output-flow.js';
import { ServedCalls, ServedSends } from './served-calls.js';
import { SessionExtensions } from './session-extensions.js';
import { WorldLink } from './world-link.js';

/** How the server was asked to stop, for its exit status and log line. */
export interface ServeOutcome {
  /** Why serving ended. */
  reason: string;
  /** True when the client was refused (protocol mismatch, invalid configuration). */
  refused: boolean;
}

/** What `serveWorld` runs on. */
export interface ServeWorldOptions {
  /** Frames from the client (stdin). */
  input: Readable;
  /** Frames to the client (stdout). */
  output: Writable;
  /** Creates this world's engine from the configuration the client sent. */
  createEngine(config: Record<string, unknown>): Promise<PtyEngine>;
  /** Resolves when the process is asked to stop (a signal); the server then closes everything. */
  stopRequested?: Promise<string>;
}

/** One session this server spawned for the client. */
interface ServedSession {
  readonly session: TerminalSession;
  readonly sends: ServedSends;
  readonly liveOutput: LiveOutputSender;
}

/** Serves one client until the link ends; resolves once every session is closed. */
export function serveWorld(options: ServeWorldOptions): Promise<ServeOutcome> {
  return new WorldServer(options).run();
}

class WorldServer {
  private readonly link: WorldLink<ClientFrame, ServerFrame>;
  private readonly served = new Map<string, ServedSession>();
  /** Calls in flight: their answers and aborts. */
  private readonly calls: ServedCalls;
  /** Raw channels and keyboard holds of SPEC §13 (protocol version 2). */
  private readonly extensions: SessionExtensions;
  /** Set by the client's hello; resolves once the engine is up (the server then sends `ready`). */
  private starting: Promise<PtyEngine> | undefined;
  /** The engine, once up: calls are served only then (the client waits for `ready`). */
  private engine: PtyEngine | undefined;
  private finish!: (outcome: ServeOutcome) => void;
  private readonly finished = new Promise<ServeOutcome>((resolve) => {
    this.finish = resolve;
  });

  constructor(private readonly options: ServeWorldOptions) {
    this.link = new WorldLink(options.input, options.output, {
      onFrame: (frame) => this.onFrame(frame),
      // The client is gone: its sessions get a short grace, nobody waits for them (SPEC §4.8).
      onClosed: (error) => void this.stop(error.message, false, { graceMs: CLIENT_GONE_GRACE_MS }),
    });
    this.extensions = new SessionExtensions((frame) => this.link.send(frame));
    this.calls = new ServedCalls((frame) => this.link.send(frame));
    void options.stopRequested?.then((why) => this.stop(why, false));
  }

  async run(): Promise<ServeOutcome> {
    // The hello is an answer (hello.ts): a version-1 client expects a plain number, a newer one a range.
    this.link.startHeartbeat();
    return this.finished;
  }

  private onFrame(frame: ClientFrame): void {
    if (this.starting === undefined) {
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
      case 'raw-ack':
        this.extensions.acknowledgeRaw(frame.channel, frame.chars);
        return;
      case 'ack':
        try {
          this.served.get(frame.session)?.liveOutput.acknowledge(frame.chars);
        } catch (error) {
          // A client that acknowledges what it never got is broken or hostile: the link ends.
          void this.refuse(error);
        }
        return;
      default:
        return; // a frame this version does not know: ignored, so a newer minor client still works
    }
  }

  /** The client's first frame must be its hello, of a protocol version this server speaks. */
  private handshake(frame: ClientFrame): void {
    const answer = answerHello(frame);
    this.link.send(answer.hello);
    if (answer.version === undefined) {
      void this.refuse(answer.refusal);
      return;
    }
    const version = answer.version;
    const config = frame.t === 'hello' ? frame.config : undefined;
    this.starting = this.options.createEngine(config ?? {});
    this.starting.then(
      (engine) => {
        this.engine = engine;
        this.link.send({ t: 'ready', pid: process.pid, protocol: version });
      },
      (error: unknown) => void this.refuse(error),
    );
  }

  private async refuse(error: unknown): Promise<void> {
    this.link.send({ t: 'fatal', error: toWireError(error) });
    await this.stop(`refused the client: ${describeError(error)}`, true);
  }

  /** Runs one call; synchronous up to the engine's own call, so calls take effect in arrival order. */
  private invoke(callId: number, op: WorldOperation, args: Record<string, unknown>): unknown {
    const engine = this.engine;
    if (engine === undefined) {
      throw new TerminalError('ENGINE_CLOSED', 'the world is not ready, or is shutting down');
    }
    switch (op) {
      case 'spawn':
        return this.spawn(engine, args.options as SpawnOptions | undefined, this.calls.signalFor(callId));
      case 'send':
        return this.startSend(callId, args);
      case 'send-output':
        return this.lookup(args.session).sends.find(args.send).readOutput();
      case 'send-cancel':
        return this.lookup(args.session).sends.find(args.send).cancel();
      case 'session':
        return this.callSession(args);
      case 'live-output': {
        const { liveOutput } = this.lookup(args.session);
        if (args.on === true) liveOutput.start();
        else liveOutput.stop();
        return undefined;
      }
      case 'shutdown':
        return this.closeEngine();
      case 'list':
        return engine.list();
      case 'raw-open':
      case 'raw-close':
      case 'snapshot':
      case 'keyboard-take':
      case 'keyboard-write':
      case 'keyboard-heartbeat':
      case 'keyboard-release':
        return this.extensions.invoke(op, args, (id) => this.lookup(id).session);
      default:
        throw new TerminalError('INVALID_ARGUMENT', `unknown operation '${String(op)}'`);
    }
  }

  private async spawn(
    engine: PtyEngine,
    options: SpawnOptions | undefined,
    signal: AbortSignal,
  ): Promise<SpawnedSession> {
    const session = await engine.spawn(options ?? {}, signal);
    const liveOutput = new LiveOutputSender(session, (text, dropped) =>
      this.link.send({ t: 'output', session: session.id, text, dropped }),
    );
    this.served.set(session.id, { session, sends: new ServedSends(session.id), liveOutput });
    return {
      id: session.id,
      ...(session.name === undefined ? {} : { name: session.name }),
      pid: session.pid,
      motd: session.motd,
      dialect: session.dialect,
      ...(session.sandbox === undefined ? {} : { sandbox: session.sandbox }),
    };
  }

  /** Starts the send at once (so the client's next `send-output` finds it) and answers when it settles. */
  private startSend(callId: number, args: Record<string, unknown>): Promise<unknown> {
    const served = this.lookup(args.session);
    const sendId = Number(args.send);
    // The call's abort frame ends the wait through a WaitEnd, not an AbortSignal (wait-end.ts).
    const waitEnd = new WaitEnd();
    const operation = startSendUntil(served.session, (args.request ?? {}) as SendRequest, waitEnd);
    this.calls.abortableBy(callId, () => waitEnd.end());
    served.sends.track(sendId, operation);
    return operation.done;
  }

  private async callSession(args: Record<string, unknown>): Promise<unknown> {
    const served = this.lookup(args.session);
    const method = String(args.method);
    const target = (served.session as unknown as Record<string, unknown>)[method];
    if (!(WORLD_SESSION_METHODS as readonly string[]).includes(method) || typeof target !== 'function') {
      throw new TerminalError('INVALID_ARGUMENT', `sessions of this world have no method '${method}'`);
    }
    const callArgs = Array.isArray(args.args) ? args.args : [];
    const value: unknown = await target.apply(served.session, callArgs);
    if (method === 'close') this.forget(served);
    return value;
  }

  private lookup(id: unknown): ServedSession {
    const served = this.served.get(String(id));
    if (served === undefined) throw new TerminalError('UNKNOWN_SESSION', `unknown session ${String(id)}`);
    return served;
  }

  private forget(served: ServedSession): void {
    served.liveOutput.stop();
    this.extensions.dropSession(served.session.id);
    this.served.delete(served.session.id);
  }

  /** Closes every session and the engine (idempotent: `engine.close()` is). */
  private async closeEngine(options: CloseOptions = {}): Promise<void> {
    // An engine still starting is waited for: it may already hold threads; one that failed holds nothing.
    const engine = await this.starting?.catch((failedToStart: unknown) => void failedToStart);
    if (engine === undefined) return;
    for (const served of [...this.served.values()]) this.forget(served);
    await engine.close(options);
  }

  private stopping: Promise<void> | undefined;

  private stop(reason: string, refused: boolean, options: CloseOptions = {}): Promise<void> {
    this.stopping ??= (async () => {
      this.calls.abortAll(new TerminalError('ABORTED', `the world is stopping: ${reason}`));
      this.extensions.dispose();
      let failure: unknown;
      try {
        await this.closeEngine(options);
      } catch (error) {
        failure = error;
      } finally {
        this.link.close();
      }
      const suffix = failure === undefined ? '' : `; closing sessions failed: ${describeError(failure)}`;
      this.finish({ reason: `${reason}${suffix}`, refused });
    })().catch((error: unknown) => this.finish({ reason: describeError(error), refused }));
    return this.stopping;
  }
}
