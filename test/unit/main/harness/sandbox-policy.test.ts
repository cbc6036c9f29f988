// ctx.sandboxPolicy and the mode fence (SPEC §4.5), through the host with pty-local on a FakeEngine:
// the fence is what must be pinned here (spawn in flight, reload keeping sessions, failed cleanup).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../../../../src/main/harness/host.js';
import { ptyServicePlugin } from '../../../../src/main/harness/plugins/pty.js';
import { createPtyLocalPlugin } from '../../../../src/main/harness/plugins/pty-local.js';
import { createSandboxPlugin } from '../../../../src/main/harness/plugins/sandbox.js';
import { sandboxPolicyPlugin } from '../../../../src/main/harness/plugins/sandbox-policy.js';
import type { PtyService } from '../../../../src/main/harness/pty-service.js';
import {
  createSandboxPolicy,
  type SandboxPolicyService,
} from '../../../../src/main/harness/sandbox-policy.js';
import { unavailableSandbox } from '../../../../src/main/harness/sandbox-service.js';
import { TerminalBackendCleanupError } from '../../../../src/shared/errors.js';
import { FakeEngine, type FakeSession, gate } from '../../../support/fake-pty-engine.js';

let workspace: string;
let host: Host;
let engine: FakeEngine;
let pty: PtyService;
let policy: SandboxPolicyService;
let engineFactoryCalls: number;

beforeEach(async () => {
  workspace = mkdtempSync(join(tmpdir(), 'harness-policy-'));
  engine = new FakeEngine();
  engineFactoryCalls = 0;
  host = createHost();
  await host.load([
    ptyServicePlugin,
    { plugin: sandboxPolicyPlugin, config: { workspaceRoot: workspace } },
    createSandboxPlugin(unavailableSandbox('test')),
    createPtyLocalPlugin({
      createEngine: async () => {
        engineFactoryCalls++;
        return engine;
      },
    }),
  ]);
  pty = host.service('pty');
  policy = host.service('sandboxPolicy');
});

afterEach(async () => {
  await host.dispose().catch(() => {});
  rmSync(workspace, { recursive: true, force: true });
});

const fenced = { code: 'MODE_CHANGE_FENCED' };

describe('sandbox policy', () => {
  it('defaults to read-only on the configured root, with per-owner overrides', () => {
    expect(policy.resolve({ session: 'alice' })).toEqual({ mode: 'read-only', workspaceRoot: workspace });
    policy.setMode({ session: 'alice', mode: 'workspace-write' });
    expect(policy.resolve({ session: 'alice' }).mode).toBe('workspace-write');
    expect(policy.resolve({ session: 'bob' }).mode).toBe('read-only');
    policy.setMode({ mode: 'danger-full-access' });
    expect(policy.resolve({ session: 'bob' }).mode).toBe('danger-full-access');
    policy.clearMode('alice');
    expect(policy.resolve({ session: 'alice' }).mode).toBe('danger-full-access');
  });

  it('the effective mode is read once at spawn and fixed for the terminal', async () => {
    await pty.spawn('alice', { type: 'shell' });
    expect(engine.spawnOptions[0]?.sandbox).toEqual({ mode: 'read-only', workspaceRoot: workspace });
    expect(policy.resolve({ session: 'alice' }).mode).toBe('read-only');
  });
});

describe('mode fence', () => {
  it('rejects a change of an owner’s effective mode while it has an open terminal, before it commits', async () => {
    const { sessionId } = await pty.spawn('alice', { type: 'shell' });
    expect(() => policy.setMode({ session: 'alice', mode: 'danger-full-access' })).toThrow(
      expect.objectContaining(fenced) as unknown as Error,
    );
    expect(() => policy.setMode({ mode: 'workspace-write' })).toThrow(
      /"alice" \(read-only\) still has an open terminal/,
    );
    expect(policy.resolve({ session: 'alice' }).mode).toBe('read-only');
    expect(policy.resolve({ session: 'bob' }).mode).toBe('read-only');
    // Same effective mode, another owner, or an owner pinned by its own override: not fenced.
    policy.setMode({ session: 'alice', mode: 'read-only' });
    policy.setMode({ session: 'bob', mode: 'danger-full-access' });
    policy.setMode({ mode: 'read-only' });
    await pty.kill('alice', sessionId, 'done');
    policy.setMode({ session: 'alice', mode: 'workspace-write' });
    await pty.spawn('alice', { type: 'shell' });
    expect(engine.spawnOptions[1]?.sandbox?.mode).toBe('workspace-write');
  });

  it('a default change is fenced only for owners that follow the default', async () => {
    await pty.spawn('alice', { type: 'shell' });
    expect(() => policy.setMode({ mode: 'workspace-write' })).toThrow(
      expect.objectContaining(fenced) as unknown as Error,
    );
    expect(() => policy.setMode({ session: 'alice', mode: 'workspace-write' })).toThrow(/rejected/);
    policy.setMode({ session: 'alice', mode: 'read-only' });
    policy.setMode({ mode: 'workspace-write' });
    expect(policy.resolve({ session: 'alice' }).mode).toBe('read-only');
    expect(() => policy.clearMode('alice')).toThrow(expect.objectContaining(fenced) as unknown as Error);
  });

  it('fences while a spawn is in progress, and releases when the spawn fails', async () => {
    engine.spawnGate = gate();
    const controller = new AbortController();
    const spawning = pty.spawn('alice', { type: 'shell' }, controller.signal);
    expect(() => policy.setMode({ session: 'alice', mode: 'danger-full-access' })).toThrow(
      expect.objectContaining(fenced) as unknown as Error,
    );
    controller.abort(new Error('stop'));
    await expect(spawning).rejects.toThrow('stop');
    policy.setMode({ session: 'alice', mode: 'danger-full-access' });
  });

  it('keeps the fence when cleaning up a failed spawn failed too (a process of that mode may live)', async () => {
    engine.spawn = async () => {
      throw new TerminalBackendCleanupError(
        'cancelled and cleanup failed',
        new Error('abort'),
        new Error('kill'),
      );
    };
    await expect(pty.spawn('alice', { type: 'shell' })).rejects.toBeInstanceOf(TerminalBackendCleanupError);
    expect(policy.isFenced('alice')).toBe(true);
  });

  it('keeps the fence while a close fails, and drops it once the close succeeds', async () => {
    const { sessionId } = await pty.spawn('alice', { type: 'shell' });
    (engine.spawned[0] as FakeSession).failCloses = 1;
    await expect(pty.kill('alice', sessionId, 'x')).rejects.toMatchObject({ code: 'CLEANUP_FAILED' });
    expect(policy.isFenced('alice')).toBe(true);
    await pty.kill('alice', sessionId, 'retry');
    expect(policy.isFenced('alice')).toBe(false);
  });

  it('survives a reload of pty-local that keeps the existing sessions', async () => {
    const { sessionId } = await pty.spawn('alice', { type: 'shell' });
    await host.reload('pty-local');
    expect(engineFactoryCalls).toBe(1);
    expect(engine.closed).toBe(false);
    expect(pty.listBackends()).toEqual(['shell']);
    expect(() => policy.setMode({ session: 'alice', mode: 'danger-full-access' })).toThrow(
      expect.objectContaining(fenced) as unknown as Error,
    );
    // The session opened before the reload still works and its close releases the fence.
    expect((await pty.startSend('alice', sessionId, { text: 'pwd' }).done).viewport).toBe('ran: pwd');
    await pty.kill('alice', sessionId, 'done');
    policy.setMode({ session: 'alice', mode: 'danger-full-access' });
  });
});

describe('policy service alone', () => {
  it('counts fence holds per owner; releasing twice is harmless', () => {
    const alone = createSandboxPolicy({ mode: 'read-only', workspaceRoot: workspace });
    const first = alone.fence('alice');
    const second = alone.fence('alice');
    first.release();
    first.release();
    expect(alone.isFenced('alice')).toBe(true);
    second.release();
    expect(alone.isFenced('alice')).toBe(false);
    expect(() => alone.setMode({ mode: 'nope' as never })).toThrow(/unknown sandbox mode "nope"/);
  });
});
