/**
 * The host-thread side of one session: a `TerminalSession` backed by a Comlink proxy to the engine
 * thread. Every call is raced against the death of the session's Piscina task, because Comlink never
 * rejects a call whose worker died — it would hang forever.
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import * as Comlink from 'comlink';
import { TerminalError } from '../../shared/errors.js';
import { assertInputWithinLimit } from '../../shared/input-limit.js';
import type { SendSpec, SessionThreadApi } from '../../shared/protocol.js';
import { RetryableAttempt } from '../../shared/retryable-attempt.js';
import { assertSignalName } from '../../shared/signals.js';
import { assertTerminalSize } from '../../shared/terminal-size.js';
import type {
  CloseOptions,
  Dialect,
  Disposable,
  KeyboardHold,
  OutputChunk,
  RawChunk,
  RawView,
  ReadRequest,
  ReadResult,
  SandboxSelection,
  SendOperation,
  SendRequest,
  SessionOutcome,
  SessionStatus,
  SignalName,
  SignalResult,
  TakeKeyboardOptions,
  TerminalSession,
  TerminalSize,
  TerminalSnapshot,
} from '../../shared/types.js';
import { CallRace } from './call-race.js';
import { SessionKeyboard, type StartedSend } from './keyboard-hold.js';
import { LiveOutputReceiver } from './live-output-receiver.js';
import { signalAbort, type WaitAbort } from './wait-end.js';

/** Everything a thread session is built from. */
export interface ThreadSessionParts {
  id: string;
  name: string | undefined;
  /** The shell's host pid (in a confined mode the shell's, not the sandbox launcher's). */
  pid: number;
  motd: string;
  sandbox: SandboxSelection | undefined;
  dialect: Dialect;
  /** Largest input of one send (config `maxInputBytes`), checked before the call crosses threads. */
  maxInputBytes: number;
  /** Largest `rows × cols` (config `maxScreenCells`), checked before a resize crosses threads. */
  maxScreenCells: number;
  /** Comlink proxy of the session task on its engine thread. */
  proxy: Comlink.Remote<SessionThreadApi>;
  controlPort: MessagePort;
  dataPort: MessagePort;
  /** Rejects (with ENGINE_THREAD_DIED) if the engine thread dies; never resolves otherwise. */
  death: Promise<never>;
  /** Resolves once the Piscina task finished (the session is closed in the engine thread). */
  taskDone: Promise<unknown>;
  /** Called once the session is closed for good. */
  onClosed: (id: string) => void;
  /** The engine's wait bounds (config `timeoutMs`, `maxTimeoutMs`): a send waiting for a person's hand-back keeps to them. */
  waitBounds: { timeoutMs: number; maxTimeoutMs: number };
  /** How long a keyboard hold lives without a heartbeat (default 30 s; shorter only in tests). */
  holdHeartbeatMs?: number;
}

/** Races `call` against the thread's death, so no host call can hang on a dead engine thread. */
export function raceDeath<T>(call: Promise<T>, death: Promise<never>): Promise<T> {
  return Promise.race([call, death]);
}

/**
 * A call whose purpose is the thread's death (the tests' crash hook): settles once it is answered or
 * once the thread is declared dead, whichever the host sees first. The thread answers before it
 * crashes, but the answer comes on the session's port and the death through the Worker's exit, and
 * the host may read them in either order: with {@link raceDeath}, a crash that worked could reject.
 */
export function answeredOrDied(call: Promise<void>, death: Promise<never>): Promise<void> {
  return Promise.race([call, death.catch(() => undefined)]);
}

/** Host-side session handle. */
export class ThreadSession implements TerminalSession {
  readonly id: string;
  readonly name: string | undefined;
  readonly pid: number;
  readonly motd: string;
  readonly sandbox: SandboxSelection | undefined;
  readonly dialect: Dialect;

  private readonly proxy: Comlink.Remote<SessionThreadApi>;
  private readonly death: Promise<never>;
  /**
   * Rejects with SESSION_CLOSED once the session's control port is closed. The engine thread closes its
   * end when the session is done, and Comlink never answers a call that reaches a closed port: a call
   * made while a close was finishing (a send right after `close()` began, before its reply came back)
   * hung forever. Every reply the thread sent comes before the port's `close` event (one port, in
   * order); the task's result travels on another port and can overtake them, so it is no signal here.
   */
  private readonly finished: Promise<never>;
  /** Every call races the thread's death and the closed port (call-race.ts: not `Promise.race`). */
  private readonly calls: CallRace;
  /** Resolves once the session's control port is closed (by either thread). */
  private readonly portClosed: Promise<void>;
  private readonly listeners = new Set<(chunk: OutputChunk) => void>();
  private readonly liveOutput: LiveOutputReceiver;
  /** Open raw views, ended (their last output delivered) when the session is released. */
  private readonly rawViews = new Set<Disposable>();
  private nextSendId = 1;
  private closed = false;
  private readonly closeCall = new RetryableAttempt<SessionOutcome>();
  private released = false;
  /** A person's hold of the keyboard (SPEC §13): it gates the model's sends, signals and resizes. */
  private readonly keyboard: SessionKeyboard;

  constructor(private readonly parts: ThreadSessionParts) {
    this.id = parts.id;
    this.name = parts.name;
    this.pid = parts.pid;
    this.motd = parts.motd;
    this.sandbox = parts.sandbox;
    this.dialect = parts.dialect;
    this.proxy = parts.proxy;
    this.death = parts.death;
    this.keyboard = new SessionKeyboard(
      {
        writePersonInput: (data) => this.call(() => this.proxy.writePersonInput(data)),
        endWait: (sendId) => this.call(() => this.proxy.endWait(sendId)),
        status: () => this.status(),
      },
      { ...parts.waitBounds, maxInputBytes: parts.maxInputBytes, heartbeatTimeoutMs: parts.holdHeartbeatMs },
    );
    this.liveOutput = new LiveOutputReceiver(parts.dataPort, () =>
      this.listeners.size === 0 ? null : this.deliverLiveOutput,
    );
    parts.dataPort.unref(); // live output alone must not keep the host alive
    void parts.death.catch(() => this.release());
    // One-shot: the port's close ends the listener, and the port lives no longer than this session.
    this.portClosed = new Promise<void>((resolve) => parts.controlPort.once('close', () => resolve()));
    // Once closed, and once the task has ended normally: a thread that died closes its ports too, and
    // then `death` gives the verdict (ENGINE_THREAD_DIED), never this.
    this.finished = this.portClosed.then(() =>
      parts.taskDone.then(
        () => Promise.reject(new TerminalError('SESSION_CLOSED', `session ${this.id} is closed`)),
        () => new Promise<never>(() => undefined),
      ),
    );
    this.finished.catch(() => undefined);
    this.calls = new CallRace([this.death, this.finished]);
  }

  startSend(request: SendRequest): SendOperation {
    // The AbortSignal stays on this thread; everything else is plain data for the engine to validate.
    const { signal, ...spec } = request ?? {};
    return this.startSendUntil(spec, signal === undefined ? undefined : signalAbort(signal));
  }

  /**
   * `startSend` with its wait ended by `waitEnd` instead of an AbortSignal: the daemon's path
   * (wait-end.ts says what a signal per send cost there).
   */
  startSendUntil(spec: SendSpec, waitEnd: WaitAbort | undefined): SendOperation {
    return this.keyboard.guardSend(spec, waitEnd, (admitted) => this.startThreadSend(admitted, waitEnd));
  }

  /** A person's hold of the keyboard (SPEC §13). */
  async takeKeyboard(options: TakeKeyboardOptions): Promise<KeyboardHold> {
    if (this.closed) throw new TerminalError('SESSION_CLOSED', `session ${this.id} is closed`);
    return this.keyboard.take(options);
  }

  /** When a person took the keyboard, while one holds it. */
  get heldSince(): number | undefined {
    return this.keyboard.heldSince;
  }

  /** What held the terminal when the model's last send settled. */
  get lastForeground(): { pid: number; command: string } | undefined {
    return this.keyboard.lastForeground;
  }

  /** A send of the model is in flight (or waits for the keyboard). */
  get busy(): boolean {
    return this.keyboard.busy;
  }

  private startThreadSend(spec: SendSpec, waitEnd: WaitAbort | undefined): StartedSend {
    const sendId = this.nextSendId++;
    // One call takes the send and answers with its result: the engine thread posts nothing (and wakes
    // no host) between taking the send and writing its input, which a separate `startSend` reply did
    // on the critical path (bench/README.md, "Where the time of a `true` goes").
    const settled = this.call(async () => {
      // Refused before anything is sent (the engine checks again, for callers of the thread API).
      if (typeof spec.text === 'string') assertInputWithinLimit(spec.text, this.parts.maxInputBytes);
      return this.proxy.send(sendId, spec);
    });
    // Calls naming this send need not wait for it to start: they travel on the same port after it, and
    // the engine takes (or refuses) the send before it reads them. When it refused, their reply comes
    // after that refusal (one port, in order), and they report the refusal, as waiting for it would.
    let refusal: { error: unknown } | undefined;
    settled.catch((error: unknown) => {
      refusal = { error };
    });
    const afterStart = async <T>(invoke: () => Promise<T>): Promise<T> => {
      try {
        return await this.call(invoke);
      } catch (error) {
        throw refusal === undefined ? error : refusal.error;
      }
    };
    let done = settled;
    if (waitEnd !== undefined) {
      // Aborting ends only the wait (the send settles `running`): a client's own request timeout must
      // never turn into a signal to the command it was waiting on. `cancel()` is the SIGINT path.
      const onAbort = () => void afterStart(() => this.proxy.endWait(sendId)).catch(() => undefined);
      if (waitEnd.aborted) onAbort();
      else {
        // One-shot: forgotten once the send settled, whichever comes first.
        const listening = waitEnd.onAbort(onAbort);
        done = settled.finally(() => listening.dispose());
      }
    }
    const op: SendOperation = {
      done,
      readOutput: () => afterStart(() => this.proxy.readSendOutput(sendId)),
      cancel: () => afterStart(() => this.proxy.cancelSend(sendId)),
    };
    return { sendId, op };
  }

  read(request: ReadRequest = {}): Promise<ReadResult> {
    return this.call(() => this.proxy.read(request));
  }

  signal(signal: SignalName): Promise<SignalResult> {
    return this.call(async () => {
      // Checked here too: only one of the five names crosses to the thread (SPEC §4.4).
      assertSignalName(signal);
      this.keyboard.assertModelMayDrive('signal');
      return this.proxy.signal(signal);
    });
  }

  status(): Promise<SessionStatus> {
    return this.call(() => this.proxy.status() as Promise<SessionStatus>);
  }

  resize(size: TerminalSize): Promise<void> {
    return this.call(async () => {
      // Checked here too: only a plain, valid `{ rows, cols }` crosses to the thread.
      assertTerminalSize(size, this.parts.maxScreenCells);
      this.keyboard.assertModelMayDrive('resize');
      return this.proxy.resize({ rows: size.rows, cols: size.cols });
    });
  }

  onOutput(listener: (chunk: OutputChunk) => void): Disposable {
    this.listeners.add(listener);
    if (this.listeners.size === 1 && !this.closed) {
      this.parts.dataPort.ref();
      void this.call(() => this.proxy.setLiveOutput(true)).catch(() => undefined);
    }
    let disposed = false;
    return {
      dispose: () => {
        if (disposed) return;
        disposed = true;
        this.listeners.delete(listener);
        if (this.listeners.size === 0 && !this.closed) {
          this.parts.dataPort.unref();
          void this.call(() => this.proxy.setLiveOutput(false)).catch(() => undefined);
        }
      },
    };
  }

  async openRaw(listener: (chunk: RawChunk) => void): Promise<RawView> {
    // Each view has a data port of its own: its ring and watermarks are the live plane's (live-ring.ts).
    const { port1, port2 } = new MessageChannel();
    let subscribed = true;
    const deliver = (chunk: OutputChunk): void => {
      try {
        listener({ data: chunk.text, dropped: chunk.dropped });
      } catch {
        // A throwing viewer must not break the ring's reading.
      }
    };
    const receiver = new LiveOutputReceiver(port1, () => (subscribed ? deliver : null));
    const end = {
      dispose: () => {
        if (!this.rawViews.delete(end)) return;
        receiver.dispose(); // what the engine published before the end is delivered
        subscribed = false;
        port1.close(); // the engine sees the close and unsubscribes
      },
    };
    this.rawViews.add(end);
    let snapshot: TerminalSnapshot;
    try {
      snapshot = await this.call(() => this.proxy.openRaw(Comlink.transfer(port2, [port2])));
    } catch (error) {
      subscribed = false;
      end.dispose();
      throw error;
    }
    return { snapshot, dispose: end.dispose };
  }

  snapshot(): Promise<TerminalSnapshot> {
    return this.call(() => this.proxy.snapshot());
  }

  close(reason = 'closed', options: CloseOptions = {}): Promise<SessionOutcome> {
    // A failed close is retried by the next close(), unless the session was released meanwhile.
    return this.closeCall.run(
      async () => {
        if (this.closed) throw new TerminalError('SESSION_CLOSED', `session ${this.id} is closed`);
        // The close's reply comes after every earlier reply (one port, in order), so a send in flight has
        // its result before the port is released below. Only a port the thread closed already (the
        // session ended before this close reached it) leaves the outcome to the task's result. (A task
        // that failed leaves the verdict to `death`.)
        const taskOutcome = this.portClosed.then(() =>
          this.parts.taskDone.then(
            (outcome) => outcome as SessionOutcome,
            () => new Promise<never>(() => undefined),
          ),
        );
        const outcome = await raceDeath(
          Promise.race([this.proxy.close(reason, options.graceMs), taskOutcome]),
          this.death,
        );
        // The task resolves right after close(); waiting for it means the thread holds nothing of ours.
        await raceDeath(this.parts.taskDone, this.death).catch(() => undefined);
        this.closed = true;
        this.release();
        return outcome;
      },
      () => this.closed,
    );
  }

  private call<T>(invoke: () => Promise<T>): Promise<T> {
    if (this.closed) {
      return Promise.reject(new TerminalError('SESSION_CLOSED', `session ${this.id} is closed`));
    }
    return this.calls.race(invoke());
  }

  private readonly deliverLiveOutput = (chunk: OutputChunk): void => {
    for (const listener of this.listeners) {
      try {
        listener(chunk);
      } catch {
        // A throwing subscriber must not break delivery to the others, nor the ring's reading.
      }
    }
  };

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.keyboard.dispose();
    this.liveOutput.dispose(); // hands the session's last output to the subscribers
    for (const view of [...this.rawViews]) view.dispose();
    this.listeners.clear();
    this.parts.controlPort.close();
    this.parts.dataPort.close();
    this.parts.onClosed(this.id);
  }
}
