/**
 * Plugin `pty-local` (SPEC §6): injects `pty`, `sandbox` and `sandboxPolicy`, starts an engine whose
 * shells are confined by `ctx.sandbox`, and registers the backend type `shell` (configurable) on
 * `ctx.pty`. Its config is the engine configuration (SPEC §3) plus `type`, validated at load.
 *
 * Reload keeps the engine and therefore every open session: the old instance unregisters its backend
 * and hands the engine to the new one, which registers the backend again. The sessions' mode fences
 * belong to their owners (see `shell-backend.ts`), so they hold across the reload. Engine options of
 * the new config take effect at the next full load.
 *
 * Execution worlds (SPEC §10): `worlds` names the places shells may run besides this machine, each
 * reached through a command that ends in `agent-pty serve --stdio`; `ctx.pty.spawn` (and
 * `terminal_open`) pick one with `world`. A world connects on its first spawn.
 */
import { type EngineConfig, resolveEngineConfig } from '../../../shared/config.js';
import { TerminalError } from '../../../shared/errors.js';
import type { PtyEngine } from '../../../shared/types.js';
import {
  createWorldRegistry,
  type WorldConnector,
  type WorldDefinition,
  type WorldRegistry,
  worldsConfigSchema,
} from '../../worlds/world-registry.js';
import type { Plugin } from '../plugin.js';
import type { SandboxService } from '../sandbox-service.js';
import { createShellBackend } from '../shell-backend.js';

/** Backend type registered when the config names none. */
export const DEFAULT_BACKEND_TYPE = 'shell';

/** Platforms node-pty and the teardown support. */
const SUPPORTED_PLATFORMS: readonly NodeJS.Platform[] = ['linux', 'darwin'];

/** Validated `pty-local` config. */
export interface PtyLocalConfig {
  /** Backend type to register. */
  type: string;
  /** Engine configuration with defaults applied. */
  engine: EngineConfig;
  /** Execution worlds by name (validated; commands split into argvs). */
  worlds: Record<string, WorldDefinition>;
}

/** Starts an engine; `createPtyEngine` in production, a fake in unit tests. */
export type EngineFactory = (options: EngineConfig & { sandbox?: SandboxService }) => Promise<PtyEngine>;

/** What a reloading instance hands to the next one. */
interface Carried {
  readonly engine: PtyEngine;
  readonly worlds: WorldRegistry;
}

/** Validates `{ type?, ...engine config }`; throws `INVALID_CONFIG` naming field and rule. */
export function resolvePtyLocalConfig(raw: unknown): PtyLocalConfig {
  if (!SUPPORTED_PLATFORMS.includes(process.platform)) {
    throw new TerminalError(
      'INVALID_CONFIG',
      `pty-local is unsupported on ${process.platform} (linux and macOS only)`,
    );
  }
  if (raw !== undefined && (typeof raw !== 'object' || raw === null || Array.isArray(raw))) {
    throw new TerminalError('INVALID_CONFIG', 'invalid pty-local config: (root): must be an object');
  }
  const { type = DEFAULT_BACKEND_TYPE, worlds, ...engine } = (raw ?? {}) as Record<string, unknown>;
  if (typeof type !== 'string' || !/^[a-z][a-z0-9_-]*$/.test(type)) {
    throw new TerminalError(
      'INVALID_CONFIG',
      `invalid pty-local config: type: must be a lowercase identifier like "shell", got ${JSON.stringify(type)}`,
    );
  }
  const parsedWorlds = worldsConfigSchema.safeParse(worlds);
  if (!parsedWorlds.success) {
    const problems = parsedWorlds.error.issues.map(
      (issue) => `worlds${issue.path.map((key) => `.${String(key)}`).join('')}: ${issue.message}`,
    );
    throw new TerminalError('INVALID_CONFIG', `invalid pty-local config: ${problems.join('; ')}`);
  }
  return { type, engine: resolveEngineConfig(engine, 'pty-local config'), worlds: parsedWorlds.data };
}

/** Creates the `pty-local` plugin around an engine factory. */
export function createPtyLocalPlugin(options: {
  createEngine: EngineFactory;
  /** Connects execution worlds (default `createRemoteEngine`). */
  connectWorld?: WorldConnector;
}): Plugin<'pty' | 'sandbox' | 'sandboxPolicy', never, PtyLocalConfig> {
  return {
    name: 'pty-local',
    inject: ['pty', 'sandbox', 'sandboxPolicy'],
    provide: [],
    configure: resolvePtyLocalConfig,
    async activate(ctx, config, carried) {
      const engine = isCarried(carried)
        ? carried.engine
        : await options.createEngine({ ...config.engine, sandbox: ctx.sandbox });
      const worlds = isCarried(carried)
        ? carried.worlds
        : createWorldRegistry(config.worlds, options.connectWorld);
      const registration = ctx.pty.registerBackend(
        createShellBackend({ type: config.type, engine, worlds, sandboxPolicy: ctx.sandboxPolicy }),
      );
      return {
        services: {},
        async deactivate(reason) {
          if (reason === 'reload') {
            await registration.unregister();
            const handover: Carried = { engine, worlds };
            return handover;
          }
          try {
            await registration.unregister({ closeSessions: true });
          } finally {
            // Closes whatever the service could not (the engines retry teardown themselves).
            await Promise.all([engine.close(), worlds.close()]);
          }
          return undefined;
        },
      };
    },
  };
}

function isCarried(value: unknown): value is Carried {
  return typeof value === 'object' && value !== null && 'engine' in value;
}
