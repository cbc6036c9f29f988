/**
 * What ends a send's wait from outside (never the command it typed: `cancel()` is the SIGINT path):
 * the caller's `AbortSignal`, or a {@link WaitEnd}, the daemon's handle of each send it starts for a
 * client. An `AbortSignal` per send, with a listener added and removed, cost a `true` through the
 * daemon 0.077 ms at p50 (lower in 11 of 11 alternating rounds, bench/README.md "daemon"): Node's
 * EventTarget bookkeeping, on a path that needs only a flag and a listener or two.
 */
import { TerminalError } from '../../shared/errors.js';
import { DisposableStore } from '../../shared/lifecycle.js';
import type { Disposable, SendOperation, SendRequest, TerminalSession } from '../../shared/types.js';

/** A wait's end, as the send's layers (the keyboard hold, the thread session) listen for it. */
export interface WaitAbort {
  /** The wait was ended already: listeners added now are never called. */
  readonly aborted: boolean;
  /** Calls `listener` once when the wait is ended; disposing the result forgets it. */
  onAbort(listener: () => void): Disposable;
}

/** `signal` as a {@link WaitAbort}. */
export function signalAbort(signal: AbortSignal): WaitAbort {
  return {
    get aborted() {
      return signal.aborted;
    },
    onAbort(listener) {
      return new DisposableStore().listen('wait abort listener', signal, 'abort', listener, { once: true });
    },
  };
}

const NOTHING_TO_FORGET: Disposable = { dispose: () => undefined };

/** A wait its owner ends with {@link end}: a flag and its listeners. */
export class WaitEnd implements WaitAbort {
  /** Undefined once ended. */
  private listeners: Array<() => void> | undefined = [];

  get aborted(): boolean {
    return this.listeners === undefined;
  }

  onAbort(listener: () => void): Disposable {
    const listeners = this.listeners;
    if (listeners === undefined) return NOTHING_TO_FORGET;
    listeners.push(listener);
    return {
      dispose: () => {
        const at = listeners.indexOf(listener);
        if (at !== -1) listeners.splice(at, 1);
      },
    };
  }

  /** Ends the wait: each listener is called once, in the order they were added. Idempotent. */
  end(): void {
    const listeners = this.listeners;
    if (listeners === undefined) return;
    this.listeners = undefined;
    for (const listener of listeners) listener();
  }
}

/** The engine's sessions take a {@link WaitAbort} in place of an AbortSignal (thread-session.ts). */
interface WaitEndable {
  startSendUntil(request: Omit<SendRequest, 'signal'>, waitEnd: WaitAbort): SendOperation;
}

/** `session.startSend(request)` with its wait ended by `waitEnd`; a session of another kind gets a signal. */
export function startSendUntil(
  session: TerminalSession,
  request: Omit<SendRequest, 'signal'>,
  waitEnd: WaitEnd,
): SendOperation {
  const endable = session as Partial<WaitEndable>;
  if (typeof endable.startSendUntil === 'function') return endable.startSendUntil(request, waitEnd);
  const controller = new AbortController();
  waitEnd.onAbort(() => controller.abort(new TerminalError('ABORTED', 'the wait was ended')));
  return session.startSend({ ...request, signal: controller.signal });
}
