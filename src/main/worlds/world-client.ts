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
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { describeError, TerminalError } from '../../shared/errors.js';
import {
  type ClientFrame,
  fromWireError,
  protocolMismatch,
  type ServerFrame,
  WORLD_PROTOCOL_VERSION,
  type WorldOperation,
} from '../../shared/world-protocol.js';
import { LiveOutputCredit } from './live-output-flow.js';
import { WorldLink } from './world-link.js';

/** Timing of the transport command's life. */
export const TRANSPORT_TIMING = {
  /**
   * The far side must answer the handshake within this. Generous: ssh or kubectl may resolve names,
   * negotiate keys and start a process (Node's start alone takes ~50 ms) before the server speaks.
   */
  HANDSHAKE_MS: 30_000,
  /**
   * After the link ended, the command gets this long to exit on its own (the local server closes its
   * sessions first; ssh and kubectl just disconnect) before it is sent SIGTERM.
   */
  EXIT_WAIT_MS: 10_000,
  /** After SIGTERM, this long before SIGKILL: a transport that ignores SIGTERM must still go. */
  KILL_WAIT_MS: 2_000,
} as const;

/** Bytes of the command's stderr kept for error messages: its last lines say why a link failed. */
const STDERR_TAIL_BYTES = 2_048;

/** How the world's transport is started. */
export interface WorldTransportOptions {
  /** argv of the transport command; its stdin/stdout must reach `agent-pty serve --stdio`. */
  command: readonly string[];
  /** Extra environment variables for the command (added to the host's environment). */
  env?: Record<string, string>;
  /** Engine configuration of the far engine (SPEC §3), validated there. */
  config?: Record<string, unknown>;
}

interface PendingCall {
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Removes the caller's abort listener. */
  cleanup(): void;
}

type TransportProcess = ChildProcessByStdio<Writable, Readable, Readable>;

/** One connected world: calls, live output routing, and the transport's lifetime. */
export class WorldClient {
  private readonly link: WorldLink<ServerFrame, ClientFrame>;
  private readonly pending = new Map<number, PendingCall>();
  private readonly outputRoutes = new Map<string, (text: string, dropped: number) => void>();
  private readonly credits = new Map<string, LiveOutputCredit>();
  private readonly closedListeners = new Set<(error: TerminalError) => void>();
  private readonly exited: Promise<void>;
  private stderrTail = '';
  private terminating: Promise<void> | undefined;
  private nextCallId = 1;
  private holds = 0;
  private failure: TerminalError | undefined;
  private handshake:
    | { resolve(pid: number): void; reject(error: TerminalError): void; timer: NodeJS.Timeout }
    | undefined;

  /** Pid of the server process on the far side (known once connected). */
  farPid = 0;

  private constructor(
    private readonly child: TransportProcess,
    private readonly options: WorldTransportOptions,
  ) {
    let markExited!: () => void;
    this.exited = new Promise<void>((resolve) => {
      markExited = resolve;
    });
    child.once('exit', (code, signal) => {
      const status = signal === null ? `exited with code ${code}` : `was killed by ${signal}`;
      this.fail(new TerminalError('TRANSPORT_CLOSED', `the transport command ${status}`));
      markExited();
    });
    child.once('error', (error) => {
      this.fail(
        new TerminalError(
          'TRANSPORT_CLOSED',
          `could not run the transport command: ${describeError(error)}`,
          {
            cause: error,
          },
        ),
      );
      // A command that never started emits no 'exit': nothing is left to wait for.
      if (child.pid === undefined) markExited();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    });
    this.link = new WorldLink(child.stdout, child.stdin, {
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
    const child = spawn(file, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...options.env },
    });
    const client = new WorldClient(child, options);
    try {
      client.farPid = await client.shakeHands();
      return client;
    } catch (error) {
      await client.terminate();
      // Now that the command has exited, its stderr is complete: it usually says what went wrong.
      const refusal = error as TerminalError;
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
      this.pending.set(id, {
        resolve: resolve as (value: unknown) => void,
        reject,
        cleanup: () => signal?.removeEventListener('abort', onAbort),
      });
      this.hold();
      this.link.send({ t: 'call', id, op, args });
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
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

  /** Keeps the host process alive (a call pending, live output subscribed) until {@link release}. */
  hold(): void {
    this.holds++;
    if (this.holds === 1) this.updateRefs();
  }

  /** Ends one {@link hold}. */
  release(): void {
    this.holds = Math.max(0, this.holds - 1);
    if (this.holds === 0) this.updateRefs();
  }

  /**
   * Ends the link from this side (the far side closes every session once its stdin ends) and waits
   * for the command to exit: on its own, else after SIGTERM, else after SIGKILL. Idempotent.
   */
  terminate(): Promise<void> {
    this.terminating ??= (async () => {
      this.fail(new TerminalError('TRANSPORT_CLOSED', 'the world was closed'), false);
      if (this.child.exitCode === null && this.child.signalCode === null) {
        this.child.ref(); // whoever awaits this waits for the exit: nothing may be left running
        if (!(await this.exitWithin(TRANSPORT_TIMING.EXIT_WAIT_MS))) {
          this.child.kill('SIGTERM');
          if (!(await this.exitWithin(TRANSPORT_TIMING.KILL_WAIT_MS))) this.child.kill('SIGKILL');
        }
      }
      await this.exited;
      // The exit event can precede the end of the pipes; they are released here either way.
      this.child.stdout.destroy();
      this.child.stderr.destroy();
      this.child.stdin.destroy();
    })();
    return this.terminating;
  }

  /** The command's last stderr lines, for a failed connection's message. */
  get stderr(): string {
    return this.stderrTail.trim();
  }

  private shakeHands(): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(
          new TerminalError(
            'TRANSPORT_CLOSED',
            `the world did not answer within ${TRANSPORT_TIMING.HANDSHAKE_MS} ms: is \`agent-pty serve --stdio\` at the end of the command?`,
          ),
        );
      }, TRANSPORT_TIMING.HANDSHAKE_MS);
      this.handshake = { resolve, reject, timer };
      this.link.send({
        t: 'hello',
        protocol: WORLD_PROTOCOL_VERSION,
        ...(this.options.config === undefined ? {} : { config: this.options.config }),
      });
    });
  }

  private onFrame(frame: ServerFrame): void {
    switch (frame.t) {
      case 'hello':
        if (frame.protocol !== WORLD_PROTOCOL_VERSION) {
          this.fail(protocolMismatch(WORLD_PROTOCOL_VERSION, frame.protocol, 'server'));
        }
        return;
      case 'ready':
        if (this.handshake !== undefined) {
          clearTimeout(this.handshake.timer);
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
    const stderr = this.stderrTail.trim();
    const detail = stderr === '' ? '' : ` (transport stderr: ${stderr.split('\n').slice(-3).join(' | ')})`;
    this.failure = new TerminalError('TRANSPORT_CLOSED', `world link closed: ${reason.message}${detail}`, {
      cause: reason,
    });
    if (this.handshake !== undefined) {
      clearTimeout(this.handshake.timer);
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
    this.holds = 0;
    this.outputRoutes.clear();
    this.link.close();
    if (endCommand && this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
    }
    for (const listener of this.closedListeners) listener(this.failure);
    this.closedListeners.clear();
    this.updateRefs();
  }

  /** A fresh TRANSPORT_CLOSED error for one caller. */
  private transportClosed(): TerminalError {
    const failure = this.failure!;
    return new TerminalError('TRANSPORT_CLOSED', failure.message, { cause: failure.cause });
  }

  private exitWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    return Promise.race([this.exited.then(() => true), expired]).finally(() => clearTimeout(timer));
  }

  /** The command and its output pipe hold the event loop only while something waits on them. */
  private updateRefs(): void {
    const wanted = this.holds > 0 || this.handshake !== undefined || this.terminating !== undefined;
    const pipes = [this.child.stdout, this.child.stderr, this.child.stdin] as unknown as Socket[];
    if (wanted) {
      this.child.ref();
      pipes[0]!.ref();
    } else {
      this.child.unref();
      for (const pipe of pipes) pipe.unref();
    }
  }
}
