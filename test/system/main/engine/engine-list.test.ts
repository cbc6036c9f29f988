// engine.list() and name uniqueness of the in-process engine (SPEC §5, §12): every session is its
// caller's (attached), busy while a send runs, and a name is held by one session at a time.
import { describe, expect, it } from 'vitest';
import { testEngine } from '../../../support/engine.js';

describe('engine.list() in process', () => {
  it('lists every session attached, busy while a send runs, with its mode', async () => {
    const engine = await testEngine();
    const named = await engine.spawn({ name: 'build' });
    const plain = await engine.spawn();
    const running = named.startSend({ text: 'sleep 0.5; echo slept-$((6*7))' });
    const listed = await engine.list();
    expect(listed).toHaveLength(2);
    expect(listed.find((entry) => entry.id === named.id)).toMatchObject({
      name: 'build',
      attached: true,
      pid: named.pid,
      busy: true,
      mode: 'unconfined',
      status: { kind: 'running' },
    });
    expect(listed.find((entry) => entry.id === plain.id)).toMatchObject({ name: undefined, busy: false });
    expect((await running.done).viewport).toContain('slept-42');
    expect((await engine.list()).every((entry) => !entry.busy)).toBe(true);
  });

  it('names what held the terminal at the last result (the watch page shows it)', async () => {
    const engine = await testEngine();
    const session = await engine.spawn();
    expect((await engine.list())[0]?.foreground).toBeUndefined(); // no result yet
    const repl = await session.startSend({ text: 'python3 -q' }).done;
    expect(repl.foreground?.command).toBe('python3');
    expect((await engine.list())[0]?.foreground).toBe('python3');
    await session.startSend({ text: 'exit()' }).done;
    expect((await engine.list())[0]?.foreground).toBe('bash');
  });

  it('refuses a second session of the same name (NAME_TAKEN), also while the first still starts', async () => {
    const engine = await testEngine();
    const [first, second] = await Promise.allSettled([
      engine.spawn({ name: 'dev' }),
      engine.spawn({ name: 'dev' }),
    ]);
    expect(first.status).toBe('fulfilled');
    expect(second).toMatchObject({ status: 'rejected', reason: { code: 'NAME_TAKEN' } });
    await (first as PromiseFulfilledResult<{ close(): Promise<unknown> }>).value.close();
    // Once closed, the name is free again.
    expect((await engine.spawn({ name: 'dev' })).name).toBe('dev');
  });
});
