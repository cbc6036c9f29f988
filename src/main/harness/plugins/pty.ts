/** Plugin `pty`: provides `ctx.pty`, the owner-scoped session registry; disposing it closes everything. */
import type { Plugin } from '../plugin.js';
import { createPtyService } from '../pty-service.js';

/** Provides `ctx.pty`. */
export const ptyServicePlugin: Plugin<never, 'pty', undefined> = {
  name: 'pty',
  inject: [],
  provide: ['pty'],
  async activate() {
    const pty = createPtyService();
    return { services: { pty }, deactivate: () => pty.dispose() };
  },
};
