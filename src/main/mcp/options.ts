/** Command line of `agent-pty mcp [--sandbox MODE] [--workspace DIR] [--shell NAME] [--max-wait MS] [--max-sessions N] [--world NAME=COMMAND …] [--watch]`. */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { DIALECTS, isDialect } from '../../shared/dialects.js';
import { TerminalError } from '../../shared/errors.js';
import { flagArguments } from '../../shared/flag-arguments.js';
import { type Dialect, SANDBOX_MODES, type SandboxMode } from '../../shared/types.js';
import { narrowImplicitWorkspace, refuseWritableFilesystemRoot } from '../../shared/workspace-scope.js';
import { splitCommandLine } from '../worlds/command-line.js';

/** The MCP server's default: the model may write in the folder it was started in, nowhere else. */
export const MCP_DEFAULT_MODE: SandboxMode = 'workspace-write';

/**
 * Default of `--max-wait`: the longest one `terminal_send` call waits before it returns `running`.
 * Below the 60 s request timeout of the MCP SDK's clients (and the `tool_timeout_sec = 60` that
 * desktop clients are configured with), so a long command ends as a result the model can act on,
 * not as a client-side timeout.
 */
export const MCP_DEFAULT_MAX_WAIT_MS = 50_000;

/** Default of `--max-sessions`: terminals one MCP connection may hold at once (SPEC §4.8). */
export const MCP_DEFAULT_MAX_SESSIONS = 32;

/** Usage line of the subcommand, quoted by every options error. */
export const MCP_USAGE_LINE =
  'agent-pty mcp [--sandbox MODE] [--workspace DIR] [--shell NAME] [--max-wait MS] [--max-sessions N] [--world NAME=COMMAND …] [--daemon [--socket PATH]] [--watch]';

/** Text of `agent-pty mcp --help`. */
export const MCP_HELP = `${MCP_USAGE_LINE}

Serves the six terminal tools (terminal_open, terminal_send, terminal_read, terminal_signal,
terminal_close, terminal_list) to one MCP client over stdin/stdout. Every terminal belongs to the
connection: when stdin closes, or on SIGTERM, SIGINT or SIGHUP, all of them are closed with their
process trees and the server exits. Diagnostics go to stderr.

Options:
  --sandbox MODE        read-only, workspace-write or danger-full-access (default ${MCP_DEFAULT_MODE}):
                        read-only writes nothing but a private /tmp, workspace-write also the
                        workspace, danger-full-access is unconfined
  --workspace DIR       workspace root and default cwd of every terminal (default: the current directory)
  --shell NAME          shell of a terminal_open that names none: ${DIALECTS.join(', ')} (default bash)
  --max-wait MS         longest wait of one terminal_send call in ms (default ${MCP_DEFAULT_MAX_WAIT_MS});
                        keep it below the client's tool timeout
  --max-sessions N      terminals the connection may hold at once (default ${MCP_DEFAULT_MAX_SESSIONS})
  --world NAME=COMMAND  an execution world terminal_open can name, reached by running COMMAND
                        (repeatable), e.g. --world 'box=ssh box agent-pty serve --stdio'
  --daemon              run the terminals in the per-user daemon (docs/daemon.md), started if absent:
                        they survive this server; closing the connection detaches them, and
                        terminal_open with the name of a detached terminal reattaches it
  --socket PATH         the daemon's socket (default $XDG_RUNTIME_DIR/agent-pty/engine.sock)
  --watch               serve a watch page on 127.0.0.1 (docs/watch.md): a person sees every terminal
                        live and can take the keyboard for a password; its link (with its token) is
                        printed on stderr and written to $XDG_RUNTIME_DIR/agent-pty/watch-<pid>.url
  -h, --help            print this help
  -v, --version         print the version

Example (Claude Code): claude mcp add terminal -- agent-pty mcp --workspace "$PWD"
More: docs/mcp.md in the package.`;

/** Parsed options. */
export interface McpOptions {
  /** Sandbox mode of every terminal of the connection. */
  mode: SandboxMode;
  /** Absolute workspace root. */
  workspaceRoot: string;
  /** Longest wait of one `terminal_send` call in ms (larger `timeoutMs` values are clamped to it). */
  maxWaitMs: number;
  /** Most terminals the connection may hold at once; one more `terminal_open` is refused (SESSION_LIMIT). */
  maxSessions: number;
  /** Execution worlds (SPEC §10): name → transport argv, from `--world NAME=COMMAND` (repeatable). */
  worlds?: Record<string, string[]>;
  /** Shell of a `terminal_open` that names none (default: the engine's, bash). */
  shell?: Dialect;
  /** `--daemon [--socket PATH]`: terminals run in the per-user daemon (SPEC §12); the socket, if given. */
  daemon?: { socket?: string };
  /** `--watch`: serve the watch page of SPEC §13 for this server's terminals. */
  watch?: boolean;
  /**
   * Set when no `--workspace` was given and the server was started in `/`, `$HOME` or above it: the
   * mode was narrowed to `read-only` (SPEC §4.1), and this says so (stderr and the instructions).
   */
  notice?: string;
}

/** The flags of `agent-pty mcp` whose value is the next argument (unless written `--flag=value`). */
export const MCP_VALUE_FLAGS: ReadonlySet<string> = new Set([
  '--sandbox',
  '--workspace',
  '--shell',
  '--max-wait',
  '--max-sessions',
  '--world',
  '--socket',
]);

/**
 * Parses `--sandbox MODE`, `--workspace DIR`, `--shell NAME`, `--max-wait MS`, `--max-sessions N` (each also as
 * `--flag=value`) and `--world NAME=COMMAND` (COMMAND split like a shell argv, see
 * worlds/command-line.ts); throws `INVALID_ARGUMENT`.
 */
export function parseMcpOptions(argv: readonly string[], cwd = process.cwd(), home = homedir()): McpOptions {
  const options: McpOptions = {
    mode: MCP_DEFAULT_MODE,
    workspaceRoot: cwd,
    maxWaitMs: MCP_DEFAULT_MAX_WAIT_MS,
    maxSessions: MCP_DEFAULT_MAX_SESSIONS,
  };
  let workspaceGiven = false;
  for (const { arg, flag, inline, value } of flagArguments(
    argv,
    (flag) => `agent-pty mcp: ${flag} needs a value`,
  )) {
    if (flag === '--sandbox') {
      const mode = value();
      if (!(SANDBOX_MODES as readonly string[]).includes(mode)) {
        throw new TerminalError(
          'INVALID_ARGUMENT',
          `agent-pty mcp: --sandbox must be one of ${SANDBOX_MODES.join(', ')}; got '${mode}'`,
        );
      }
      options.mode = mode as SandboxMode;
    } else if (flag === '--shell') {
      const shell = value();
      if (!isDialect(shell)) {
        throw new TerminalError(
          'INVALID_ARGUMENT',
          `agent-pty mcp: --shell must be one of ${DIALECTS.join(', ')}; got '${shell}'`,
        );
      }
      options.shell = shell;
    } else if (flag === '--workspace') {
      options.workspaceRoot = resolve(cwd, value());
      workspaceGiven = true;
    } else if (flag === '--max-wait') {
      const text = value();
      const ms = Number(text);
      if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(ms) || ms < 1) {
        throw new TerminalError(
          'INVALID_ARGUMENT',
          `agent-pty mcp: --max-wait must be a whole number of milliseconds (1 or more), e.g. 50000; got '${text}'`,
        );
      }
      options.maxWaitMs = ms;
    } else if (flag === '--max-sessions') {
      const text = value();
      const count = Number(text);
      if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(count) || count < 1) {
        throw new TerminalError(
          'INVALID_ARGUMENT',
          `agent-pty mcp: --max-sessions must be a whole number of terminals (1 or more), e.g. 32; got '${text}'`,
        );
      }
      options.maxSessions = count;
    } else if (flag === '--daemon' && inline === undefined) {
      options.daemon = { ...options.daemon };
    } else if (flag === '--socket') {
      options.daemon = { ...options.daemon, socket: resolve(cwd, value()) };
    } else if (arg === '--watch') {
      options.watch = true;
    } else if (flag === '--world') {
      const spec = value();
      const separator = spec.indexOf('=');
      const name = spec.slice(0, separator);
      const command = separator > 0 ? splitCommandLine(spec.slice(separator + 1)) : [];
      if (separator <= 0 || command.length === 0) {
        throw new TerminalError(
          'INVALID_ARGUMENT',
          `agent-pty mcp: --world needs NAME=COMMAND, e.g. --world 'box=ssh box agent-pty serve --stdio'; got '${spec}'`,
        );
      }
      options.worlds ??= {};
      if (Object.hasOwn(options.worlds, name)) {
        throw new TerminalError('INVALID_ARGUMENT', `agent-pty mcp: world '${name}' is given twice`);
      }
      options.worlds[name] = command;
    } else {
      throw new TerminalError(
        'INVALID_ARGUMENT',
        `agent-pty mcp: unknown argument '${arg}' (usage: ${MCP_USAGE_LINE})`,
      );
    }
  }
  if (options.daemon !== undefined && !argv.includes('--daemon')) {
    throw new TerminalError('INVALID_ARGUMENT', 'agent-pty mcp: --socket needs --daemon');
  }
  if (workspaceGiven) {
    refuseWritableFilesystemRoot(options.mode, options.workspaceRoot);
    return options;
  }
  const { mode, notice } = narrowImplicitWorkspace(options.mode, options.workspaceRoot, home);
  return notice === undefined ? options : { ...options, mode, notice };
}
