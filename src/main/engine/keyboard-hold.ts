/**
 * A person's hold of one session's keyboard (SPEC §13), kept on the host side of the session so it
 * works wherever the session's handle lives (in-process, or inside the daemon that forwards it).
 *
 * One holder at a time. While held, the model's sends with input wait for hand-back (and settle
 * `human` if their bound ends first, nothing written); a wait-only send follows the normal rules and
 * settles `human` only if its bound ends while held; a send in flight at take-over settles `human`
 * at once; the model's keys, signals and resizes are refused with `HUMAN_HOLDS`. The person's input
 * goes straight to the pty, past the send slot, and is never kept here.
 */

import { TerminalError } from '../../shared/errors.js';
import { DisposableStore } from '../../shared/lifecycle.js';
import type { SendSpec } from '../../shared/protocol.js';
import { precheckHeldSend } from '../../shared/send-precheck.js';
import type {
  CappedWait,
  Disposable,
  ForegroundProcess,
  HoldEnd,
  KeyboardHold,
  SendOperation,
  SessionStatus,
  TakeKeyboardOptions,
  TerminalSendResult,
} from '../../shared/types.js';
import type { WaitAbort } from './wait-end.js';

/** A hold without a heartbeat for this long ends (`heartbeat-lost`): a page that froze or lost its network. */
export const HOLD_HEARTBEAT_TIMEOUT_MS = 30_000;

/** What the hold needs of its session: the person's writes, ending a wait, and the status for a `human` result. */
export interface HeldSessionPort {
  /** Writes the person's input to the pty, past the send slot. */
  writePersonInput(data: string): Promise<void>;
  /** Ends the wait of a send in flight (it settles `running`, rewritten here to `human`). */
  endWait(sendId: number): Promise<void>;
  /** The session's status, for a result this side makes up. */
  status(): Promise<SessionStatus>;
}

/** A send as the session started it: its thread-side id and its operation. */
export interface StartedSend {
  sendId: number;
  op: SendOperation;
}

/** Timing of a session's keyboard, and the engine's bounds for a send's wait. */
export interface SessionKeyboardOptions {
  /** Default wait bound of a send (config `timeoutMs`). */
  timeoutMs: number;
  /** Largest wait bound (config `maxTimeoutMs`). */
  maxTimeoutMs: number;
  /** Largest input of one send (config `maxInputBytes`): a send that waits for hand-back is checked at once. */
  maxInputBytes: number;
  /** How long a hold lives without a heartbeat (default {@link HOLD_HEARTBEAT_TIMEOUT_MS}). */
  heartbeatTimeoutMs?: number;
}

/** A send in flight, as this side tracks it. */
interface TrackedSend {
  sendId: number;
  /** The send gives no input: it only waits. */
  waitOnly: boolean;
  /** A hold began while it was in flight: its `running` settle is the person's doing. */
  takenOver: boolean;
}

/** The keyboard of one session: who holds it, and the model's sends that wait for it. */
export class SessionKeyboard implements Disposable {
  private current: ActiveHold | undefined;
  private readonly inFlight = new Set<TrackedSend>();
  /** Sends with input that wait for hand-back; woken (or settled `human`) by `wake`. */
  private readonly waiting = new Set<() => void>();
  private readonly heartbeatTimeoutMs: number;
  private disposed = false;
  /** What held the terminal at the model's last result (the watch page lists it). */
  private foreground: ForegroundProcess | undefined;

  constructor(
    private readonly port: HeldSessionPort,
    private readonly options: SessionKeyboardOptions,
  ) {
    this.heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? HOLD_HEARTBEAT_TIMEOUT_MS;
  }

  /** When the current hold began, or undefined while nobody holds the keyboard. */
  get heldSince(): number | undefined {
    return this.current?.since;
  }

  /** What held the terminal when the model's last send settled. */
  get lastForeground(): ForegroundProcess | undefined {
    return this.foreground;
  }

  /** A send of the model is in flight or waiting for the keyboard. */
  get busy(): boolean {
    return this.inFlight.size > 0 || this.waiting.size > 0;
  }

  /** Gives `options.holder` the keyboard; `HUMAN_HOLDS` while someone else has it, unless `force`. */
  take(options: TakeKeyboardOptions): KeyboardHold {
    if (this.disposed) throw new TerminalError('SESSION_CLOSED', 'the session is closed');
    if (typeof options?.holder !== 'string' || options.holder === '') {
      throw new TerminalError('INVALID_ARGUMENT', 'takeKeyboard needs { holder: string, force?: boolean }');
    }
    const previous = this.current;
    if (previous !== undefined) {
      if (options.force !== true) {
        throw new TerminalError(
          'HUMAN_HOLDS',
          `the keyboard is held by another viewer since ${new Date(previous.since).toISOString()}; take it with force to end that hold`,
        );
      }
      // Not current while it ends: the sends that wait for hand-back keep waiting for the new holder.
      this.current = undefined;
      previous.end('forced');
    }
    const hold = new ActiveHold(options.holder, this.port, this.heartbeatTimeoutMs, (ended) => {
      if (this.current !== ended) return;
      this.current = undefined;
      this.wake();
    });
    this.current = hold;
    // A send in flight at take-over settles `human` at once: its wait ends now, and the person's keys
    // go to whatever it was waiting on. Its `running` result is rewritten when it arrives.
    for (const send of this.inFlight) {
      if (send.takenOver) continue;
      send.takenOver = true;
      void this.port.endWait(send.sendId).catch(() => undefined); // it settles by itself, or the session is gone
    }
    return hold;
  }

  /** Refuses a model's `what` (keys, a signal, a resize) while a person holds the keyboard. */
  assertModelMayDrive(what: 'keys' | 'signal' | 'resize'): void {
    if (this.current !== undefined) throw refusal(this.current, what);
  }

  /**
   * The model's send, through the hold: started at once while nobody holds the keyboard; while held,
   * keys are refused, input waits for hand-back within its bound, and a wait-only send starts.
   */
  guardSend(
    spec: SendSpec,
    abort: WaitAbort | undefined,
    start: (spec: SendSpec) => StartedSend,
  ): SendOperation {
    const waitOnly = spec?.text === undefined && spec?.keys === undefined;
    if (this.current === undefined || waitOnly) return this.track(start(spec), waitOnly);
    // Refused now with the code it would get without a hold (the thread checks again when it starts):
    // a bad request must not wait minutes for a hand-back only to fail then.
    try {
      precheckHeldSend(spec, this.options);
    } catch (error) {
      return refusedOperation(error);
    }
    if (spec.keys !== undefined) return refusedOperation(refusal(this.current, 'keys'));
    return this.deferred(spec, abort, start);
  }

  /** Ends the hold (`closed`) and wakes the sends that wait: the closed session refuses them. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.current?.end('closed');
  }

  private track(started: StartedSend, waitOnly: boolean): SendOperation {
    const send: TrackedSend = { sendId: started.sendId, waitOnly, takenOver: false };
    this.inFlight.add(send);
    const done = started.op.done.then(
      (result) => {
        this.inFlight.delete(send);
        if (result.foreground !== undefined) this.foreground = result.foreground;
        return this.asHuman(send, result);
      },
      (error: unknown) => {
        this.inFlight.delete(send);
        throw error;
      },
    );
    return { done, readOutput: () => started.op.readOutput(), cancel: () => started.op.cancel() };
  }

  /**
   * A result as the model gets it: `running` from a take-over's ended wait, or a wait-only send's bound
   * (`running`/`timeout`) that ended while a person held the keyboard, is `human`.
   */
  private asHuman(send: TrackedSend, result: TerminalSendResult): TerminalSendResult {
    const boundEnded = result.waitReason === 'running' || result.waitReason === 'timeout';
    if (send.takenOver && result.waitReason === 'running') {
      return { ...result, waitReason: 'human', humanHold: 'taken_over' };
    }
    if (send.waitOnly && boundEnded && this.current !== undefined) {
      return { ...result, waitReason: 'human', humanHold: 'wait_only' };
    }
    return result;
  }

  /** A send with input while held: it waits for hand-back until its bound ends. */
  private deferred(
    spec: SendSpec,
    abort: WaitAbort | undefined,
    start: (spec: SendSpec) => StartedSend,
  ): SendOperation {
    const startedAt = performance.now();
    const boundMs = waitBoundOf(spec, this.options);
    // The send starts (if it does) with what is left of its bound and without `maxWaitMs`, so the thread
    // cannot tell the cap cut it: the result says so here, as it would have without a hold.
    const cappedWait = cappedWaitOf(spec, this.options);
    const withCap = (result: TerminalSendResult): TerminalSendResult =>
      cappedWait === undefined ? result : { ...result, cappedWait: { ...cappedWait } };
    const store = new DisposableStore();
    let settleHuman!: () => void;
    let started: SendOperation | undefined;
    const done = new Promise<TerminalSendResult>((resolve, reject) => {
      const human = (): void => {
        store.dispose();
        this.port.status().then(
          (sessionStatus) =>
            resolve(
              withCap({
                viewport: '',
                waitReason: 'human',
                humanHold: 'not_typed',
                sessionStatus,
                truncated: false,
                elapsedMs: Math.round((performance.now() - startedAt) * 100) / 100,
              }),
            ),
          reject,
        );
      };
      settleHuman = human;
      const wake = (): void => {
        if (store.disposed) return;
        store.dispose();
        const left = Math.floor(boundMs - (performance.now() - startedAt));
        if (this.current !== undefined || left < 1) {
          human();
          return;
        }
        // Written after hand-back with what is left of its bound (the cap already applied to it).
        const { maxWaitMs: _appliedAlready, ...rest } = spec;
        const waitedMs = performance.now() - startedAt;
        started = this.track(start({ ...rest, timeoutMs: left }), false);
        // The call's time counts from the send, not from hand-back: the wait for the keyboard is part of it.
        const fromSendStart = (result: TerminalSendResult): TerminalSendResult => ({
          ...result,
          elapsedMs: Math.round((waitedMs + result.elapsedMs) * 100) / 100,
        });
        started.done.then((result) => resolve(withCap(fromSendStart(result))), reject);
      };
      this.waiting.add(wake);
      store.own('keyboard wait', () => this.waiting.delete(wake));
      store.timeout('keyboard wait bound', boundMs, human);
      if (abort !== undefined) {
        // A client's abort ends only the wait: nothing of this send was written.
        if (abort.aborted) {
          human();
          return;
        }
        store.add(abort.onAbort(() => human()));
      }
    });
    return {
      done,
      readOutput: async () =>
        started === undefined ? { delta: '', truncated: false } : started.readOutput(),
      cancel: async () => {
        if (started !== undefined) return started.cancel();
        if (!store.disposed) settleHuman();
      },
    };
  }

  private wake(): void {
    for (const wake of [...this.waiting]) wake();
  }
}

/** What a `HUMAN_HOLDS` refusal says was refused. */
const REFUSED = {
  keys: 'these keys were refused',
  signal: 'this signal was refused',
  resize: 'this resize was refused',
} as const;

/** The `HUMAN_HOLDS` refusal of a model's `what`: refused, not queued, and what to do instead. */
function refusal(hold: ActiveHold, what: keyof typeof REFUSED): TerminalError {
  return new TerminalError(
    'HUMAN_HOLDS',
    `a person holds this session's keyboard (since ${new Date(hold.since).toISOString()}): ${REFUSED[what]}, ` +
      'nothing was sent. Send it again once they hand the keyboard back (a send without input waits ' +
      'meanwhile), or ask the user to hand it back',
  );
}

/** A send's wait bound as the engine computes it: `min(timeoutMs ?? config, maxWaitMs, maxTimeoutMs)`. */
function waitBoundOf(spec: SendSpec, options: SessionKeyboardOptions): number {
  const asked = spec.timeoutMs ?? options.timeoutMs;
  return Math.min(asked, spec.maxWaitMs ?? Number.POSITIVE_INFINITY, options.maxTimeoutMs);
}

/**
 * The `cappedWait` report of a send whose `maxWaitMs` cut its bound, computed as the engine does
 * (`maxWaitMs` below the asked bound and within `maxTimeoutMs`); undefined when it did not.
 */
function cappedWaitOf(spec: SendSpec, options: SessionKeyboardOptions): CappedWait | undefined {
  const asked = spec.timeoutMs ?? options.timeoutMs;
  const cap = spec.maxWaitMs;
  if (cap === undefined || cap >= asked || cap > options.maxTimeoutMs) return undefined;
  return { boundMs: cap, askedMs: asked };
}

/** A send refused before it started: its `done` rejects with `error`. */
function refusedOperation(error: unknown): SendOperation {
  const refused = Promise.reject(error);
  refused.catch(() => undefined);
  return { done: refused, readOutput: () => refused, cancel: async () => undefined };
}

/** One person's hold. Ends once, with its reason; its heartbeat timer is owned by its store. */
class ActiveHold implements KeyboardHold {
  readonly since = Date.now();
  readonly ended: Promise<HoldEnd>;
  private endReason: HoldEnd | undefined;
  private resolveEnded!: (reason: HoldEnd) => void;
  private readonly store = new DisposableStore();
  private heartbeatTimer: Disposable | undefined;

  constructor(
    readonly holder: string,
    private readonly port: HeldSessionPort,
    private readonly heartbeatTimeoutMs: number,
    private readonly onEnd: (hold: ActiveHold) => void,
  ) {
    this.ended = new Promise((resolve) => {
      this.resolveEnded = resolve;
    });
    this.heartbeat();
  }

  async write(data: string): Promise<void> {
    if (this.endReason !== undefined) {
      throw new TerminalError('HUMAN_HOLDS', `this keyboard hold has ended (${this.endReason})`);
    }
    if (typeof data !== 'string') throw new TerminalError('INVALID_ARGUMENT', 'input must be a string');
    if (data === '') return;
    await this.port.writePersonInput(data);
  }

  heartbeat(): void {
    if (this.endReason !== undefined) return;
    if (this.heartbeatTimer !== undefined) this.store.delete(this.heartbeatTimer);
    this.heartbeatTimer = this.store.timeout('keyboard hold heartbeat', this.heartbeatTimeoutMs, () =>
      this.end('heartbeat-lost'),
    );
  }

  async release(): Promise<void> {
    this.end('handed-back');
  }

  /** Ends the hold once; later calls keep the first reason. */
  end(reason: HoldEnd): void {
    if (this.endReason !== undefined) return;
    this.endReason = reason;
    this.store.dispose();
    this.onEnd(this);
    this.resolveEnded(reason);
  }
}
