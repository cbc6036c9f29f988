/** The help texts of `agent-pty` and its subcommands (`agent-pty [COMMAND] --help`). */
import { DIALECTS } from '../../shared/dialects.js';
import { MCP_DEFAULT_MODE, MCP_HELP } from '../mcp/options.js';
import { ATTACH_HELP } from './attach-command.js';
import { CLI_COMMANDS_HELP } from './input-line.js';
import { WATCH_HELP } from './watch-command.js';

/** Text of `agent-pty --help` (the interactive CLI is the command without a subcommand). */
export const MAIN_HELP = `agent-pty — persistent, interactive terminal sessions for AI agents

Usage:
  agent-pty [--sandbox MODE] [--workspace DIR]   interactive: type lines, see exactly what a model gets
  agent-pty mcp [OPTIONS]                         MCP server over stdio with the six terminal tools
  agent-pty serve --stdio                         be an execution world: the engine protocol on stdin/stdout
  agent-pty daemon [--socket PATH] [--config F]   per-user daemon: sessions that outlive their clients
  agent-pty watch [--port N] [--socket PATH]      a local web page showing every terminal live (docs/watch.md)
  agent-pty attach NAME                           type into a session yourself (Ctrl-] hands back)
  agent-pty demo                                  a short scripted tour (non-interactive)
  agent-pty COMMAND --help                        help of one command
  agent-pty --version                             print the version

Modes (--sandbox): read-only (nothing writable but a private /tmp), workspace-write (the workspace
too; the default, as for mcp), danger-full-access (unconfined). --workspace defaults to the current
directory. Shells: ${DIALECTS.join(', ')} (mcp --shell).

Interactive: the session runs in mode ${MCP_DEFAULT_MODE} of the workspace unless --sandbox says
otherwise, and the banner says its mode and containment. ${CLI_COMMANDS_HELP}`;

/** Text of `agent-pty demo --help`. */
export const DEMO_HELP = `agent-pty demo

Runs a short scripted tour in an unconfined bash session and prints, step by step, what a model
receives: a command and its exit code, a failing command, cd, a multi-step command, a read prompt,
a python3 REPL, and cancelling a long command with a real SIGINT. Exits 0 when every step settled
as expected.`;

/** Text of `agent-pty serve --help`. */
export const SERVE_HELP = `agent-pty serve --stdio

Makes this process an execution world (docs/worlds.md): the engine protocol runs on stdin/stdout,
shells run on this machine (confined by bubblewrap when a session asks for a confined mode), and
diagnostics go to stderr. Another agent-pty reaches it with mcp --world NAME=COMMAND, e.g.
  agent-pty mcp --world 'box=ssh box agent-pty serve --stdio'
It exits once its client is gone (stdin closed, link silent) or on SIGTERM, SIGINT or SIGHUP, every
session closed first.`;

/** Text of `agent-pty daemon --help`. */
export const DAEMON_HELP = `agent-pty daemon [--socket PATH] [--config FILE] [--status | --stop]

Runs one engine for this user in the foreground (docs/daemon.md) and serves the engine protocol on a
Unix socket: default $XDG_RUNTIME_DIR/agent-pty/engine.sock, else /tmp/agent-pty-$UID/engine.sock.
Its sessions outlive their clients: agent-pty mcp --daemon, or createRemoteEngine({ socket }),
detaches them when it goes and reattaches them by name. The socket's directory must be a real
directory of this user with mode 0700 (a missing one is created); anything else is refused.

Options:
  --socket PATH   the socket to listen on (or, with --status/--stop, to ask)
  --config FILE   engine configuration as JSON (docs/daemon.md); clients cannot change it
  --status        print the running daemon's pid, version, protocol range and sessions
  --stop          close every session of the running daemon and stop it

SIGTERM, SIGINT or SIGHUP stop it, every session closed first.`;

/** The help of each command. */
export const COMMAND_HELP = {
  interactive: MAIN_HELP,
  mcp: MCP_HELP,
  serve: SERVE_HELP,
  daemon: DAEMON_HELP,
  demo: DEMO_HELP,
  watch: WATCH_HELP,
  attach: ATTACH_HELP,
} as const;
