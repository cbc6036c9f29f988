/**
 * Ownership of timers and listeners. Every timer and listener an object arms is registered with the
 * object's `DisposableStore`; disposing the owner releases them all, and a disposed store arms nothing
 * more (a late entry into a disposed object cannot leave a timer behind). The thread keeps a count of
 * what is registered and not yet released, by label, so a test can show that a closed session left
 * nothing on its thread (`liveOwnedResources`).
 */
import type { Disposable } from './types.js';

/** Registered and not yet released, by label, on this thread. */
const liveByLabel = new Map<string, number>();

function count(label: string, delta: number): void {
  const next = (liveByLabel.get(label) ?? 0) + delta;
  if (next === 0) liveByLabel.delete(label);
  else liveByLabel.set(label, next);
}

/** Timers and listeners registered with a store and not yet released on this thread, by label. */
export function liveOwnedResources(): Record<string, number> {
  return Object.fromEntries(liveByLabel);
}

/** A release that runs once, counted under its label while it has not run. */
class Owned implements Disposable {
  private release: (() => void) | undefined;

  constructor(
    private readonly label: string,
    release: () => void,
    private readonly store: DisposableStore,
  ) {
    this.release = release;
    count(label, 1);
  }

  /** Whether the release has not run yet. */
  get live(): boolean {
    return this.release !== undefined;
  }

  dispose(): void {
    const release = this.release;
    if (release === undefined) return;
    this.release = undefined;
    count(this.label, -1);
    this.store.forget(this);
    release();
  }
}

/** How a store's timer is armed. */
export interface TimerOptions {
  /** The timer does not keep the process alive on its own. */
  unref?: boolean;
}

/**
 * A listener of any arguments. Node's emitters type theirs as `(...args: any[]) => void`; this is the
 * same, since a store registers listeners of every emitter's events.
 */
// biome-ignore lint/suspicious/noExplicitAny: the emitters' own listener type (see above)
type Listener = (...args: any[]) => void;

/**
 * What a store's listener is registered on: a node `EventEmitter` (a stream, a socket, a port,
 * `process`) or a DOM-style `EventTarget` (an `AbortSignal`).
 */
export type ListenerTarget =
  | { on(event: string, listener: Listener): unknown; off(event: string, listener: Listener): unknown }
  | {
      addEventListener(type: string, listener: Listener): void;
      removeEventListener(type: string, listener: Listener): void;
    };

/** How a store's listener is registered. */
export interface ListenOptions {
  /** It runs at most once, and leaves the store when it did. */
  once?: boolean;
}

/** An inert handle: what a disposed store hands out instead of arming anything. */
const NOTHING: Disposable = Object.freeze({ dispose: () => undefined });

/** Disposables released together: the timers and listeners of one owner, and the objects it owns. */
export class DisposableStore implements Disposable {
  private readonly items = new Set<Disposable>();
  private isDisposed = false;

  /** True once disposed: nothing more can be registered. */
  get disposed(): boolean {
    return this.isDisposed;
  }

  /** Registered items not yet released. */
  get size(): number {
    return this.items.size;
  }

  /** Registers `item`; when the store is disposed already, disposes it at once. */
  add<T extends Disposable>(item: T): T {
    if (this.isDisposed) item.dispose();
    else this.items.add(item);
    return item;
  }

  /** Registers a release (a listener's removal, a writer's close) under `label`. */
  own(label: string, release: () => void): Disposable {
    if (this.isDisposed) {
      release();
      return NOTHING;
    }
    const owned = new Owned(label, release, this);
    this.items.add(owned);
    return owned;
  }

  /**
   * A `setTimeout` owned by this store; it leaves the store once it fired. Inert on a disposed store.
   * `unref`: it does not keep the process alive on its own (a host's reader of optional output).
   */
  timeout(label: string, ms: number, run: () => void, options: TimerOptions = {}): Disposable {
    if (this.isDisposed) return NOTHING;
    const timer = setTimeout(() => {
      owned.dispose(); // fired: nothing to clear, but it is no longer live
      run();
    }, ms);
    if (options.unref === true) timer.unref();
    const owned = new Owned(label, () => clearTimeout(timer), this);
    this.items.add(owned);
    return owned;
  }

  /**
   * A `setInterval` owned by this store: it runs every `ms` until disposed (by the store or through the
   * returned handle). Inert on a disposed store.
   */
  interval(label: string, ms: number, run: () => void, options: TimerOptions = {}): Disposable {
    if (this.isDisposed) return NOTHING;
    const timer = setInterval(run, ms);
    if (options.unref === true) timer.unref();
    const owned = new Owned(label, () => clearInterval(timer), this);
    this.items.add(owned);
    return owned;
  }

  /** A `setImmediate` owned by this store; it leaves the store once it ran. Inert on a disposed store. */
  immediate(label: string, run: () => void, options: TimerOptions = {}): Disposable {
    if (this.isDisposed) return NOTHING;
    const immediate = setImmediate(() => {
      owned.dispose();
      run();
    });
    if (options.unref === true) immediate.unref();
    const owned = new Owned(label, () => clearImmediate(immediate), this);
    this.items.add(owned);
    return owned;
  }

  /**
   * A recurring `setImmediate` turn, owned by this store once for its owner's life: for a hot path that
   * schedules thousands of turns a second, where a registration per turn would cost (the output
   * pipeline's: ~0.45 µs a turn more than a bare `setImmediate`). Inert on a disposed store.
   */
  turn(label: string, run: () => void): ImmediateTurn {
    const turn = new ImmediateTurn(run);
    this.own(label, () => turn.dispose());
    return turn;
  }

  /**
   * `listener` on `target`'s `event`, removed when this store is disposed (or through the returned
   * handle); with `once`, it runs at most once and leaves the store when it did. Registers nothing on a
   * disposed store.
   */
  listen(
    label: string,
    target: ListenerTarget,
    event: string,
    listener: Listener,
    options: ListenOptions = {},
  ): Disposable {
    if (this.isDisposed) return NOTHING;
    const once = options.once === true;
    const registered: Listener = once
      ? (...args) => {
          owned.dispose(); // removes it before it runs: a listener that emits again is not re-entered
          listener(...args);
        }
      : listener;
    const owned =
      'on' in target
        ? new Owned(label, () => target.off(event, registered), this)
        : new Owned(label, () => target.removeEventListener(event, registered), this);
    this.items.add(owned);
    if ('on' in target) target.on(event, registered);
    else target.addEventListener(event, registered);
    return owned;
  }

  /** Disposes `item` and forgets it. */
  delete(item: Disposable): void {
    this.items.delete(item);
    item.dispose();
  }

  /** Forgets `item` without disposing it (it released itself). */
  forget(item: Disposable): void {
    this.items.delete(item);
  }

  /**
   * Releases everything, newest first (an owner's late registrations may use its earlier ones), and
   * refuses later registrations. Every item is disposed even if some throw; their errors are thrown
   * afterwards together. Idempotent.
   */
  dispose(): void {
    if (this.isDisposed) return;
    this.isDisposed = true;
    const items = [...this.items].reverse();
    this.items.clear();
    const errors: unknown[] = [];
    for (const item of items) {
      try {
        item.dispose();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, `${errors.length} disposables failed to dispose`);
  }
}

/** At most one disposable at a time, such as a re-armed timer: setting a new one disposes the old. */
export class DisposableSlot implements Disposable {
  private current: Disposable | undefined;

  /** The held disposable, if any. */
  get value(): Disposable | undefined {
    return this.current;
  }

  /** Holds `next`, disposing what was held. */
  set value(next: Disposable | undefined) {
    const previous = this.current;
    this.current = next;
    if (previous !== next) previous?.dispose();
  }

  /** Disposes what is held and holds nothing. */
  clear(): void {
    this.value = undefined;
  }

  dispose(): void {
    this.clear();
  }
}

/** Base of an object that owns timers and listeners: registers them with `owned`, releases them on dispose. */
export abstract class DisposableOwner implements Disposable {
  /** What this object owns; disposed with it. */
  protected readonly owned = new DisposableStore();

  /** True once disposed: entry points return early. */
  get disposed(): boolean {
    return this.owned.disposed;
  }

  /** Releases everything this object owns; idempotent. */
  dispose(): void {
    this.owned.dispose();
  }
}

/**
 * Resolves after `ms`. The timer belongs to `store` when given (disposing the owner clears it, and the
 * promise then never resolves: nothing of the closed owner runs after it), else to a store of its own;
 * either way it is counted under `label` while it waits.
 */
export function delay(
  label: string,
  ms: number,
  store?: DisposableStore,
  options: TimerOptions = {},
): Promise<void> {
  return new Promise<void>((resolve) => {
    (store ?? new DisposableStore()).timeout(label, ms, resolve, options);
  });
}

/**
 * Resolves like `work`, or with undefined once `ms` passed, whichever comes first; never rejects on time
 * (a bounded wait). The timer is owned by a store of the wait's own, released as soon as it is decided.
 */
export async function withinMs<T>(label: string, work: Promise<T>, ms: number): Promise<T | undefined> {
  const wait = new DisposableStore();
  try {
    return await Promise.race([
      work,
      new Promise<undefined>((resolve) => wait.timeout(label, ms, () => resolve(undefined))),
    ]);
  } finally {
    wait.dispose();
  }
}

/** A recurring turn of the event loop: see {@link DisposableStore.turn}. */
export class ImmediateTurn implements Disposable {
  private pending: NodeJS.Immediate | undefined;
  private ended = false;

  constructor(private readonly run: () => void) {}

  /** Asks for one run of the turn in the next check phase; nothing more while one is pending. */
  schedule(): void {
    if (this.ended || this.pending !== undefined) return;
    this.pending = setImmediate(this.fire);
  }

  /** Cancels a pending run; later `schedule()` calls do nothing. */
  dispose(): void {
    this.ended = true;
    if (this.pending !== undefined) clearImmediate(this.pending);
    this.pending = undefined;
  }

  private readonly fire = (): void => {
    this.pending = undefined;
    this.run();
  };
}
