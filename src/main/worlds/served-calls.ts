/**
 * The serving side of the engine protocol's calls (SPEC §10, §12), shared by a world's server
 * (`serve --stdio`) and the daemon's connections: a call's answer frame, the aborts of calls in flight
 * by call id, and each served session's sends by the client's send id.
 */
import { TerminalError } from '../../shared/errors.js';
import { SETTLED_SENDS_KEPT } from '../../shared/protocol.js';
import type { SendOperation } from '../../shared/types.js';
import { type ServerFrame, toWireError } from '../../shared/world-protocol.js';

/** Ends what a call in flight waits for (a spawn, or a send's wait: never the command it sent). */
export type CallAbort = (reason: TerminalError) => void;

/** Calls in flight on one link. */
export class ServedCalls {
  private readonly aborts = new Map<number, CallAbort>();

  constructor(private readonly sendFrame: (frame: ServerFrame) => void) {}

  /**
   * Runs call `id` and answers it with a `result` or an `error` frame. `invoke` runs synchronously up
   * to the engine's own call, so calls take effect in arrival order.
   */
  async answer(id: number, invoke: () => unknown): Promise<void> {
    try {
      const value = await invoke();
      this.sendFrame({ t: 'result', id, value: value ?? null }); // throws, sending nothing, if too large
    } catch (error) {
      this.sendFrame({ t: 'error', id, error: toWireError(error) });
    } finally {
      this.aborts.delete(id);
    }
  }

  /**
   * How call `id` is aborted. Registered before anything awaits, so an `abort` frame in the same chunk
   * as its call finds it; forgotten once the call is answered.
   */
  abortableBy(id: number, abort: CallAbort): void {
    this.aborts.set(id, abort);
  }

  /** A signal for call `id` that its `abort` frame fires (for engine calls that take an AbortSignal). */
  signalFor(id: number): AbortSignal {
    const controller = new AbortController();
    this.abortableBy(id, (reason) => controller.abort(reason));
    return controller.signal;
  }

  /** The client's `abort` frame of call `id` (one already answered is ignored). */
  abort(id: number): void {
    this.aborts.get(id)?.(new TerminalError('ABORTED', 'the client aborted the call'));
  }

  /** The link ends: every call still waiting is aborted. */
  abortAll(reason: TerminalError): void {
    for (const abort of this.aborts.values()) abort(reason);
    this.aborts.clear();
  }

  /** The client is gone but its calls run on (the daemon keeps their results): nothing is aborted. */
  forgetAll(): void {
    this.aborts.clear();
  }
}

/**
 * One served session's sends by the client's send id, so its `send-output` and `send-cancel` find
 * them; the settled ones are trimmed to {@link SETTLED_SENDS_KEPT} (a `readOutput()` right after the
 * settle still finds its send).
 */
export class ServedSends {
  private readonly sends = new Map<number, SendOperation>();
  private readonly settled: number[] = [];

  constructor(private readonly sessionId: string) {}

  /** Keeps `operation` as send `sendId` until it is among the oldest settled ones. */
  track(sendId: number, operation: SendOperation): void {
    this.sends.set(sendId, operation);
    const settled = () => {
      this.settled.push(sendId);
      while (this.settled.length > SETTLED_SENDS_KEPT) this.sends.delete(this.settled.shift()!);
    };
    operation.done.then(settled, settled);
  }

  /** Send `sendId`; `INVALID_ARGUMENT` when it is unknown or long settled. */
  find(sendId: unknown): SendOperation {
    const operation = this.sends.get(Number(sendId));
    if (operation === undefined) {
      throw new TerminalError(
        'INVALID_ARGUMENT',
        `unknown send ${String(sendId)} of session ${this.sessionId}`,
      );
    }
    return operation;
  }
}
