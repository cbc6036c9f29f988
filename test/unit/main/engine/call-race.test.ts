/** CallRace (call-race.ts): a call settles like itself, or like the first ender that rejects. */
import { expect, it } from 'vitest';
import { CallRace } from '../../../../src/main/engine/call-race.js';

function ender(): { promise: Promise<never>; reject: (error: Error) => void } {
  let reject!: (error: Error) => void;
  const promise = new Promise<never>((_resolve, fail) => {
    reject = fail;
  });
  return { promise, reject };
}

it('settles like the call while no ender rejected', async () => {
  const race = new CallRace([ender().promise]);
  await expect(race.race(Promise.resolve(42))).resolves.toBe(42);
  await expect(race.race(Promise.reject(new Error('refused')))).rejects.toThrow('refused');
});

it('rejects the calls in flight with the first ender’s error, and every later call at once', async () => {
  const death = ender();
  const closed = ender();
  const race = new CallRace([death.promise, closed.promise]);
  const inFlight = race.race(new Promise<number>(() => undefined));
  death.reject(new Error('thread died'));
  closed.reject(new Error('port closed'));
  await expect(inFlight).rejects.toThrow('thread died');
  let answer!: (value: number) => void;
  const later = race.race(
    new Promise<number>((resolve) => {
      answer = resolve;
    }),
  );
  answer(7);
  await expect(later).rejects.toThrow('thread died');
});

it('a call answered before the ender rejects keeps its answer', async () => {
  const death = ender();
  const race = new CallRace([death.promise]);
  const answered = race.race(Promise.resolve('ok'));
  await expect(answered).resolves.toBe('ok');
  death.reject(new Error('thread died'));
  await expect(answered).resolves.toBe('ok');
});
