// Plugin host: load order from declarations, config validation at load, rollback, reload and dispose.
// The engine is faked (FakeEngine): these tests are about the host, not about shells.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../../../../src/main/harness/host.js';
import type { Plugin } from '../../../../src/main/harness/plugin.js';
import { ptyServicePlugin } from '../../../../src/main/harness/plugins/pty.js';
import { createPtyLocalPlugin } from '../../../../src/main/harness/plugins/pty-local.js';
import { createSandboxPlugin } from '../../../../src/main/harness/plugins/sandbox.js';
import { sandboxPolicyPlugin } from '../../../../src/main/harness/plugins/sandbox-policy.js';
import { unavailableSandbox } from '../../../../src/main/harness/sandbox-service.js';
import { TerminalError } from '../../../../src/shared/errors.js';
import { FakeEngine } from '../../../support/fake-pty-engine.js';

let workspace: string;
let host: Host;
let engines: FakeEngine[];

function ptyLocal() {
  return createPtyLocalPlugin({
    createEngine: async () => {
      const engine = new FakeEngine();
      engines.push(engine);
      return engine;
    },
  });
}

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), 'harness-host-'));
  host = createHost();
  engines = [];
});

afterEach(async () => {
  await host.dispose();
  rmSync(workspace, { recursive: true, force: true });
});

describe('createHost', () => {
  it('activates plugins after the providers of what they inject, whatever the listed order', async () => {
    await host.load([
      { plugin: ptyLocal() },
      { plugin: sandboxPolicyPlugin, config: { workspaceRoot: workspace } },
      createSandboxPlugin(unavailableSandbox('test')),
      ptyServicePlugin,
    ]);
    const order = host.loaded();
    expect(order.indexOf('pty-local')).toBeGreaterThan(order.indexOf('pty'));
    expect(order.indexOf('pty-local')).toBeGreaterThan(order.indexOf('sandbox'));
    expect(order.indexOf('pty-local')).toBeGreaterThan(order.indexOf('sandbox-policy'));
    expect(host.service('pty').listBackends()).toEqual(['shell']);
  });

  it('hands a plugin exactly the services it declared', async () => {
    let seen: string[] = [];
    const probe: Plugin<'pty', never, undefined> = {
      name: 'probe',
      inject: ['pty'],
      provide: [],
      async activate(ctx) {
        seen = Object.keys(ctx);
        return { services: {} };
      },
    };
    await host.load([
      ptyServicePlugin,
      { plugin: sandboxPolicyPlugin, config: { workspaceRoot: workspace } },
      probe,
    ]);
    expect(seen).toEqual(['pty']);
  });

  it('rejects a missing provider, a service provided twice and a cycle, naming the plugins', async () => {
    await expect(host.load([ptyLocal()])).rejects.toThrow(
      /pty-local.*injects "pty", but no plugin provides it/,
    );
    await expect(host.load([ptyServicePlugin, { ...ptyServicePlugin, name: 'pty-2' }])).rejects.toThrow(
      /service "pty" is provided by both "pty-2" and "pty"/,
    );
    const a: Plugin<'sandbox', 'pty', undefined> = {
      name: 'a',
      inject: ['sandbox'],
      provide: ['pty'],
      activate: async () => ({ services: { pty: undefined as never } }),
    };
    const b: Plugin<'pty', 'sandbox', undefined> = {
      name: 'b',
      inject: ['pty'],
      provide: ['sandbox'],
      activate: async () => ({ services: { sandbox: undefined as never } }),
    };
    await expect(host.load([a, b])).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/"a", "b" inject each other's services in a cycle/),
    });
    expect(host.loaded()).toEqual([]);
  });

  it('validates pty-local config at load: handoffGraceMs below pollIntervalMs is rejected, nothing activates', async () => {
    const load = host.load([
      ptyServicePlugin,
      { plugin: sandboxPolicyPlugin, config: { workspaceRoot: workspace } },
      createSandboxPlugin(unavailableSandbox('test')),
      { plugin: ptyLocal(), config: { pollIntervalMs: 50, handoffGraceMs: 10 } },
    ]);
    await expect(load).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    await expect(load).rejects.toThrow(/handoffGraceMs.*pollIntervalMs/);
    expect(host.loaded()).toEqual([]);
    expect(engines).toHaveLength(0);
  });

  it('rejects unknown pty-local and sandbox-policy fields and bad values with the field named', async () => {
    await expect(
      host.load([
        ptyServicePlugin,
        { plugin: sandboxPolicyPlugin, config: { workspaceRoot: workspace } },
        createSandboxPlugin(unavailableSandbox('test')),
        { plugin: ptyLocal(), config: { rows: -1 } },
      ]),
    ).rejects.toThrow(/invalid pty-local config: rows/);
    await expect(host.load([{ plugin: sandboxPolicyPlugin, config: { mode: 'yolo' } }])).rejects.toThrow(
      /invalid sandbox-policy config: mode/,
    );
    await expect(
      host.load([{ plugin: sandboxPolicyPlugin, config: { workspaceRoot: join(workspace, 'missing') } }]),
    ).rejects.toThrow(/workspaceRoot: must be an existing directory/);
  });

  it('deactivates the already activated plugins of a batch when a later activation fails', async () => {
    const deactivated: string[] = [];
    const first: Plugin<never, never, undefined> = {
      name: 'first',
      inject: [],
      provide: [],
      activate: async () => ({
        services: {},
        deactivate: (reason) => void deactivated.push(`first:${reason}`),
      }),
    };
    const broken: Plugin<never, never, undefined> = {
      name: 'broken',
      inject: [],
      provide: [],
      activate: async () => {
        throw new TerminalError('INTERNAL', 'activation exploded');
      },
    };
    await expect(host.load([first, broken])).rejects.toThrow('activation exploded');
    expect(deactivated).toEqual(['first:unload']);
    expect(host.loaded()).toEqual([]);
  });

  it('reports every failing deactivation of dispose together and still deactivates the rest', async () => {
    const deactivated: string[] = [];
    const plugin = (name: string, fail: boolean): Plugin<never, never, undefined> => ({
      name,
      inject: [],
      provide: [],
      activate: async () => ({
        services: {},
        deactivate: async () => {
          deactivated.push(name);
          if (fail) throw new Error(`${name} failed`);
        },
      }),
    });
    await host.load([plugin('one', true), plugin('two', false), plugin('three', true)]);
    const error = await host.dispose().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AggregateError);
    expect((error as AggregateError).errors.map((each: Error) => each.message)).toEqual([
      'three failed',
      'one failed',
    ]);
    expect(deactivated).toEqual(['three', 'two', 'one']);
    expect(host.loaded()).toEqual([]);
    expect(() => host.service('pty')).toThrow(/disposed/);
  });

  it('refuses to reload or unload a plugin whose services others inject', async () => {
    await host.load([
      ptyServicePlugin,
      { plugin: sandboxPolicyPlugin, config: { workspaceRoot: workspace } },
      createSandboxPlugin(unavailableSandbox('test')),
      ptyLocal(),
    ]);
    await expect(host.reload('pty')).rejects.toThrow(/"pty-local" inject its services; reload them first/);
    await expect(host.unload('sandbox-policy')).rejects.toThrow(/"pty-local" inject its services/);
    await host.unload('pty-local');
    expect(engines[0]!.closed).toBe(true);
    expect(host.service('pty').listBackends()).toEqual([]);
  });

  it('keeps the old instance running when a reload carries an invalid config', async () => {
    await host.load([
      ptyServicePlugin,
      { plugin: sandboxPolicyPlugin, config: { workspaceRoot: workspace } },
      createSandboxPlugin(unavailableSandbox('test')),
      ptyLocal(),
    ]);
    await expect(
      host.reload('pty-local', { plugin: ptyLocal(), config: { handoffGraceMs: 1, pollIntervalMs: 50 } }),
    ).rejects.toThrow(/handoffGraceMs/);
    expect(host.loaded()).toContain('pty-local');
    expect(host.service('pty').listBackends()).toEqual(['shell']);
  });
});
