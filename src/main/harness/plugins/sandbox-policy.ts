/** Plugin `sandbox-policy`: provides `ctx.sandboxPolicy`; config `{ mode?, workspaceRoot? }` (default read-only, cwd). */
import type { Plugin } from '../plugin.js';
import {
  createSandboxPolicy,
  resolveSandboxPolicyConfig,
  type SandboxPolicyConfig,
} from '../sandbox-policy.js';

/** Provides `ctx.sandboxPolicy`. */
export const sandboxPolicyPlugin: Plugin<never, 'sandboxPolicy', SandboxPolicyConfig> = {
  name: 'sandbox-policy',
  inject: [],
  provide: ['sandboxPolicy'],
  configure: (raw) => resolveSandboxPolicyConfig(raw),
  async activate(_ctx, config) {
    return { services: { sandboxPolicy: createSandboxPolicy(config) } };
  },
};
