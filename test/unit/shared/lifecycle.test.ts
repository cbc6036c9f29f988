/**
 * Ownership (src/shared/lifecycle.ts): what a store registers it releases on dispose, a disposed store
 * arms nothing, and the thread's count of live registrations follows both.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  DisposableSlot,
  DisposableStore,
  delay,
  liveOwnedResources,
  withinMs,
} from '../../../src/shared/lifecycle.js';

const timeouts = () => process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;

describe('DisposableStore', () => {
  it('clears its timers and runs its releases on dispose, newest first', () => {
    const store = new DisposableStore();
    const before = timeouts();
    const order: string[] = [];
    let fired = false;
    store.own('test first', () => order.push('first'));
    store.timeout('test timer', 60_000, () => {
      fired = true;
    });
    store.own('test last', () => order.push('last'));
    expect(timeouts()).toBe(before + 1);
    expect(liveOwnedResources()).toMatchObject({ 'test first': 1, 'test timer': 1, 'test last': 1 });
    store.dispose();
    expect(order).toEqual(['last', 'first']);
    expect(timeouts()).toBe(before);
    expect(fired).toBe(false);
    expect(liveOwnedResources()).not.toHaveProperty('test timer');
    expect(store.size).toBe(0);
  });

  it('forgets a timer once it fired, and an immediate once it ran', async () => {
    const store = new DisposableStore();
    const ran: string[] = [];
    store.immediate('test immediate', () => ran.push('immediate'));
    await new Promise<void>((resolve) => store.timeout('test timer', 1, () => resolve()));
    expect(ran).toEqual(['immediate']);
    expect(store.size).toBe(0);
    expect(liveOwnedResources()).not.toHaveProperty('test timer');
    store.dispose();
  });

  it('runs an interval until it is disposed, counted while it is armed', async () => {
    const store = new DisposableStore();
    let runs = 0;
    await new Promise<void>((resolve) => {
      store.interval('test interval', 1, () => {
        if (++runs === 3) resolve();
      });
    });
    expect(liveOwnedResources()['test interval']).toBe(1);
    store.dispose();
    expect(liveOwnedResources()).not.toHaveProperty('test interval');
    const after = runs;
    await new Promise<void>((resolve) => setImmediate(resolve));
    await delay('test pause', 5);
    expect(runs).toBe(after);
  });

  it('arms nothing once disposed, and releases what is added late at once', () => {
    const store = new DisposableStore();
    store.dispose();
    const before = timeouts();
    store.timeout('test late timer', 60_000, () => undefined);
    store.immediate('test late immediate', () => undefined);
    store.interval('test late interval', 60_000, () => undefined);
    let released = 0;
    store.own('test late release', () => released++);
    store.add({ dispose: () => released++ });
    expect(timeouts()).toBe(before);
    expect(released).toBe(2);
    expect(store.size).toBe(0);
    expect(liveOwnedResources()).not.toHaveProperty('test late timer');
  });

  it('disposes every item even when some throw, then reports all failures together', () => {
    const store = new DisposableStore();
    let released = false;
    store.own('test ok', () => {
      released = true;
    });
    store.own('test bad 1', () => {
      throw new Error('one');
    });
    store.own('test bad 2', () => {
      throw new Error('two');
    });
    expect(() => store.dispose()).toThrow(AggregateError);
    expect(released).toBe(true);
    expect(liveOwnedResources()).not.toHaveProperty('test bad 1');
  });
});

describe('DisposableStore.listen', () => {
  it('removes an emitter listener on dispose, counted while registered', () => {
    const emitter = new EventEmitter();
    const store = new DisposableStore();
    const seen: number[] = [];
    store.listen('test data listener', emitter, 'data', (n: number) => seen.push(n));
    emitter.emit('data', 1);
    emitter.emit('data', 2);
    expect(emitter.listenerCount('data')).toBe(1);
    expect(liveOwnedResources()).toMatchObject({ 'test data listener': 1 });
    store.dispose();
    emitter.emit('data', 3);
    expect(seen).toEqual([1, 2]);
    expect(emitter.listenerCount('data')).toBe(0);
    expect(liveOwnedResources()).not.toHaveProperty('test data listener');
  });

  it('runs a once listener at most once, leaving the store when it ran, also when it emits again', () => {
    const emitter = new EventEmitter();
    const store = new DisposableStore();
    const seen: string[] = [];
    store.listen(
      'test once listener',
      emitter,
      'end',
      (why: string) => {
        seen.push(why);
        emitter.emit('end', 'again from inside');
      },
      { once: true },
    );
    emitter.emit('end', 'first');
    emitter.emit('end', 'second');
    expect(seen).toEqual(['first']);
    expect(store.size).toBe(0);
    expect(emitter.listenerCount('end')).toBe(0);
    expect(liveOwnedResources()).not.toHaveProperty('test once listener');
  });

  it('registers on an EventTarget (an AbortSignal) and removes it through its handle', () => {
    const controller = new AbortController();
    const store = new DisposableStore();
    let aborted = 0;
    const handle = store.listen('test abort listener', controller.signal, 'abort', () => aborted++);
    handle.dispose();
    controller.abort();
    expect(aborted).toBe(0);
    expect(store.size).toBe(0);
    const again = new AbortController();
    store.listen('test abort listener', again.signal, 'abort', () => aborted++, { once: true });
    again.abort();
    expect(aborted).toBe(1);
    expect(store.size).toBe(0);
  });

  it('registers nothing on a disposed store', () => {
    const emitter = new EventEmitter();
    const store = new DisposableStore();
    store.dispose();
    store.listen('test late listener', emitter, 'data', () => undefined);
    expect(emitter.listenerCount('data')).toBe(0);
    expect(liveOwnedResources()).not.toHaveProperty('test late listener');
  });
});

describe('ImmediateTurn', () => {
  it('runs once per schedule, however often asked while pending; none once its store is disposed', async () => {
    const store = new DisposableStore();
    let runs = 0;
    const turn = store.turn('turn', () => runs++);
    turn.schedule();
    turn.schedule();
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toBe(1);
    turn.schedule();
    store.dispose();
    turn.schedule();
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toBe(1);
  });

  it('is inert when made by a disposed store', async () => {
    const store = new DisposableStore();
    store.dispose();
    let runs = 0;
    store.turn('late', () => runs++).schedule();
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toBe(0);
  });
});

describe('DisposableSlot', () => {
  it('disposes what it held when it is given something new, and on clear', () => {
    const store = new DisposableStore();
    const slot = store.add(new DisposableSlot());
    const before = timeouts();
    slot.value = store.timeout('test slot timer', 60_000, () => undefined);
    slot.value = store.timeout('test slot timer', 60_000, () => undefined);
    expect(timeouts()).toBe(before + 1);
    expect(liveOwnedResources()['test slot timer']).toBe(1);
    slot.clear();
    expect(timeouts()).toBe(before);
    expect(slot.value).toBeUndefined();
    store.dispose();
  });
});

describe('store-owned waits', () => {
  it('delay counts its timer while it waits, and its owner disposing it clears it', async () => {
    const waiting = delay('test delay', 1);
    expect(liveOwnedResources()['test delay']).toBe(1);
    await waiting;
    expect(liveOwnedResources()).not.toHaveProperty('test delay');
    const owner = new DisposableStore();
    const before = timeouts();
    let resolved = false;
    void delay('test owned delay', 60_000, owner).then(() => {
      resolved = true;
    });
    expect(timeouts()).toBe(before + 1);
    owner.dispose();
    expect(timeouts()).toBe(before);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(resolved).toBe(false); // nothing of a disposed owner runs after it
  });

  it('withinMs settles like its work, or undefined once the time passed, and leaves no timer', async () => {
    // Counted by label (the process's timer count moves with other work across these awaits).
    let finish!: (value: number) => void;
    const waiting = withinMs('test within', new Promise<number>((resolve) => (finish = resolve)), 60_000);
    expect(liveOwnedResources()['test within']).toBe(1);
    finish(7);
    await expect(waiting).resolves.toBe(7);
    expect(liveOwnedResources()).not.toHaveProperty('test within');
    await expect(withinMs('test within ok', Promise.resolve(42), 60_000)).resolves.toBe(42);
    await expect(withinMs('test within ok', Promise.reject(new Error('no')), 60_000)).rejects.toThrow('no');
    await expect(
      withinMs('test within ok', new Promise<number>(() => undefined), 1),
    ).resolves.toBeUndefined();
    expect(liveOwnedResources()).not.toHaveProperty('test within ok');
  });
});
