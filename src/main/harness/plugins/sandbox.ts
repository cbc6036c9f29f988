/** Plugin `sandbox`: provides `ctx.sandbox` from a sandbox provider (on Linux, bubblewrap). */
import type { Plugin } from '../plugin.js';
import type { SandboxService } from '../sandbox-service.js';

/** A plugin that mounts `provider` as `ctx.sandbox`. */
export function createSandboxPlugin(provider: SandboxService): Plugin<never, 'sandbox', undefined> {
  return {
    name: 'sandbox',
    inject: [],
    provide: ['sandbox'],
    async activate() {
      return { services: { sandbox: provider } };
    },
  };
}
