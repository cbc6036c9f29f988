/**
 * agent-pty: persistent, interactive terminal sessions for AI agents. The package entry: the engine
 * (§5), the harness layer with its services and plugins (§6), the model-facing tools and the MCP server
 * (§7), the Linux sandbox provider (§4.1), and execution worlds (§10).
 */

// Configuration, errors and the engine API types.
export { type EngineConfig, type EngineConfigInput, resolveEngineConfig } from '../shared/config.js';
export {
  isTerminalError,
  TerminalBackendCleanupError,
  TerminalError,
  type TerminalErrorCode,
} from '../shared/errors.js';
export type { SandboxPolicy, SandboxProvider } from '../shared/sandbox.js';
export type * from '../shared/types.js';
export { SANDBOX_MODES } from '../shared/types.js';

// The engine.
export { createPtyEngine, type EngineInternals, type EngineOptions } from './engine/engine.js';
// The harness: plugin host, services, plugins.
export { createHost, type Host } from './harness/host.js';
export { createLocalHost, type LocalHostOptions, ptyLocalPlugin } from './harness/local-host.js';
export type { AnyPlugin, Plugin, PluginContext, PluginEntry } from './harness/plugin.js';
export { ptyServicePlugin } from './harness/plugins/pty.js';
export {
  createPtyLocalPlugin,
  DEFAULT_BACKEND_TYPE,
  type PtyLocalConfig,
} from './harness/plugins/pty-local.js';
export { createSandboxPlugin } from './harness/plugins/sandbox.js';
export { sandboxPolicyPlugin } from './harness/plugins/sandbox-policy.js';
export {
  createPtyService,
  type PtyBackend,
  type PtyService,
  type PtySessionSnapshot,
  type PtySpawnRequest,
} from './harness/pty-service.js';
export {
  createSandboxPolicy,
  DEFAULT_SANDBOX_MODE,
  type SandboxPolicyService,
} from './harness/sandbox-policy.js';
export type { SandboxService } from './harness/sandbox-service.js';
export type { HarnessServices } from './harness/services.js';
export { runMcpServer } from './mcp/server.js';
// Model-facing tools and the MCP server.
export { createTerminalMcpServer, type TerminalMcpServerOptions } from './mcp/terminal-mcp-server.js';
// The Linux sandbox provider.
export { type BubblewrapOptions, createBubblewrapSandbox } from './sandbox/bubblewrap.js';
export { runTerminalTool, TERMINAL_TOOLS, type TerminalToolOutcome } from './tools/catalog.js';
export { TERMINAL_TOOLS_GUIDANCE } from './tools/guidance.js';
export { DEFAULT_MAX_RESULT_BYTES, type TerminalTool, type TerminalToolContext } from './tools/tool.js';
export { connectDaemonViewer, type DaemonViewer, type ViewedSession } from './worlds/daemon-viewer.js';
// Execution worlds (§10) and the daemon (§12): the engine API over `serve --stdio` or a daemon's socket.
export {
  type AttachTarget,
  type CommandEngineOptions,
  createRemoteEngine,
  type DaemonEngineApi,
  type RemoteEngine,
  type RemoteEngineInternals,
  type RemoteEngineOptions,
  type SocketEngineOptions,
} from './worlds/remote-engine.js';
export { defaultSocketPath } from './worlds/socket-directory.js';
export type { WorldSession as RemoteSession } from './worlds/world-session.js';
