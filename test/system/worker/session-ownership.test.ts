/**
 * Ownership on the engine thread: whatever a session arms there — pty listeners, send deadlines and
 * probes, reply checks, live-output batches, output processing — is released when the session is
 * closed, however it ended. Read through the internal test entry's thread diagnostics: with `threads: 1`
 * every session runs on the thread it reports on.
 */
import { describe, expect, it } from 'vitest';
import {
  commandRunning,
  type TerminalSession,
  type ThreadDiagnostics,
  testingEngine,
} from '../../support/engine.js';
import { until } from '../../support/until.js';

type Engine = Awaited<ReturnType<typeof testingEngine>>;

/**
 * What the thread holds once that stopped changing: a thread that just started may still be closing
 * the handles of its cgroup probe process.
 */
async function steadyState(engine: Engine): Promise<ThreadDiagnostics> {
  let previous = JSON.stringify(await engine.threadDiagnostics());
  return until('the engine thread to settle', async () => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const now = await engine.threadDiagnostics();
    const same = JSON.stringify(now) === previous;
    previous = JSON.stringify(now);
    return same && now;
  });
}

/** Waits until the thread holds what it held in `before` again; returns what it holds then. */
async function settledBack(engine: Engine, before: ThreadDiagnostics): Promise<ThreadDiagnostics> {
  let last: ThreadDiagnostics | undefined;
  try {
    return await until(
      'the engine thread to hold no more than before the session',
      async () => {
        last = await engine.threadDiagnostics();
        return (
          JSON.stringify(last.ownedResources) === JSON.stringify(before.ownedResources) &&
          JSON.stringify(last.activeResources) === JSON.stringify(before.activeResources) &&
          last
        );
      },
      3_000,
    );
  } catch {
    return last ?? (await engine.threadDiagnostics()); // compared below, so the failure shows the leftovers
  }
}

/** Runs a send and returns its output lines. */
async function lines(session: TerminalSession, text: string): Promise<string[]> {
  return (await session.startSend({ text }).done).viewport.split('\n');
}

describe('a closed session leaves nothing on its engine thread', () => {
  it('after sends, a cancel, a terminal query, live and raw output and a close with a send in flight', async () => {
    const engine = await testingEngine({ threads: 1 });
    const before = await steadyState(engine);
    expect(before.ownedResources).toEqual({});
    const session = await engine.spawn();
    const received: string[] = [];
    const subscription = session.onOutput((chunk) => received.push(chunk.text));
    const rawReceived: string[] = [];
    const rawView = await session.openRaw((chunk) => rawReceived.push(chunk.data));
    expect(await lines(session, 'echo ok-$((6*7))')).toContain('ok-42');
    // A query answered by the terminal (the reply gate holds and checks it), then a cancelled job.
    const answered = await lines(
      session,
      `IFS=';' read -sdR -p $'\\e[6n' ROW COL; echo "got-$((\${#COL} > 0))"`,
    );
    expect(answered).toContain('got-1');
    const job = session.startSend({ text: 'sleep 30' });
    await commandRunning(session.pid, 'sleep');
    await job.cancel();
    expect((await job.done).exitCode).toBe(130);
    // Close while a send waits: its deadline and probes are armed.
    const inFlight = session.startSend({ text: 'sleep 30' });
    await until('the send is in flight', async () => {
      const held = (await engine.threadDiagnostics()).ownedResources;
      return (held['send deadline'] ?? 0) > 0 && (held['pty data listener'] ?? 0) > 0;
    });
    await until('live output arrived', () => received.join('').includes('ok-42'));
    await until('raw output arrived', () => rawReceived.join('').includes('ok-42'));
    await session.close();
    expect((await inFlight.done).waitReason).toBe('session_exit');
    subscription.dispose();
    rawView.dispose();
    const after = await settledBack(engine, before);
    expect(after.ownedResources).toEqual(before.ownedResources);
    expect(after.activeResources).toEqual(before.activeResources);
  });

  it('after the shell exited on its own', async () => {
    const engine = await testingEngine({ threads: 1 });
    const before = await steadyState(engine);
    const session = await engine.spawn();
    const exit = await session.startSend({ text: 'exit 3' }).done;
    expect(exit.waitReason).toBe('session_exit');
    await session.close();
    const after = await settledBack(engine, before);
    expect(after.ownedResources).toEqual(before.ownedResources);
    expect(after.activeResources).toEqual(before.activeResources);
  });

  for (const [what, shellArgs, code] of [
    ['exited', ['-c', 'echo bye; exit 4'], 'SPAWN_EXITED'],
    ['timed out', ['-c', 'sleep 30'], 'SPAWN_TIMEOUT'],
  ] as const) {
    it(`after a startup that ${what}`, async () => {
      const engine = await testingEngine({
        threads: 1,
        shellPath: '/bin/sh',
        shellArgs: [...shellArgs],
        timeoutMs: 500,
      });
      const before = await steadyState(engine);
      await expect(engine.spawn()).rejects.toMatchObject({ code });
      const after = await settledBack(engine, before);
      expect(after.ownedResources).toEqual(before.ownedResources);
      expect(after.activeResources).toEqual(before.activeResources);
    });
  }
});
