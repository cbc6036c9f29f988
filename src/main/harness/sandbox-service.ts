/**
 * `ctx.sandbox`: the provider that wraps a shell argv so it runs confined (SPEC §4.1). The engine
 * calls `confine` itself when a spawn carries a sandbox selection; the harness only mounts the
 * provider. A platform without one mounts `unavailableSandbox`, which fails every confined spawn
 * with a message saying what to do instead.
 */
import { TerminalError } from '../../shared/errors.js';
import type { SandboxPolicy, SandboxProvider } from '../../shared/sandbox.js';

/** `ctx.sandbox`: the mounted sandbox provider. */
export type SandboxService = SandboxProvider;

/** A provider that can enforce no confined mode (platforms without a sandbox implementation). */
export function unavailableSandbox(why: string): SandboxService {
  return {
    name: 'unavailable',
    async confine(_argv: string[], policy: SandboxPolicy): Promise<string[]> {
      throw new TerminalError(
        'SANDBOX_UNAVAILABLE',
        `sandbox mode ${policy.mode} cannot be enforced: ${why}; use danger-full-access to run unconfined`,
      );
    },
  };
}
