/**
 * `createHost()`: a small plugin host with service injection (SPEC §6). Plugins declare the services
 * they inject and provide; the host validates every config of a batch first, orders activation from
 * the declarations, hands each plugin exactly the services it declared, and deactivates in reverse
 * order. Lifecycle calls are serialized, so a reload never interleaves with a load or a dispose.
 */
import { describeError, TerminalError } from '../../shared/errors.js';
import type { AnyPlugin, DeactivateReason, PluginEntry } from './plugin.js';
import { resolvePluginOrder } from './plugin-order.js';
import type { HarnessServices, ServiceName } from './services.js';

/** A plugin host. */
export interface Host {
  /**
   * Loads plugins: validates every config (nothing activates if one is invalid), then activates them
   * in dependency order. If an activation fails, the batch's activated plugins are deactivated again.
   */
  load(entries: ReadonlyArray<PluginEntry | AnyPlugin>): Promise<void>;
  /** A provided service; throws `INVALID_ARGUMENT` when no loaded plugin provides it. */
  service<K extends ServiceName>(name: K): HarnessServices[K];
  /** Names of the loaded plugins, in activation order. */
  loaded(): string[];
  /**
   * Deactivates a plugin with reason `reload` and activates `entry` (default: the same plugin and
   * config) with what the old instance handed over. Refused for plugins whose services others inject.
   */
  reload(name: string, entry?: PluginEntry): Promise<void>;
  /** Deactivates one plugin (reason `unload`); refused while others inject its services. */
  unload(name: string): Promise<void>;
  /** Deactivates every plugin in reverse order; failures are reported together (AggregateError). */
  dispose(): Promise<void>;
}

interface LoadedPlugin {
  readonly plugin: AnyPlugin;
  readonly rawConfig: unknown;
  readonly deactivate: ((reason: DeactivateReason) => Promise<unknown> | unknown) | undefined;
}

/** Creates an empty host. */
export function createHost(): Host {
  const loaded: LoadedPlugin[] = [];
  const services = new Map<ServiceName, unknown>();
  let disposed = false;
  let queue: Promise<unknown> = Promise.resolve();

  /** Runs lifecycle steps one at a time; a failed step does not block the next. */
  function serialized<T>(step: () => Promise<T>): Promise<T> {
    const run = queue.then(step, step);
    queue = run.catch((reportedToCaller: unknown) => reportedToCaller);
    return run;
  }

  function assertOpen(): void {
    if (disposed) throw new TerminalError('ENGINE_CLOSED', 'the plugin host is disposed');
  }

  function find(name: string): LoadedPlugin {
    const entry = loaded.find((candidate) => candidate.plugin.name === name);
    if (entry === undefined) throw new TerminalError('INVALID_ARGUMENT', `plugin "${name}" is not loaded`);
    return entry;
  }

  function configure(plugin: AnyPlugin, raw: unknown): unknown {
    if (plugin.configure === undefined) return raw;
    try {
      return plugin.configure(raw);
    } catch (error) {
      if (error instanceof TerminalError) throw error;
      throw new TerminalError('INVALID_CONFIG', `invalid ${plugin.name} config: ${describeError(error)}`, {
        cause: error,
      });
    }
  }

  async function activate(
    plugin: AnyPlugin,
    config: unknown,
    rawConfig: unknown,
    carried: unknown,
  ): Promise<LoadedPlugin> {
    const ctx: Partial<Record<ServiceName, unknown>> = {};
    for (const name of plugin.inject) ctx[name] = services.get(name);
    const activation = await plugin.activate(ctx as never, config, carried);
    const provided = Object.keys(activation.services ?? {});
    const declared = new Set<string>(plugin.provide);
    if (provided.length !== declared.size || provided.some((name) => !declared.has(name))) {
      await activation.deactivate?.('unload');
      throw new TerminalError(
        'INTERNAL',
        `plugin "${plugin.name}" declared [${plugin.provide.join(', ')}] but provided [${provided.join(', ')}]`,
      );
    }
    for (const name of plugin.provide) services.set(name, activation.services[name]);
    const entry: LoadedPlugin = { plugin, rawConfig, deactivate: activation.deactivate?.bind(activation) };
    loaded.push(entry);
    return entry;
  }

  async function deactivate(entry: LoadedPlugin, reason: DeactivateReason): Promise<unknown> {
    loaded.splice(loaded.indexOf(entry), 1);
    for (const name of entry.plugin.provide) services.delete(name);
    return entry.deactivate?.(reason);
  }

  function assertNoDependents(entry: LoadedPlugin, action: string): void {
    const provided = new Set<string>(entry.plugin.provide);
    const dependents = loaded.filter((other) => other.plugin.inject.some((name) => provided.has(name)));
    if (dependents.length > 0) {
      const names = dependents.map((other) => `"${other.plugin.name}"`).join(', ');
      throw new TerminalError(
        'INVALID_ARGUMENT',
        `cannot ${action} plugin "${entry.plugin.name}": ${names} inject its services; ${action} them first`,
      );
    }
  }

  return {
    load(entries) {
      return serialized(async () => {
        assertOpen();
        const batch = entries.map((entry) => ('plugin' in entry ? entry : { plugin: entry }));
        for (const { plugin } of batch) {
          if (loaded.some((other) => other.plugin.name === plugin.name)) {
            throw new TerminalError(
              'INVALID_CONFIG',
              `invalid plugin set: plugin "${plugin.name}" is already loaded`,
            );
          }
        }
        const declarations = batch.map((entry) => ({
          name: entry.plugin.name,
          inject: entry.plugin.inject,
          provide: entry.plugin.provide,
          entry,
        }));
        const ordered = resolvePluginOrder(declarations, new Set(services.keys()));
        // Every config is validated before anything activates: a bad config has no side effects.
        const configured = ordered.map(({ entry }) => ({
          entry,
          config: configure(entry.plugin, entry.config),
        }));
        const activated: LoadedPlugin[] = [];
        try {
          for (const { entry, config } of configured) {
            activated.push(await activate(entry.plugin, config, entry.config, undefined));
          }
        } catch (error) {
          const rollbackFailures: unknown[] = [];
          for (const entry of activated.reverse()) {
            try {
              await deactivate(entry, 'unload');
            } catch (rollbackError) {
              rollbackFailures.push(rollbackError);
            }
          }
          if (rollbackFailures.length === 0) throw error;
          throw new AggregateError(
            [error, ...rollbackFailures],
            `loading plugins failed: ${describeError(error)}`,
          );
        }
      });
    },

    service(name) {
      assertOpen();
      if (!services.has(name)) {
        throw new TerminalError('INVALID_ARGUMENT', `no loaded plugin provides the service "${name}"`);
      }
      return services.get(name) as HarnessServices[typeof name];
    },

    loaded() {
      return loaded.map((entry) => entry.plugin.name);
    },

    reload(name, next) {
      return serialized(async () => {
        assertOpen();
        const current = find(name);
        const replacement = next ?? { plugin: current.plugin, config: current.rawConfig };
        if (replacement.plugin.name !== name) {
          throw new TerminalError(
            'INVALID_ARGUMENT',
            `cannot reload "${name}" as "${replacement.plugin.name}"`,
          );
        }
        assertNoDependents(current, 'reload');
        // Validated before the old instance goes away: a bad new config leaves the old one running.
        const config = configure(replacement.plugin, replacement.config);
        const carried = await deactivate(current, 'reload');
        try {
          await activate(replacement.plugin, config, replacement.config, carried);
        } catch (error) {
          // Put the previous instance back with what it handed over, so the carried state is not lost.
          try {
            await activate(
              current.plugin,
              configure(current.plugin, current.rawConfig),
              current.rawConfig,
              carried,
            );
          } catch (restoreError) {
            throw new AggregateError(
              [error, restoreError],
              `reloading "${name}" failed and restoring it failed too`,
            );
          }
          throw error;
        }
      });
    },

    unload(name) {
      return serialized(async () => {
        assertOpen();
        const entry = find(name);
        assertNoDependents(entry, 'unload');
        await deactivate(entry, 'unload');
      });
    },

    dispose() {
      return serialized(async () => {
        if (disposed) return;
        disposed = true;
        const failures: unknown[] = [];
        for (const entry of [...loaded].reverse()) {
          try {
            await deactivate(entry, 'dispose');
          } catch (error) {
            failures.push(error);
          }
        }
        loaded.length = 0;
        services.clear();
        if (failures.length > 0) {
          const details = failures.map(describeError).join('; ');
          throw new AggregateError(
            failures,
            `disposing the plugin host: ${failures.length} plugin(s) failed: ${details}`,
          );
        }
      });
    },
  };
}
