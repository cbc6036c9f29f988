/**
 * Startup publication (SPEC §4.1): a session is published only after readiness; zero-output silence
 * never publishes; the absolute timeout rejects the spawn; an abort rejects with the caller's exact
 * reason; a failed cleanup after that keeps both failures.
 */
import { describe, expect, it } from 'vitest';
import { isAlive, TerminalBackendCleanupError, testEngine, testingEngine } from '../../../support/engine.js';

const silent = { shellPath: '/bin/sleep', shellArgs: ['100'] };

describe('startup publication', () => {
  it('publishes bash only at its proven prompt, with the startup output as MOTD', async () => {
    const engine = await testEngine({
      shellPath: '/bin/bash',
      shellArgs: ['--noprofile', '--norc', '-i', '-c', 'echo welcome; exec bash --noprofile --norc -i'],
    });
    const session = await engine.spawn();
    expect(session.motd).toContain('welcome');
    const result = await session.startSend({ text: 'echo ready' }).done;
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
  });

  it('zero-output silence never publishes: the absolute timeout rejects the spawn', async () => {
    const engine = await testEngine({ ...silent, idleSilenceMs: 100, handoffGraceMs: 50, timeoutMs: 600 });
    const started = performance.now();
    await expect(engine.spawn()).rejects.toMatchObject({ code: 'SPAWN_TIMEOUT' });
    // Not at the 100 ms silence bound: only the 600 ms timeout ended it.
    expect(performance.now() - started).toBeGreaterThanOrEqual(590);
    expect(engine.sessions()).toHaveLength(0);
  });

  it('output followed by silence publishes (inferred) with that output as MOTD', async () => {
    const engine = await testEngine({
      shellPath: '/bin/sh',
      shellArgs: ['-c', 'echo hello-from-startup; exec sleep 100'],
      idleSilenceMs: 150,
      handoffGraceMs: 50,
    });
    const session = await engine.spawn();
    expect(session.motd).toContain('hello-from-startup');
    await session.close();
  });

  it('a shell that exits during startup rejects with SPAWN_EXITED', async () => {
    const engine = await testEngine({ shellPath: '/bin/sh', shellArgs: ['-c', 'echo bye; exit 4'] });
    await expect(engine.spawn()).rejects.toMatchObject({ code: 'SPAWN_EXITED' });
  });

  it('aborting a spawn closes the unpublished shell and rejects with the exact abort reason', async () => {
    const engine = await testEngine(silent);
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    setTimeout(() => controller.abort(reason), 100);
    const failure = await engine.spawn({}, controller.signal).catch((error: unknown) => error);
    expect(failure).toBe(reason);
    expect(engine.sessions()).toHaveLength(0);
  });

  it('an already-aborted signal rejects before anything starts', async () => {
    const engine = await testEngine();
    const reason = { why: 'not now' };
    await expect(engine.spawn({}, AbortSignal.abort(reason))).rejects.toBe(reason);
  });

  it('when closing the unpublished shell fails too, TerminalBackendCleanupError keeps both failures', async () => {
    const engine = await testingEngine({ ...silent, disposeGraceMs: 100 }, { failTeardowns: 1 });
    const controller = new AbortController();
    const reason = new Error('abort during startup');
    setTimeout(() => controller.abort(reason), 100);
    const failure = await engine.spawn({}, controller.signal).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TerminalBackendCleanupError);
    const cleanup = failure as TerminalBackendCleanupError;
    expect(cleanup.code).toBe('CLEANUP_FAILED');
    expect(cleanup.cause).toBe(reason);
    expect(cleanup.cleanupError).toMatchObject({ code: 'CLEANUP_FAILED' });
  });

  it('invalid spawn options are refused with the field named', async () => {
    const engine = await testEngine();
    await expect(engine.spawn({ rows: 0 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('rows'),
    });
    await expect(engine.spawn({ cwd: '/definitely/missing' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(
      engine.spawn({ sandbox: { mode: 'read-only', workspaceRoot: '/tmp' } }),
    ).rejects.toMatchObject({
      code: 'SANDBOX_UNAVAILABLE',
    });
  });

  it('after engine.close() new spawns fail with ENGINE_CLOSED', async () => {
    const engine = await testEngine();
    const session = await engine.spawn();
    await engine.close();
    expect(isAlive(session.pid)).toBe(false);
    await expect(engine.spawn()).rejects.toMatchObject({ code: 'ENGINE_CLOSED' });
    await expect(session.read()).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
  });
});
