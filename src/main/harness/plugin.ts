/**
 * What a plugin is: a name, the services it injects and provides, config validation that runs at
 * load, and an activation that receives exactly the services it declared.
 */
import type { HarnessServices, ServiceName } from './services.js';

/** The services a plugin declared in `inject`, and nothing else. */
export type PluginContext<I extends ServiceName> = { readonly [K in I]: HarnessServices[K] };

/** Why a plugin is being deactivated. */
export type DeactivateReason =
  /** Removed on its own; it must release everything it holds. */
  | 'unload'
  /** About to be activated again; whatever `deactivate` returns is handed to the next activation. */
  | 'reload'
  /** The host is shutting down. */
  | 'dispose';

/** What an activated plugin hands back to the host. */
export interface PluginActivation<P extends ServiceName> {
  /** One instance per service named in `provide`. */
  services: { readonly [K in P]: HarnessServices[K] };
  /** Releases what the plugin holds; on `reload` the resolved value is carried to the next activation. */
  deactivate?(reason: DeactivateReason): Promise<unknown> | unknown;
}

/** A plugin: declarations, config validation and activation. */
export interface Plugin<I extends ServiceName, P extends ServiceName, C> {
  /** Unique name within a host. */
  readonly name: string;
  /** Services this plugin needs; they are activated first and passed in its context. */
  readonly inject: readonly I[];
  /** Services this plugin provides to others. */
  readonly provide: readonly P[];
  /** Validates the raw config at load; throws `TerminalError('INVALID_CONFIG')` naming field and rule. */
  configure?(raw: unknown): C;
  /** Starts the plugin. `carried` is what the previous instance returned from `deactivate('reload')`. */
  activate(ctx: PluginContext<I>, config: C, carried: unknown): Promise<PluginActivation<P>>;
}

/**
 * Any plugin, with its service types erased, as the host stores it. Every `Plugin<I, P, C>` is
 * assignable to it (method parameters are checked bivariantly, provided services are a subset).
 */
export interface AnyPlugin {
  /** Unique name within a host. */
  readonly name: string;
  /** Services the plugin needs. */
  readonly inject: readonly ServiceName[];
  /** Services the plugin provides. */
  readonly provide: readonly ServiceName[];
  /** Validates the raw config at load. */
  configure?(raw: unknown): unknown;
  /** Starts the plugin. */
  activate(
    ctx: PluginContext<ServiceName>,
    config: unknown,
    carried: unknown,
  ): Promise<{
    services: Partial<HarnessServices>;
    deactivate?(reason: DeactivateReason): Promise<unknown> | unknown;
  }>;
}

/** A plugin with the config it is loaded with. */
export interface PluginEntry {
  /** The plugin. */
  plugin: AnyPlugin;
  /** Raw config, validated by `plugin.configure` at load. */
  config?: unknown;
}
