/**
 * `ctx.sandboxPolicy`: which sandbox mode and workspace root a session's terminals run under, and the
 * mode fence of SPEC §4.5. A deployment default (`read-only` unless configured) applies to every
 * owner; an owner may carry its own override. While an owner holds a fence (it has an open terminal
 * or a spawn in progress), any change of *that owner's effective mode* is rejected before it commits,
 * so a terminal opened with wider access can never outlive a downgrade.
 *
 * Fences are held per owner by whoever opens terminals (the `shell` backend takes one per session),
 * not per plugin instance: reloading the plugin that keeps those sessions keeps their fences.
 */
import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { TerminalError } from '../../shared/errors.js';
import { SANDBOX_MODES, type SandboxMode, type SandboxSelection } from '../../shared/types.js';

/** Mode used when the deployment configures none: the most confined one. */
export const DEFAULT_SANDBOX_MODE: SandboxMode = 'read-only';

/** A held fence; releasing twice is harmless. */
export interface SandboxFence {
  /** Drops this hold; the owner stays fenced while it holds others. */
  release(): void;
}

/** A requested mode change: of one owner's override, or of the deployment default. */
export interface SandboxModeChange {
  /** New mode. */
  mode: SandboxMode;
  /** The owner whose override changes; omitted = the deployment default (owners without override). */
  session?: string;
}

/** `ctx.sandboxPolicy`. */
export interface SandboxPolicyService {
  /** The effective mode and workspace root for an owner's next terminal. */
  resolve(query: { session: string }): SandboxSelection;
  /**
   * Commits a mode change, or throws `TerminalError('MODE_CHANGE_FENCED')` (nothing changes) when it
   * would change the effective mode of an owner that holds a fence.
   */
  setMode(change: SandboxModeChange): void;
  /** Removes an owner's override (it follows the default again); fenced like `setMode`. */
  clearMode(session: string): void;
  /** Takes a fence on `owner` until released. */
  fence(owner: string): SandboxFence;
  /** True while `owner` holds at least one fence. */
  isFenced(owner: string): boolean;
}

/** Validated configuration of the policy. */
export interface SandboxPolicyConfig {
  /** Deployment default mode. */
  mode: SandboxMode;
  /** Absolute workspace root (an existing directory); the default cwd of every terminal. */
  workspaceRoot: string;
  /** False when the root is the host's cwd because the config named none (default true; SandboxSelection). */
  workspaceExplicit?: boolean;
}

const policyConfigSchema = z.strictObject({
  mode: z.enum(SANDBOX_MODES).default(DEFAULT_SANDBOX_MODE),
  workspaceRoot: z.string().min(1).optional(),
});

/**
 * Validates the policy config (`{ mode?, workspaceRoot? }`, root default: the host's cwd) and
 * resolves the root to an absolute existing directory. Throws `TerminalError('INVALID_CONFIG')`.
 */
export function resolveSandboxPolicyConfig(
  raw: unknown,
  label = 'sandbox-policy config',
): SandboxPolicyConfig {
  const parsed = policyConfigSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
    throw new TerminalError('INVALID_CONFIG', `invalid ${label}: ${problems.join('; ')}`, {
      cause: parsed.error,
    });
  }
  const root = parsed.data.workspaceRoot ?? process.cwd();
  const workspaceRoot = isAbsolute(root) ? root : resolve(root);
  if (!statSync(workspaceRoot, { throwIfNoEntry: false })?.isDirectory()) {
    throw new TerminalError(
      'INVALID_CONFIG',
      `invalid ${label}: workspaceRoot: must be an existing directory, got ${workspaceRoot}`,
    );
  }
  return {
    mode: parsed.data.mode,
    workspaceRoot,
    workspaceExplicit: parsed.data.workspaceRoot !== undefined,
  };
}

/** Creates the policy service from a validated config. */
export function createSandboxPolicy(config: SandboxPolicyConfig): SandboxPolicyService {
  let defaultMode = config.mode;
  const overrides = new Map<string, SandboxMode>();
  const holds = new Map<string, number>();

  const effective = (owner: string): SandboxMode => overrides.get(owner) ?? defaultMode;

  function fenced(owners: string[], from: (owner: string) => SandboxMode, to: SandboxMode): void {
    const blocked = owners.filter((owner) => (holds.get(owner) ?? 0) > 0 && from(owner) !== to);
    if (blocked.length === 0) return;
    const who = blocked.map((owner) => `"${owner}" (${from(owner)})`).join(', ');
    throw new TerminalError(
      'MODE_CHANGE_FENCED',
      `sandbox mode change to ${to} rejected: ${who} still has an open terminal or a terminal being opened; ` +
        'wait for it to open, close the terminals, then change the mode',
    );
  }

  return {
    resolve({ session }) {
      return {
        mode: effective(session),
        workspaceRoot: config.workspaceRoot,
        // Only when false: a root taken from the cwd, which the sandbox will not widen (SPEC §4.1).
        ...(config.workspaceExplicit === false ? { workspaceExplicit: false } : {}),
      };
    },

    setMode({ mode, session }) {
      if (!SANDBOX_MODES.includes(mode)) {
        throw new TerminalError(
          'INVALID_ARGUMENT',
          `unknown sandbox mode "${mode}"; use one of ${SANDBOX_MODES.join(', ')}`,
        );
      }
      if (session !== undefined) {
        fenced([session], effective, mode);
        overrides.set(session, mode);
        return;
      }
      // The default moves every owner that has no override of its own.
      const following = [...holds.keys()].filter((owner) => !overrides.has(owner));
      fenced(following, () => defaultMode, mode);
      defaultMode = mode;
    },

    clearMode(session) {
      fenced([session], effective, defaultMode);
      overrides.delete(session);
    },

    fence(owner) {
      holds.set(owner, (holds.get(owner) ?? 0) + 1);
      let held = true;
      return {
        release() {
          if (!held) return;
          held = false;
          const left = (holds.get(owner) ?? 1) - 1;
          if (left > 0) holds.set(owner, left);
          else holds.delete(owner);
        },
      };
    },

    isFenced(owner) {
      return (holds.get(owner) ?? 0) > 0;
    },
  };
}
