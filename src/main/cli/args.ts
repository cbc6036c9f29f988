/** Command-line parsing for `agent-pty`: a subcommand and a few `--flag value` options. */
import { resolve } from 'node:path';
import { TerminalError } from '../../shared/errors.js';
import { SANDBOX_MODES, type SandboxMode } from '../../shared/types.js';

/** Parsed command line. */
export interface CliArgs {
  command: 'interactive' | 'demo' | 'mcp' | 'serve' | 'help' | 'version';
  /** `--sandbox MODE`, when given. */
  sandbox: SandboxMode | undefined;
  /** `--workspace DIR` (absolute), default the current directory. */
  workspace: string;
  /** For `mcp`: every argument but the subcommand, parsed by the MCP server's own options. */
  mcpArgs: string[];
}

/** Parses argv (without node and script). Throws INVALID_ARGUMENT with a usable message. */
export function parseCliArgs(argv: readonly string[]): CliArgs {
  const args: CliArgs = {
    command: 'interactive',
    sandbox: undefined,
    workspace: process.cwd(),
    mcpArgs: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new TerminalError('INVALID_ARGUMENT', `${arg} needs a value`);
      return next;
    };
    if (arg === 'mcp') {
      // The server has options of its own (--max-wait, --flag=value): it parses everything.
      return { ...args, command: 'mcp', mcpArgs: [...argv.slice(0, i), ...argv.slice(i + 1)] };
    }
    if (arg === 'serve') {
      // `serve` takes exactly `--stdio`: the only transport, named so others can be added later.
      if (argv.length !== i + 2 || argv[i + 1] !== '--stdio') {
        throw new TerminalError('INVALID_ARGUMENT', 'usage: agent-pty serve --stdio');
      }
      args.command = 'serve';
      break;
    }
    if (arg === 'demo') args.command = arg;
    else if (arg === '-h' || arg === '--help' || arg === 'help') args.command = 'help';
    else if (arg === '-v' || arg === '--version') args.command = 'version';
    else if (arg === '--sandbox') {
      const mode = value();
      if (!SANDBOX_MODES.includes(mode as SandboxMode)) {
        throw new TerminalError(
          'INVALID_ARGUMENT',
          `--sandbox must be one of ${SANDBOX_MODES.join(', ')}; got '${mode}'`,
        );
      }
      args.sandbox = mode as SandboxMode;
    } else if (arg === '--workspace') args.workspace = resolve(value());
    else throw new TerminalError('INVALID_ARGUMENT', `unknown argument '${arg}' (try --help)`);
  }
  return args;
}

/** Text of `agent-pty --help`. */
export const USAGE = `agent-pty — persistent, interactive terminal sessions for AI agents

Usage:
  agent-pty [--sandbox MODE] [--workspace DIR]   interactive: type lines, see what a model receives
  agent-pty demo                                  a short scripted tour (non-interactive)
  agent-pty mcp [--sandbox MODE] [--workspace DIR] [--shell NAME] [--max-wait MS]
                                                  MCP server over stdio with the six terminal tools
                                                  (--shell: bash, zsh or pwsh, default bash;
                                                  --max-wait: longest wait of one send, default 50000)
  agent-pty mcp --world NAME=COMMAND …            … with terminals also in execution worlds (docs/worlds.md)
  agent-pty serve --stdio                         be an execution world: the engine protocol on stdin/stdout
Modes: read-only, workspace-write, danger-full-access.
Interactive: output is shown as it arrives, then the status lines a model receives. An empty line
presses Enter; :wait [MS] keeps waiting without typing; :waitfor /REGEX/ LINE returns once REGEX
matches; :result, :read [offset] [count], :signal NAME, :status, :quit (Ctrl-C cancels a running send).`;
