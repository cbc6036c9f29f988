import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { answeredOrDied, raceDeath } from '../../../../dist/main/engine/thread-session.js';
import {
  commandRunning,
  isAlive,
  isTerminalError,
  TerminalError,
  testEngine,
  testingEngine,
  ttyOf,
} from '../../../support/engine.js';

const FIXTURE = fileURLToPath(new URL('../../../fixtures/host-exit.mjs', import.meta.url));

describe('engine: spawn, send, close through the host API', () => {
  it('settles `echo hi` with its output and exit code 0, then closes', async () => {
    const engine = await testEngine();
    const session = await engine.spawn();
    expect(session.pid).toBeGreaterThan(0);
    const result = await session.startSend({ text: 'echo hi' }).done;
    expect(result.waitReason).toBe('stdin_read');
    expect(result.exitCode).toBe(0);
    expect(result.viewport.split('\n')).toContain('hi');
    expect(result.sessionStatus).toEqual({
      kind: 'running',
      containment: expect.any(String),
      limits: expect.any(Object),
    });
    const outcome = await session.close();
    expect(outcome.reason).toBe('closed');
    expect(isAlive(session.pid)).toBe(false);
    expect(engine.sessions()).toHaveLength(0);
  });

  it('keeps error codes across the thread boundary (SEND_ACTIVE)', async () => {
    const engine = await testEngine();
    const session = await engine.spawn();
    const first = session.startSend({ text: 'sleep 0.5' });
    const second = session.startSend({ text: 'echo nope' });
    await expect(second.done).rejects.toMatchObject({ name: 'TerminalError', code: 'SEND_ACTIVE' });
    expect((await first.done).waitReason).toBe('stdin_read');
    await session.close();
  });

  it("a refused send's cancel and readOutput report the refusal, not an unknown send", async () => {
    // The host starts a send and awaits it in one thread call; calls naming the send follow it on the
    // port without waiting, so they must learn of a refusal from the send, not from the engine.
    const engine = await testEngine();
    const session = await engine.spawn();
    const first = session.startSend({ text: 'sleep 0.5' });
    const second = session.startSend({ text: 'echo nope' });
    const cancel = second.cancel();
    const output = second.readOutput();
    await expect(second.done).rejects.toMatchObject({ code: 'SEND_ACTIVE' });
    await expect(cancel).rejects.toMatchObject({ name: 'TerminalError', code: 'SEND_ACTIVE' });
    await expect(output).rejects.toMatchObject({ name: 'TerminalError', code: 'SEND_ACTIVE' });
    expect((await first.done).waitReason).toBe('stdin_read');
    await session.close();
  });

  it('rejects invalid configuration at creation, naming the field', async () => {
    await expect(testEngine({ handoffGraceMs: 10, pollIntervalMs: 50 })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('handoffGraceMs'),
    });
  });

  it('accepts every dialect by name and refuses another, in the config and per spawn', async () => {
    await expect(testEngine({ dialect: 'fish' as never })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('dialect: Invalid option: expected one of "bash"|"zsh"|"pwsh"'),
    });
    const engine = await testEngine({ dialect: 'zsh' });
    await expect(engine.spawn({ dialect: 'fish' as never })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: "invalid spawn option dialect: must be one of 'bash', 'zsh', 'pwsh'",
    });
    const zsh = await engine.spawn();
    expect(zsh.dialect).toBe('zsh');
    const bash = await engine.spawn({ dialect: 'bash' });
    expect(bash.dialect).toBe('bash');
    expect((await zsh.startSend({ text: 'true' }).done).foreground?.command).toBe('zsh');
    expect((await bash.startSend({ text: 'true' }).done).foreground?.command).toBe('bash');
  });
});

describe('engine: shutdown', () => {
  it('close() with 8 live sessions, one ignoring HUP and TERM, resolves within disposeGraceMs + 2 s and leaves nothing', async () => {
    const disposeGraceMs = 500;
    const engine = await testEngine({ disposeGraceMs });
    const sessions = await Promise.all(Array.from({ length: 8 }, () => engine.spawn()));
    const stubborn = sessions[0]!.startSend({ text: "trap '' HUP TERM; sleep 1000" });
    // The stubborn command runs (its trap is set before its sleep starts).
    await commandRunning(sessions[0]!.pid, 'sleep');
    const started = performance.now();
    await engine.close();
    const elapsed = performance.now() - started;
    expect(elapsed).toBeLessThan(disposeGraceMs + 2_000);
    expect((await stubborn.done).waitReason).toBe('session_exit');
    for (const session of sessions) expect(isAlive(session.pid)).toBe(false);
  });

  it('a session whose close failed is still closed by engine.close(), without aborting the host', async () => {
    const engine = await testingEngine({ disposeGraceMs: 100 }, { failTeardowns: 1 });
    const session = await engine.spawn();
    await session.startSend({ text: 'sleep 1000 &' }).done;
    await expect(session.close()).rejects.toMatchObject({ code: 'CLEANUP_FAILED' });
    expect(isAlive(session.pid)).toBe(true); // the failed close left it running: nothing was cached
    await engine.close();
    expect(isAlive(session.pid)).toBe(false);
    expect(engine.sessions()).toHaveLength(0);
  });

  it('32 sessions open and close concurrently', async () => {
    const engine = await testEngine({ threads: 2 });
    const sessions = await Promise.all(Array.from({ length: 32 }, () => engine.spawn()));
    expect(new Set(sessions.map((s) => s.id)).size).toBe(32);
    await Promise.all(sessions.map((s) => s.close()));
    expect(engine.sessions()).toHaveLength(0);
  });

  it('with threads: 2, concurrent spawns each get their own, correct terminal', async () => {
    const engine = await testEngine({ threads: 2 });
    expect(engine.threadCount()).toBe(2);
    const sessions = await Promise.all(Array.from({ length: 8 }, () => engine.spawn()));
    const ttys = await Promise.all(
      sessions.map(async (session) => {
        const result = await session.startSend({ text: 'tty' }).done;
        const reported = result.viewport.split('\n').find((line) => line.startsWith('/dev/'));
        expect(reported).toBe(ttyOf(session.pid));
        return reported;
      }),
    );
    expect(new Set(ttys).size).toBe(8);
  });
});

describe('engine: a dying engine thread', () => {
  for (const kind of ['throw', 'exit'] as const) {
    it(`(${kind}) rejects pending and later calls with ENGINE_THREAD_DIED, and its shells are killed`, async () => {
      const engine = await testingEngine();
      const session = await engine.spawn();
      const pending = session.startSend({ text: 'sleep 100' });
      await commandRunning(session.pid, 'sleep');
      await engine.crashThread(session, kind);
      await expect(pending.done).rejects.toMatchObject({ code: 'ENGINE_THREAD_DIED' });
      await expect(session.read()).rejects.toMatchObject({ code: 'ENGINE_THREAD_DIED' });
      await expect(session.signal('SIGINT')).rejects.toSatisfy((e) =>
        isTerminalError(e, 'ENGINE_THREAD_DIED'),
      );
      // The guard SIGKILLed the shell before the calls were rejected; it is gone within moments.
      const deadline = Date.now() + 2_000;
      while (isAlive(session.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(isAlive(session.pid)).toBe(false);
      // The host keeps working: a new session on a replacement thread.
      const next = await engine.spawn();
      expect((await next.startSend({ text: 'echo alive' }).done).exitCode).toBe(0);
      await next.close();
    });
  }
});

describe('engine: crashThread, the test hook', () => {
  it('settles when the thread is declared dead before its answer is read', async () => {
    // The thread answers a crash request before it crashes, but the answer comes on the session's
    // port and the death through the Worker's exit: the host may read the death first. A crash that
    // happened must not reject the hook then (every other call does reject, raceDeath).
    const died = (): Promise<never> => Promise.reject(new TerminalError('ENGINE_THREAD_DIED', 'dead'));
    const unanswered = new Promise<void>(() => undefined);
    await expect(raceDeath(unanswered, died())).rejects.toMatchObject({ code: 'ENGINE_THREAD_DIED' });
    await expect(answeredOrDied(unanswered, died())).resolves.toBeUndefined();
    await expect(
      answeredOrDied(Promise.resolve(), new Promise<never>(() => undefined)),
    ).resolves.toBeUndefined();
    const refused = Promise.reject(new TerminalError('INVALID_ARGUMENT', 'no such fault'));
    await expect(answeredOrDied(refused, new Promise<never>(() => undefined))).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});

describe('host-exit guard', () => {
  for (const mode of ['exit', 'sigterm'] as const) {
    it(`a host that ${mode === 'exit' ? 'calls process.exit()' : 'is killed by SIGTERM'} leaves no shell behind`, async () => {
      const child = spawn(process.execPath, [FIXTURE, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
      let stdout = '';
      const pids = await new Promise<number[]>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          if (stdout.includes('\n')) resolve(JSON.parse(stdout.split('\n')[0]!));
        });
        child.on('error', reject);
        child.on('exit', (code) =>
          stdout.includes('\n') ? undefined : reject(new Error(`fixture exited ${code}`)),
        );
      });
      expect(pids.length).toBe(6);
      for (const pid of pids) expect(isAlive(pid)).toBe(true);
      const exited = new Promise<[number | null, string | null]>((resolve) =>
        child.on('exit', (code, signal) => resolve([code, signal])),
      );
      // The fixture leaves only once told to, so the shells were alive when checked above.
      child.kill(mode === 'sigterm' ? 'SIGTERM' : 'SIGUSR2');
      // The host ends the way it asked to: never an abort from node-pty's exit callback during teardown.
      expect(await exited).toEqual(mode === 'exit' ? [0, null] : [null, 'SIGTERM']);
      const deadline = Date.now() + 2_000;
      while (pids.some(isAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(pids.filter(isAlive)).toEqual([]);
    });
  }
});
