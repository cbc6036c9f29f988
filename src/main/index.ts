/**
 * agent-pty: persistent, interactive terminal sessions for AI agents. The package entry.
 */
export { type EngineConfig, type EngineConfigInput, resolveEngineConfig } from '../shared/config.js';
export {
  isTerminalError,
  TerminalBackendCleanupError,
  TerminalError,
  type TerminalErrorCode,
} from '../shared/errors.js';
export type * from '../shared/types.js';
export { createPtyEngine, type EngineInternals, type EngineOptions } from './engine.js';
