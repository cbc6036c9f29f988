/**
 * Command-line parsing for `agent-pty`: a subcommand (none = the interactive CLI) and its options.
 * `--help`/`-h` and `--version`/`-v` work with every command and win over everything else, so a
 * person can always ask (`agent-pty mcp --help` must not start a server or fail on the flag).
 */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { TerminalError } from '../../shared/errors.js';
import { flagArguments } from '../../shared/flag-arguments.js';
import { SANDBOX_MODES, type SandboxMode } from '../../shared/types.js';
import { narrowImplicitWorkspace, refuseWritableFilesystemRoot } from '../../shared/workspace-scope.js';
import { MCP_DEFAULT_MODE, MCP_VALUE_FLAGS } from '../mcp/options.js';

/** The commands: `interactive` is `agent-pty` without a subcommand. */
export type CliCommand = 'interactive' | 'mcp' | 'serve' | 'demo' | 'daemon' | 'watch' | 'attach';

/** Parsed command line. */
export type CliArgs =
  | { command: 'help'; topic: CliCommand }
  | { command: 'version' }
  | {
      command: 'interactive';
      /** `--sandbox MODE`; default the MCP server's (`workspace-write`). */
      sandbox: SandboxMode;
      /** `--workspace DIR` (absolute); default the current directory. */
      workspace: string;
      /**
       * Set when no `--workspace` was given and the CLI was started in `/`, `$HOME` or above it: the
       * mode was narrowed to `read-only` (SPEC §4.1), and this says so.
       */
      notice?: string;
    }
  /** Every argument but the subcommand, for the MCP server's own parser (`mcp/options.ts`). */
  | { command: 'mcp'; mcpArgs: string[] }
  | { command: 'serve' }
  | { command: 'demo' }
  /** `agent-pty daemon [--socket PATH] [--config FILE] [--status | --stop]`. */
  | { command: 'daemon'; action: 'run' | 'status' | 'stop'; socket?: string; config?: string }
  /** The watch page over the daemon (SPEC §13); options parsed by `watch-command.ts`. */
  | { command: 'watch'; watchArgs: string[] }
  /** A person's terminal on a session (SPEC §13); options parsed by `attach-command.ts`. */
  | { command: 'attach'; attachArgs: string[] };

const SUBCOMMANDS: ReadonlySet<string> = new Set(['mcp', 'serve', 'demo', 'daemon', 'watch', 'attach']);
const HELP_FLAGS: ReadonlySet<string> = new Set(['-h', '--help']);
const VERSION_FLAGS: ReadonlySet<string> = new Set(['-v', '--version']);
/** Flags whose value is the next argument (unless written `--flag=value`): it is never a command word. */
const VALUE_FLAGS: ReadonlySet<string> = new Set([...MCP_VALUE_FLAGS, '--config', '--port', '--socket']);

/** Parses argv (without node and script). Throws INVALID_ARGUMENT with a usable message. */
export function parseCliArgs(argv: readonly string[], cwd = process.cwd(), home = homedir()): CliArgs {
  const words: Array<{ index: number; word: string }> = [];
  let help = false;
  let version = false;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (HELP_FLAGS.has(arg)) help = true;
    else if (VERSION_FLAGS.has(arg)) version = true;
    else if (VALUE_FLAGS.has(arg)) index++;
    else if (!arg.startsWith('-')) words.push({ index, word: arg });
  }
  const first = words[0];
  if (first?.word === 'help') return { command: 'help', topic: commandNamed(words[1]?.word) };
  const command: CliCommand =
    first !== undefined && SUBCOMMANDS.has(first.word) ? (first.word as CliCommand) : 'interactive';
  if (help) return { command: 'help', topic: command };
  if (version) return { command: 'version' };
  const rest = command === 'interactive' ? [...argv] : argv.filter((_, index) => index !== first!.index);
  switch (command) {
    case 'mcp':
      return { command, mcpArgs: rest };
    case 'watch':
      return { command, watchArgs: rest };
    case 'attach':
      return { command, attachArgs: rest };
    case 'serve':
      // Exactly `--stdio`: the only transport, named so others can be added later.
      if (rest.length !== 1 || rest[0] !== '--stdio') {
        throw new TerminalError(
          'INVALID_ARGUMENT',
          'usage: agent-pty serve --stdio (see agent-pty serve --help)',
        );
      }
      return { command };
    case 'daemon':
      return parseDaemon(rest, cwd);
    case 'demo':
      if (rest.length > 0) {
        throw new TerminalError('INVALID_ARGUMENT', `agent-pty demo takes no arguments; got '${rest[0]}'`);
      }
      return { command };
    case 'interactive':
      return parseInteractive(rest, cwd, home);
  }
}

/** The command a `help WORD` asks about. */
function commandNamed(word: string | undefined): CliCommand {
  if (word === undefined) return 'interactive';
  if (SUBCOMMANDS.has(word)) return word as CliCommand;
  throw new TerminalError(
    'INVALID_ARGUMENT',
    `no command '${word}'; commands: mcp, serve, daemon, demo, watch, attach (try --help)`,
  );
}

/** `[--socket PATH] [--config FILE] [--status | --stop]` (values also as `--flag=value`). */
function parseDaemon(argv: readonly string[], cwd: string): CliArgs {
  const parsed: CliArgs & { command: 'daemon' } = { command: 'daemon', action: 'run' };
  for (const { arg, flag, inline, value: rawValue } of flagArguments(
    argv,
    (flag) => `agent-pty daemon: ${flag} needs a value`,
  )) {
    const value = (): string => resolve(cwd, rawValue());
    if (flag === '--socket') parsed.socket = value();
    else if (flag === '--config') parsed.config = value();
    else if ((flag === '--status' || flag === '--stop') && inline === undefined) {
      if (parsed.action !== 'run') {
        throw new TerminalError('INVALID_ARGUMENT', 'agent-pty daemon: give one of --status and --stop');
      }
      parsed.action = flag === '--status' ? 'status' : 'stop';
    } else {
      throw new TerminalError('INVALID_ARGUMENT', `agent-pty daemon: unknown argument '${arg}' (try --help)`);
    }
  }
  return parsed;
}

/** `[--sandbox MODE] [--workspace DIR]` (each also as `--flag=value`). */
function parseInteractive(argv: readonly string[], cwd: string, home: string): CliArgs {
  let sandbox: SandboxMode = MCP_DEFAULT_MODE;
  let workspace = cwd;
  let workspaceGiven = false;
  for (const { arg, flag, value } of flagArguments(argv, (flag) => `${flag} needs a value (try --help)`)) {
    if (flag === '--sandbox') {
      const mode = value();
      if (!(SANDBOX_MODES as readonly string[]).includes(mode)) {
        throw new TerminalError(
          'INVALID_ARGUMENT',
          `--sandbox must be one of ${SANDBOX_MODES.join(', ')}; got '${mode}'`,
        );
      }
      sandbox = mode as SandboxMode;
    } else if (flag === '--workspace') {
      workspace = resolve(cwd, value());
      workspaceGiven = true;
    } else {
      throw new TerminalError('INVALID_ARGUMENT', `unknown argument '${arg}' (try --help)`);
    }
  }
  if (workspaceGiven) {
    refuseWritableFilesystemRoot(sandbox, workspace);
    return { command: 'interactive', sandbox, workspace };
  }
  const { mode, notice } = narrowImplicitWorkspace(sandbox, workspace, home);
  return { command: 'interactive', sandbox: mode, workspace, ...(notice === undefined ? {} : { notice }) };
}
