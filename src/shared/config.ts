/**
 * The engine configuration (SPEC §3): one schema, defaults, and validation that rejects bad values at
 * load with a message naming the field and the rule.
 */
import { z } from 'zod';
import { DEFAULT_HOME_ALLOWLIST, homeAllowlistProblem } from './credential-stores.js';
import { DIALECTS } from './dialects.js';
import { TerminalError } from './errors.js';
import { type MachineResources, machineResources } from './machine-resources.js';
import { MAX_TERMINAL_DIMENSION, screenCellsProblem } from './terminal-size.js';

/** Smallest `sessionPids`: the launcher, the shell and its prompt need a few processes. */
export const MIN_SESSION_PIDS = 16;

/** The smallest session memory limit: its three tmpfs (`/tmp`, `/dev/shm`, the private home) full, plus 256 MiB. */
export function sessionMemoryFloor(tmpfsBytes: number): number {
  return 3 * tmpfsBytes + 256 * 1024 * 1024;
}

/** Why `bytes` is not a usable session memory limit beside `tmpfsBytes`, or undefined when it is. */
export function sessionMemoryProblem(bytes: number, tmpfsBytes: number): string | undefined {
  const floor = sessionMemoryFloor(tmpfsBytes);
  if (Number.isSafeInteger(bytes) && bytes >= floor) return undefined;
  return `must be an integer >= 3 × tmpfsBytes + 256 MiB (${floor}): the tmpfs pages a session writes count against it, got ${bytes}`;
}

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();

/** Schema of every engine option that is plain data (the sandbox provider is passed separately). */
export const engineConfigSchema = z
  .strictObject({
    dialect: z.enum(DIALECTS).default('bash'),
    shellPath: z.string().min(1).optional(),
    shellArgs: z.array(z.string()).optional(),
    rows: positiveInt.max(MAX_TERMINAL_DIMENSION).default(40),
    cols: positiveInt.max(MAX_TERMINAL_DIMENSION).default(160),
    scrollbackLines: positiveInt.default(10_000),
    scrollbackMaxBytes: positiveInt.default(4 * 1024 * 1024),
    maxReadBytes: positiveInt.default(256 * 1024),
    pollIntervalMs: positiveInt.default(50),
    exactProbeAfterMs: nonNegativeInt.default(150),
    idleSilenceMs: positiveInt.default(3_000),
    handoffGraceMs: nonNegativeInt.default(500),
    timeoutMs: positiveInt.default(30_000),
    maxInputBytes: positiveInt.default(1024 * 1024),
    maxTimeoutMs: positiveInt.default(600_000),
    disposeGraceMs: nonNegativeInt.default(3_000),
    threads: positiveInt.max(64).default(1),
    /**
     * cgroup v2 directory under which session cgroups are created (default: this process's own
     * cgroup). A directory where no usable cgroup can be created makes sessions fall back to
     * process-tree teardown (docs/teardown.md).
     */
    cgroupRoot: z.string().min(1).optional(),
    tmpfsBytes: positiveInt.default(256 * 1024 * 1024),
    /**
     * Memory limit of one session's cgroup (SPEC §4.8; tmpfs pages it writes count). Default: half of
     * the memory available to the engine (see {@link sessionMemoryFloor} for the smallest allowed).
     */
    sessionMemoryBytes: positiveInt.optional(),
    /** Memory limit of all sessions of the engine together. Default: three quarters of the memory available. */
    engineMemoryBytes: positiveInt.optional(),
    /** Process/thread limit of one session's cgroup. Default: the larger of 4 096 and 64 × CPUs. */
    sessionPids: positiveInt.min(MIN_SESSION_PIDS).optional(),
    /**
     * Daemon (SPEC §12): a session no client is attached to closes this long after its last detach
     * (attaching resets it, output does not); 0 = never.
     */
    detachedTtlMs: nonNegativeInt.default(86_400_000),
    /** Open sessions per engine; one more is refused with SESSION_LIMIT. */
    maxSessions: positiveInt.default(256),
    /** Largest `rows × cols` of one terminal: the screen models hold that many cells. */
    maxScreenCells: positiveInt.default(250_000),
    /**
     * Paths below `$HOME` a confined session may read, beside the workspace and the toolchains on the
     * host's `PATH`; the rest of `$HOME` is hidden (SPEC §4.1). Never a credential store.
     */
    homeAllowlist: z.array(z.string()).default([...DEFAULT_HOME_ALLOWLIST]),
  })
  .superRefine((config, ctx) => {
    if (config.maxReadBytes > config.scrollbackMaxBytes) {
      ctx.addIssue({
        code: 'custom',
        path: ['maxReadBytes'],
        message: `must be <= scrollbackMaxBytes (${config.scrollbackMaxBytes}), got ${config.maxReadBytes}`,
      });
    }
    if (config.handoffGraceMs < config.pollIntervalMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['handoffGraceMs'],
        message: `must be >= pollIntervalMs (${config.pollIntervalMs}) so the grace covers at least one probe, got ${config.handoffGraceMs}`,
      });
    }
    if (config.timeoutMs > config.maxTimeoutMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['timeoutMs'],
        message: `must be <= maxTimeoutMs (${config.maxTimeoutMs}), got ${config.timeoutMs}`,
      });
    }
    const memoryProblem =
      config.sessionMemoryBytes === undefined
        ? undefined
        : sessionMemoryProblem(config.sessionMemoryBytes, config.tmpfsBytes);
    if (memoryProblem !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['sessionMemoryBytes'], message: memoryProblem });
    }
    const cellsProblem = screenCellsProblem(config.rows, config.cols, config.maxScreenCells);
    if (cellsProblem !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['rows'], message: `rows × cols: ${cellsProblem}` });
    }
    for (const [index, entry] of config.homeAllowlist.entries()) {
      const problem = homeAllowlistProblem(entry);
      if (problem !== undefined)
        ctx.addIssue({ code: 'custom', path: ['homeAllowlist', index], message: problem });
    }
    if (config.shellArgs !== undefined && config.shellPath === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['shellArgs'],
        message: 'needs shellPath: arguments without an explicit shell are ambiguous',
      });
    }
  });

/** Engine configuration as the caller writes it (every field optional). */
export type EngineConfigInput = z.input<typeof engineConfigSchema>;

/** Fields whose defaults depend on the machine (SPEC §4.8): resolved from {@link MachineResources}. */
type MachineDefaults = 'sessionMemoryBytes' | 'engineMemoryBytes' | 'sessionPids';

/** Engine configuration with every default applied. */
export type EngineConfig = Omit<z.output<typeof engineConfigSchema>, MachineDefaults> &
  Record<MachineDefaults, number>;

/**
 * Validates `input` and fills defaults. Throws `TerminalError('INVALID_CONFIG')` whose message names
 * each offending field, e.g. `invalid config: handoffGraceMs: must be >= pollIntervalMs (50) ...`.
 */
export function resolveEngineConfig(
  input: unknown = {},
  label = 'config',
  machine: MachineResources | (() => MachineResources) = machineResources,
): EngineConfig {
  const parsed = engineConfigSchema.safeParse(input ?? {});
  if (parsed.success)
    return withMachineDefaults(parsed.data, typeof machine === 'function' ? machine() : machine);
  const problems = parsed.error.issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.join('.') : '(root)';
    return `${field}: ${issue.message}`;
  });
  throw new TerminalError('INVALID_CONFIG', `invalid ${label}: ${problems.join('; ')}`, {
    cause: parsed.error,
  });
}

/**
 * Fills the defaults of SPEC §4.8: a session gets half of the memory available to the engine, all
 * sessions together three quarters, each at least the session floor (on a small machine the floor
 * wins: a session whose tmpfs cannot fill is worth more than a limit below it); `sessionPids` is the
 * larger of 4 096 and 64 × CPUs, which parallel builds fit.
 */
function withMachineDefaults(
  parsed: z.output<typeof engineConfigSchema>,
  machine: MachineResources,
): EngineConfig {
  const floor = sessionMemoryFloor(parsed.tmpfsBytes);
  const sessionMemoryBytes = parsed.sessionMemoryBytes ?? Math.max(floor, pageFloor(machine.memoryBytes / 2));
  return {
    ...parsed,
    sessionMemoryBytes,
    engineMemoryBytes:
      parsed.engineMemoryBytes ?? Math.max(sessionMemoryBytes, pageFloor((machine.memoryBytes * 3) / 4)),
    sessionPids: parsed.sessionPids ?? Math.max(4096, 64 * machine.cpus),
  };
}

/** `bytes` rounded down to whole 4 KiB pages (what the kernel stores a limit as). */
function pageFloor(bytes: number): number {
  return Math.floor(bytes / 4096) * 4096;
}
