/**
 * Load order of plugins, resolved from what each one declares it injects and provides: a plugin is
 * activated after every plugin that provides a service it injects. Missing providers, services
 * provided twice and cycles are rejected with a message naming the plugins involved.
 */
import { TerminalError } from '../../shared/errors.js';

/** What the order resolver needs to know about a plugin. */
export interface PluginDeclaration {
  /** Unique plugin name. */
  readonly name: string;
  /** Services the plugin needs. */
  readonly inject: readonly string[];
  /** Services the plugin makes available to others. */
  readonly provide: readonly string[];
}

/**
 * Orders `batch` so that every plugin comes after the providers of what it injects. `available` are
 * services already provided by plugins loaded earlier. Ties keep the caller's order, so the result is
 * deterministic. Throws `TerminalError('INVALID_CONFIG')` on a missing provider, a duplicate or a cycle.
 */
export function resolvePluginOrder<T extends PluginDeclaration>(
  batch: readonly T[],
  available: ReadonlySet<string>,
): T[] {
  const providerOf = new Map<string, T>();
  const names = new Set<string>();
  for (const plugin of batch) {
    if (names.has(plugin.name)) invalid(`plugin "${plugin.name}" is listed twice`);
    names.add(plugin.name);
    for (const service of plugin.provide) {
      const other = providerOf.get(service);
      if (other !== undefined || available.has(service)) {
        const by = other === undefined ? 'an already loaded plugin' : `"${other.name}"`;
        invalid(`service "${service}" is provided by both "${plugin.name}" and ${by}`);
      }
      providerOf.set(service, plugin);
    }
  }

  // Edges provider -> consumer inside the batch; services already available need no edge.
  const pending = new Map<T, Set<T>>();
  for (const plugin of batch) {
    const providers = new Set<T>();
    for (const service of plugin.inject) {
      if (available.has(service)) continue;
      const provider = providerOf.get(service);
      if (provider === undefined) {
        invalid(`plugin "${plugin.name}" injects "${service}", but no plugin provides it`);
      }
      if (provider !== plugin) providers.add(provider);
      else invalid(`plugin "${plugin.name}" injects "${service}", which it provides itself`);
    }
    pending.set(plugin, providers);
  }

  const ordered: T[] = [];
  while (ordered.length < batch.length) {
    const ready = batch.find((plugin) => !ordered.includes(plugin) && pending.get(plugin)?.size === 0);
    if (ready === undefined) {
      const stuck = batch.filter((plugin) => !ordered.includes(plugin)).map((plugin) => `"${plugin.name}"`);
      invalid(`plugins ${stuck.join(', ')} inject each other's services in a cycle`);
    }
    ordered.push(ready);
    for (const providers of pending.values()) providers.delete(ready);
  }
  return ordered;
}

function invalid(message: string): never {
  throw new TerminalError('INVALID_CONFIG', `invalid plugin set: ${message}`);
}
