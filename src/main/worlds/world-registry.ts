/**
 * The named execution worlds of a harness (SPEC §10): name → how to reach `agent-pty serve --stdio`.
 * A world is connected on its first spawn, not at load, so a harness whose build box is down still
 * starts and serves its other worlds; a world whose link died is connected afresh by the next spawn.
 */
import { z } from 'zod';
import { describeError, TerminalError } from '../../shared/errors.js';
import type { PtyEngine } from '../../shared/types.js';
import { splitCommandLine } from './command-line.js';
import { createRemoteEngine, type RemoteEngineInternals, type RemoteEngineOptions } from './remote-engine.js';

/** Name of the host's own world (sessions on the harness's machine); never configurable. */
export const LOCAL_WORLD = 'local';

/** How one world is reached. */
export interface WorldDefinition {
  /** argv of the transport command (a string is split like a shell argv, see command-line.ts). */
  command: string[];
  /** Extra environment variables for the command. */
  env?: Record<string, string>;
  /**
   * Workspace root on the far side (absolute): where shells start and what `workspace-write` may
   * write. Default: the same path as the host's workspace root (a shared mount, or ssh to this host).
   */
  workspaceRoot?: string;
  /** Far engine configuration (SPEC §3). */
  config?: Record<string, unknown>;
}

const worldNamePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Schema of the `worlds` config: `{ name: command | { command, env?, workspaceRoot?, config? } }`. */
export const worldsConfigSchema = z
  .record(
    z.string(),
    z.union([
      z.string().min(1),
      z.array(z.string()).min(1),
      z.strictObject({
        command: z.union([z.string().min(1), z.array(z.string()).min(1)]),
        env: z.record(z.string(), z.string()).optional(),
        workspaceRoot: z.string().startsWith('/', 'must be an absolute path').optional(),
        config: z.record(z.string(), z.unknown()).optional(),
      }),
    ]),
  )
  .default({})
  .superRefine((worlds, ctx) => {
    // Checked here rather than by the key schema, whose failures zod reports without their message.
    for (const name of Object.keys(worlds)) {
      const problem =
        name === LOCAL_WORLD
          ? `"${LOCAL_WORLD}" names the host's own world; pick another name`
          : worldNamePattern.test(name)
            ? undefined
            : 'a world name is letters, digits, ".", "_" and "-"';
      if (problem !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: problem });
    }
  })
  .transform((worlds) => {
    const definitions: Record<string, WorldDefinition> = {};
    for (const [name, raw] of Object.entries(worlds)) {
      const spec = typeof raw === 'string' || Array.isArray(raw) ? { command: raw } : raw;
      const command = typeof spec.command === 'string' ? splitCommandLine(spec.command) : spec.command;
      definitions[name] = { ...spec, command };
    }
    return definitions;
  });

/** The `worlds` config as a harness writes it. */
export type WorldsConfigInput = z.input<typeof worldsConfigSchema>;

/** Connects a world; `createRemoteEngine` in production. */
export type WorldConnector = (options: RemoteEngineOptions) => Promise<PtyEngine & RemoteEngineInternals>;

/** The worlds of one harness, connected on demand. */
export interface WorldRegistry {
  /** Configured world names (without `local`). */
  names(): string[];
  /** The definition of a configured world; throws `INVALID_ARGUMENT` naming the known worlds. */
  definition(name: string): WorldDefinition;
  /** The world's engine, connecting it first if needed (or again, once its link died). */
  engine(name: string): Promise<PtyEngine>;
  /** Closes every connected world (its sessions close on the far side); failures reported together. */
  close(): Promise<void>;
}

/** Creates a registry over validated definitions. */
export function createWorldRegistry(
  definitions: Record<string, WorldDefinition>,
  connect: WorldConnector = createRemoteEngine,
): WorldRegistry {
  const connections = new Map<string, Promise<PtyEngine & RemoteEngineInternals>>();
  let closed = false;

  function definition(name: string): WorldDefinition {
    const found = Object.hasOwn(definitions, name) ? definitions[name] : undefined;
    if (found === undefined) {
      const known = [LOCAL_WORLD, ...Object.keys(definitions)].join(', ');
      throw new TerminalError('INVALID_ARGUMENT', `unknown world "${name}"; configured worlds: ${known}`);
    }
    return found;
  }

  return {
    names: () => Object.keys(definitions),
    definition,
    async engine(name) {
      const { command, env, config } = definition(name);
      if (closed) throw new TerminalError('ENGINE_CLOSED', 'the worlds are closed');
      const current = connections.get(name);
      const alive = await current?.then(
        (engine) => (engine.transportError === undefined ? engine : undefined),
        (failedToConnect: unknown) => void failedToConnect,
      );
      if (alive !== undefined) return alive;
      // Concurrent spawns share one connection attempt; a failed attempt is not cached.
      if (connections.get(name) !== current) return this.engine(name);
      const attempt = connect({
        command,
        ...(env === undefined ? {} : { env }),
        ...(config === undefined ? {} : { config }),
      });
      connections.set(name, attempt);
      attempt.catch(() => {
        if (connections.get(name) === attempt) connections.delete(name);
      });
      try {
        return await attempt;
      } catch (error) {
        throw new TerminalError(
          (error as TerminalError).code ?? 'TRANSPORT_CLOSED',
          `world "${name}" (${command.join(' ')}): ${describeError(error)}`,
          { cause: error },
        );
      }
    },
    async close() {
      closed = true;
      const engines = await Promise.allSettled(connections.values());
      connections.clear();
      const results = await Promise.allSettled(
        engines.flatMap((result) => (result.status === 'fulfilled' ? [result.value.close()] : [])),
      );
      const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
      if (failures.length > 0) {
        throw new AggregateError(failures, `closing worlds: ${failures.map(describeError).join('; ')}`);
      }
    },
  };
}
