/** Sandbox providers of the host thread (SPEC §4.1); the contract lives in `src/shared/sandbox.ts`. */
export type { SandboxPolicy, SandboxProvider } from '../../shared/sandbox.js';
export { type BubblewrapOptions, createBubblewrapSandbox, DEFAULT_HIDDEN_PATHS } from './bubblewrap.js';
