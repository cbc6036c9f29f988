// ctx.pty through the host with pty-local on a FakeEngine: owner isolation, coded unknown ids, kill
// semantics, spawn reservations and cancellation, disposal (incl. failing closes). Real shells are
// covered by harness-e2e.test.ts; the fake is here to pin the races and failures on demand.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Host } from '../../../../src/main/harness/host.js';
import type { PtyService } from '../../../../src/main/harness/pty-service.js';
import { TerminalBackendCleanupError } from '../../../../src/shared/errors.js';
import { createFakeHost, type FakeHost } from '../../../support/fake-host.js';
import { FakeEngine, type FakeSession, gate } from '../../../support/fake-pty-engine.js';

let fixture: FakeHost;
let workspace: string;
let host: Host;
let engine: FakeEngine;
let pty: PtyService;

beforeEach(async () => {
  fixture = await createFakeHost('harness-pty-');
  ({ host, engine, workspace } = fixture);
  pty = host.service('pty');
});

afterEach(async () => {
  await fixture.dispose().catch(() => {});
});

const fake = (index: number) => engine.spawned[index] as FakeSession;

describe('PtyService spawn', () => {
  it('spawns through the engine with the resolved policy; the workspace root is the default cwd', async () => {
    const opened = await pty.spawn('alice', { type: 'shell', name: 'build' });
    expect(opened).toMatchObject({
      sessionId: 'shell-1',
      name: 'build',
      type: 'shell',
      pid: fake(0).pid,
      status: { kind: 'running' },
      motd: 'fake motd',
      sandbox: { mode: 'workspace-write', workspaceRoot: workspace },
    });
    expect(engine.spawnOptions[0]).toEqual({
      cwd: workspace,
      name: 'build',
      sandbox: { mode: 'workspace-write', workspaceRoot: workspace },
    });
  });

  it('resolves a relative cwd against the workspace root and, unconfined, rejects a missing one with what to do', async () => {
    mkdirSync(join(workspace, 'sub'));
    await pty.spawn('alice', { type: 'shell', cwd: 'sub' });
    expect(engine.spawnOptions[0]?.cwd).toBe(join(workspace, 'sub'));
    // Confined, the sandbox judges the cwd: a hidden one and a missing one alike (sandbox-home.test.ts).
    await pty.spawn('alice', { type: 'shell', cwd: 'nope' });
    expect(engine.spawnOptions[1]?.cwd).toBe(join(workspace, 'nope'));
    host.service('sandboxPolicy').setMode({ mode: 'danger-full-access', session: 'carol' });
    await expect(pty.spawn('carol', { type: 'shell', cwd: 'nope' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringMatching(/is not an existing directory; .*omit cwd to start in/),
    });
    expect(pty.hasOwnerActivity('carol')).toBe(false);
  });

  it('rejects an unknown backend type with the registered types', async () => {
    await expect(pty.spawn('alice', { type: 'ssh' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: 'unknown PTY backend type "ssh"; registered types: shell',
    });
  });

  it('counts a spawn in progress as owner activity and rejects with the caller’s exact abort reason', async () => {
    engine.spawnGate = gate();
    const controller = new AbortController();
    const spawning = pty.spawn('alice', { type: 'shell' }, controller.signal);
    expect(pty.hasOwnerActivity('alice')).toBe(true);
    expect(pty.hasOwnerActivity('bob')).toBe(false);
    const reason = { why: 'user pressed stop' };
    controller.abort(reason);
    await expect(spawning).rejects.toBe(reason);
    expect(pty.hasOwnerActivity('alice')).toBe(false);
  });

  it('closes a session the backend published after the spawn was aborted, and never registers it', async () => {
    const controller = new AbortController();
    const reason = new Error('late abort');
    const inner = new FakeEngine();
    // The engine finishes its spawn although the abort arrives just before it resolves.
    engine.spawn = async (options) => {
      const session = await inner.spawn(options);
      controller.abort(reason);
      return session;
    };
    await expect(pty.spawn('alice', { type: 'shell' }, controller.signal)).rejects.toBe(reason);
    expect(inner.spawned[0]?.closed).toBe(true);
    expect(await pty.list('alice')).toEqual([]);
  });

  it('keeps both failures when closing an aborted spawn’s session fails', async () => {
    const controller = new AbortController();
    const reason = new Error('abort');
    const inner = new FakeEngine();
    engine.spawn = async (options) => {
      const session = (await inner.spawn(options)) as FakeSession;
      session.failCloses = 1;
      controller.abort(reason);
      return session;
    };
    const error = await pty
      .spawn('alice', { type: 'shell' }, controller.signal)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TerminalBackendCleanupError);
    expect((error as TerminalBackendCleanupError).cause).toBe(reason);
    expect((error as TerminalBackendCleanupError).cleanupError).toMatchObject({ code: 'CLEANUP_FAILED' });
  });
});

describe('PtyService owner isolation', () => {
  it('gives another owner the same coded error as a nonexistent id for every call', async () => {
    const { sessionId } = await pty.spawn('alice', { type: 'shell' });
    const unknown = { code: 'UNKNOWN_SESSION', message: `unknown PTY session: ${sessionId}` };
    expect(() => pty.startSend('bob', sessionId, { text: 'id' })).toThrow(
      expect.objectContaining(unknown) as unknown as Error,
    );
    await expect(pty.read('bob', sessionId)).rejects.toMatchObject(unknown);
    await expect(pty.signal('bob', sessionId, 'SIGINT')).rejects.toMatchObject(unknown);
    await expect(pty.kill('bob', sessionId, 'nope')).rejects.toMatchObject(unknown);
    await expect(pty.read('alice', 'shell-99')).rejects.toMatchObject({
      code: 'UNKNOWN_SESSION',
      message: 'unknown PTY session: shell-99',
    });
    expect(await pty.list('bob')).toEqual([]);
    expect(pty.hasOwnerActivity('bob')).toBe(false);
    await pty.disposeOwned('bob');
    expect(fake(0).closed).toBe(false);
    expect((await pty.list('alice')).map((session) => session.sessionId)).toEqual([sessionId]);
  });

  it('routes send, read and signal to the owner’s own session', async () => {
    const { sessionId } = await pty.spawn('alice', { type: 'shell' });
    const result = await pty.startSend('alice', sessionId, { text: 'echo hi' }).done;
    expect(result.viewport).toBe('ran: echo hi');
    expect((await pty.read('alice', sessionId, { offset: 1, count: 1 })).text).toBe('line 1');
    expect(await pty.signal('alice', sessionId, 'SIGTSTP')).toEqual({
      delivered: true,
      targetPgid: fake(0).pid,
    });
    expect(fake(0).signals).toEqual(['SIGTSTP']);
  });
});

describe('PtyService kill', () => {
  it('closes and forgets a session; a concurrent kill reports already-closing', async () => {
    const { sessionId } = await pty.spawn('alice', { type: 'shell' });
    const [first, second] = await Promise.all([
      pty.kill('alice', sessionId, 'done'),
      pty.kill('alice', sessionId, 'again'),
    ]);
    expect(first).toEqual({ sessionId, outcome: 'closed' });
    expect(second).toEqual({ sessionId, outcome: 'already-closing' });
    expect(fake(0).closeReasons).toEqual(['done']);
    await expect(pty.kill('alice', sessionId, 'x')).rejects.toMatchObject({ code: 'UNKNOWN_SESSION' });
    expect(pty.hasOwnerActivity('alice')).toBe(false);
  });

  it('does not cache a failed close: the session stays listed and a later kill retries', async () => {
    const { sessionId } = await pty.spawn('alice', { type: 'shell' });
    fake(0).failCloses = 1;
    await expect(pty.kill('alice', sessionId, 'first')).rejects.toMatchObject({ code: 'CLEANUP_FAILED' });
    expect((await pty.list('alice'))[0]).toMatchObject({ sessionId, closing: false });
    expect(await pty.kill('alice', sessionId, 'second')).toEqual({ sessionId, outcome: 'closed' });
    expect(fake(0).closeReasons).toEqual(['first', 'second']);
  });

  it('refuses sends and signals to a session that is closing', async () => {
    const { sessionId } = await pty.spawn('alice', { type: 'shell' });
    const closing = pty.kill('alice', sessionId, 'bye');
    expect(() => pty.startSend('alice', sessionId, { text: 'x' })).toThrow(/is closing/);
    await expect(pty.signal('alice', sessionId, 'SIGINT')).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    await closing;
  });
});

describe('PtyService disposal', () => {
  it('disposeOwned aborts the owner’s spawns and closes only its sessions', async () => {
    await pty.spawn('alice', { type: 'shell' });
    await pty.spawn('bob', { type: 'shell' });
    engine.spawnGate = gate();
    const spawning = pty.spawn('alice', { type: 'shell' });
    await pty.disposeOwned('alice', 'connection closed');
    await expect(spawning).rejects.toMatchObject({
      code: 'ABORTED',
      message: expect.stringMatching(/connection closed/),
    });
    expect(fake(0).closeReasons).toEqual(['connection closed']);
    expect(fake(1).closed).toBe(false);
    expect(pty.hasOwnerActivity('alice')).toBe(false);
    expect(pty.hasOwnerActivity('bob')).toBe(true);
  });

  it('disposeOwned reports failed closes together and keeps those sessions for a retry', async () => {
    await pty.spawn('alice', { type: 'shell' });
    await pty.spawn('alice', { type: 'shell' });
    fake(0).failCloses = 1;
    fake(1).failCloses = 1;
    const error = await pty.disposeOwned('alice').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AggregateError);
    expect((error as AggregateError).errors).toHaveLength(2);
    expect(await pty.list('alice')).toHaveLength(2);
    await pty.disposeOwned('alice');
    expect(await pty.list('alice')).toEqual([]);
  });

  it('dispose closes everything and clears every registry even when a close fails, reporting it', async () => {
    await pty.spawn('alice', { type: 'shell' });
    await pty.spawn('bob', { type: 'shell' });
    engine.spawnGate = gate();
    const spawning = pty.spawn('carol', { type: 'shell' });
    fake(0).failCloses = 1;
    const error = await pty.dispose().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AggregateError);
    expect((error as AggregateError).errors).toEqual([expect.objectContaining({ code: 'CLEANUP_FAILED' })]);
    await expect(spawning).rejects.toMatchObject({ code: 'ABORTED' });
    expect(fake(1).closed).toBe(true);
    expect(pty.listBackends()).toEqual([]);
    for (const owner of ['alice', 'bob', 'carol']) expect(pty.hasOwnerActivity(owner)).toBe(false);
    await expect(pty.list('alice')).rejects.toMatchObject({ code: 'ENGINE_CLOSED' });
    await pty.dispose();
  });

  it('host dispose closes every session and the engine', async () => {
    await pty.spawn('alice', { type: 'shell' });
    await pty.spawn('bob', { type: 'shell' });
    await host.dispose();
    expect(engine.spawned.every((session) => session.closed)).toBe(true);
    expect(engine.closed).toBe(true);
  });
});
