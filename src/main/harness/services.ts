/**
 * The services a harness host can inject, by name. Modules that add services extend
 * `HarnessServices` by declaration merging.
 */
import type { PtyService } from './pty-service.js';
import type { SandboxPolicyService } from './sandbox-policy.js';
import type { SandboxService } from './sandbox-service.js';

/** Service name → service type. */
export interface HarnessServices {
  /** Owner-scoped terminal sessions. */
  pty: PtyService;
  /** The mounted sandbox provider. */
  sandbox: SandboxService;
  /** Effective sandbox mode per owner, with the mode fence. */
  sandboxPolicy: SandboxPolicyService;
}

/** Name of an injectable service. */
export type ServiceName = keyof HarnessServices;
