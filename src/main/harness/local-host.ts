/**
 * The ready-made local harness: a host with `pty`, `sandbox-policy`, `sandbox` (bubblewrap on Linux)
 * and `pty-local` on the real engine. Used by the MCP server; harness authors can load the same
 * plugins into their own host.
 */
import type { EngineConfigInput } from '../../shared/config.js';
import type { PtyEngine, SandboxMode } from '../../shared/types.js';
import { createPtyEngine } from '../engine/engine.js';
import { createBubblewrapSandbox } from '../sandbox/bubblewrap.js';
import type { WorldsConfigInput } from '../worlds/world-registry.js';
import { createHost, type Host } from './host.js';
import { ptyServicePlugin } from './plugins/pty.js';
import { createPtyLocalPlugin, type EngineFactory } from './plugins/pty-local.js';
import { createSandboxPlugin } from './plugins/sandbox.js';
import { sandboxPolicyPlugin } from './plugins/sandbox-policy.js';
import { type SandboxService, unavailableSandbox } from './sandbox-service.js';

/** `pty-local` on the real engine. */
export const ptyLocalPlugin = createPtyLocalPlugin({ createEngine: createPtyEngine });

/** Options of {@link createLocalHost}. */
export interface LocalHostOptions {
  /** Deployment default sandbox mode (default `read-only`). */
  mode?: SandboxMode;
  /** Workspace root (default: the current directory). */
  workspaceRoot?: string;
  /** `pty-local` config: engine options (SPEC §3), `type`, and execution `worlds` (SPEC §10). */
  ptyLocal?: EngineConfigInput & { type?: string; worlds?: WorldsConfigInput };
  /** Sandbox provider (default: bubblewrap on Linux, none elsewhere). */
  sandbox?: SandboxService;
  /** The engine `pty-local` runs on (default: an in-process engine; `mcp --daemon`: the daemon's). */
  createEngine?: EngineFactory;
  /** Told the engine `pty-local` started (e.g. for a watch page over its sessions, SPEC §13). */
  onEngine?: (engine: PtyEngine) => void;
}

/** The platform's sandbox provider. */
export function defaultSandbox(): SandboxService {
  return process.platform === 'linux'
    ? createBubblewrapSandbox()
    : unavailableSandbox(`no sandbox provider is implemented for ${process.platform}`);
}

/** Creates a host with the four local plugins loaded (configs validated at load). */
export async function createLocalHost(options: LocalHostOptions = {}): Promise<Host> {
  const host = createHost();
  await host.load([
    ptyServicePlugin,
    {
      plugin: sandboxPolicyPlugin,
      config: {
        ...(options.mode === undefined ? {} : { mode: options.mode }),
        ...(options.workspaceRoot === undefined ? {} : { workspaceRoot: options.workspaceRoot }),
      },
    },
    createSandboxPlugin(options.sandbox ?? defaultSandbox()),
    {
      plugin:
        options.createEngine === undefined && options.onEngine === undefined
          ? ptyLocalPlugin
          : createPtyLocalPlugin({
              createEngine: async (engineOptions) => {
                const engine = await (options.createEngine ?? createPtyEngine)(engineOptions);
                options.onEngine?.(engine);
                return engine;
              },
            }),
      config: options.ptyLocal ?? {},
    },
  ]);
  return host;
}
