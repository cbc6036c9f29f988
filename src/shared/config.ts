/**
 * The engine configuration (SPEC §3): one schema, defaults, and validation that rejects bad values at
 * load with a message naming the field and the rule.
 */
import { z } from 'zod';
import { DEFAULT_HOME_ALLOWLIST, homeAllowlistProblem } from './credential-stores.js';
import { DIALECTS } from './dialects.js';
import { TerminalError } from './errors.js';
import { MAX_TERMINAL_DIMENSION } from './terminal-size.js';

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

/** Engine configuration with every default applied. */
export type EngineConfig = z.output<typeof engineConfigSchema>;

/**
 * Validates `input` and fills defaults. Throws `TerminalError('INVALID_CONFIG')` whose message names
 * each offending field, e.g. `invalid config: handoffGraceMs: must be >= pollIntervalMs (50) ...`.
 */
export function resolveEngineConfig(input: unknown = {}, label = 'config'): EngineConfig {
  const parsed = engineConfigSchema.safeParse(input ?? {});
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.join('.') : '(root)';
    return `${field}: ${issue.message}`;
  });
  throw new TerminalError('INVALID_CONFIG', `invalid ${label}: ${problems.join('; ')}`, {
    cause: parsed.error,
  });
}
