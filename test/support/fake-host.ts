/**
 * A plugin host wired like production (pty service, sandbox policy on a temporary workspace in
 * `workspace-write`, pty-local) but on a FakeEngine, for the harness, tool and MCP tests that need to
 * produce each engine outcome on demand. Real-engine variants live in the *-e2e tests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHost, type Host } from '../../src/main/harness/host.js';
import { ptyServicePlugin } from '../../src/main/harness/plugins/pty.js';
import { createPtyLocalPlugin } from '../../src/main/harness/plugins/pty-local.js';
import { createSandboxPlugin } from '../../src/main/harness/plugins/sandbox.js';
import { sandboxPolicyPlugin } from '../../src/main/harness/plugins/sandbox-policy.js';
import { unavailableSandbox } from '../../src/main/harness/sandbox-service.js';
import { FakeEngine } from './fake-pty-engine.js';

/** A loaded host on a fake engine, and how to tear it down. */
export interface FakeHost {
  host: Host;
  engine: FakeEngine;
  workspace: string;
  dispose(): Promise<void>;
}

/** Loads the production plugin set on a FakeEngine with a fresh temporary workspace. */
export async function createFakeHost(prefix: string): Promise<FakeHost> {
  const workspace = mkdtempSync(join(tmpdir(), prefix));
  const engine = new FakeEngine();
  const host = createHost();
  await host.load([
    ptyServicePlugin,
    { plugin: sandboxPolicyPlugin, config: { workspaceRoot: workspace, mode: 'workspace-write' } },
    createSandboxPlugin(unavailableSandbox('test')),
    createPtyLocalPlugin({ createEngine: async () => engine }),
  ]);
  return {
    host,
    engine,
    workspace,
    dispose: async () => {
      await host.dispose();
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}
