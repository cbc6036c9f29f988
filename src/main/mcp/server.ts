/**
 * `agent-pty mcp [--sandbox MODE] [--workspace DIR] [--shell NAME] [--max-wait MS] [--world
 * NAME=COMMAND …]`: the terminal tools over stdio (SPEC §7), with terminals on this machine and in the
 * named execution worlds (SPEC §10). `--shell` is the shell of a `terminal_open` that names none.
 * Every terminal belongs to the connection and is closed when it ends — stdin closes, or SIGTERM,
 * SIGINT or SIGHUP arrives — leaving no process behind. The default sandbox is `workspace-write` on
 * the current folder; a mode that cannot be enforced makes `terminal_open` fail with what to do.
 * stdout carries only the protocol; diagnostics go to stderr. Requests up to 64 MiB are read; a longer
 * line is skipped and answered with an error (stdio-line-transport.ts).
 */
import { describeError } from '../../shared/errors.js';
import { DisposableStore } from '../../shared/lifecycle.js';
import { CLIENT_GONE_GRACE_MS } from '../../shared/session-limits.js';
import type { PtyEngine, SandboxMode } from '../../shared/types.js';
import { ensureDaemon } from '../daemon/daemon-starter.js';
import {
  createReconnectingDaemonEngine,
  type ReconnectingDaemonEngine,
} from '../daemon/reconnecting-daemon-engine.js';
import { createLocalHost } from '../harness/local-host.js';
import { startMcpWatch } from '../watch/mcp-watch.js';
import { createRemoteEngine, type RemoteEngine } from '../worlds/remote-engine.js';
import { defaultSocketPath } from '../worlds/socket-directory.js';
import { parseMcpOptions } from './options.js';
import { StdioLineTransport } from './stdio-line-transport.js';
import { createTerminalMcpServer } from './terminal-mcp-server.js';

/** Signals that end the connection (and with it every terminal) instead of killing the process outright. */
const SHUTDOWN_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** Why the connection ended when the client closed its end of stdin. */
const STDIN_CLOSED = 'stdin closed';
/** What each sandbox mode lets a shell write, in the words of the server's instructions. */
const MODE_MEANING: Record<SandboxMode, string> = {
  'read-only': 'nothing is writable but a private /tmp',
  'workspace-write': 'only the workspace and a private /tmp are writable',
  'danger-full-access': 'unconfined',
};

/** Owner id of the single stdio connection of this process. */
const CONNECTION_OWNER = `mcp-stdio-${process.pid}`;

/**
 * Serves the terminal tools on this process's stdin/stdout until the connection ends, then closes
 * every terminal and the engine. Resolves once everything is down (the caller just returns); rejects
 * with the options error before serving, or with the teardown failures after.
 */
export async function runMcpServer(argv: string[]): Promise<void> {
  const options = parseMcpOptions(argv);
  if (options.notice !== undefined) process.stderr.write(`agent-pty mcp: ${options.notice}\n`);
  // With --daemon the terminals live in the per-user daemon (SPEC §12), scoped by this server's policy.
  let daemonEngine: ReconnectingDaemonEngine | undefined;
  const socket = options.daemon === undefined ? undefined : (options.daemon.socket ?? defaultSocketPath());
  // Run again after the daemon died (reconnecting-daemon-engine.ts): starts it anew if need be.
  const connectDaemon = async (path: string): Promise<RemoteEngine> => {
    await ensureDaemon(path, (line) => process.stderr.write(`agent-pty mcp: ${line}\n`));
    return createRemoteEngine({
      socket: path,
      scope: { mode: options.mode, workspaceRoot: options.workspaceRoot },
    });
  };
  let engine: PtyEngine | undefined;
  const host = await createLocalHost({
    ...(socket === undefined
      ? {}
      : {
          createEngine: async () => {
            daemonEngine = await createReconnectingDaemonEngine(() => connectDaemon(socket));
            return daemonEngine;
          },
        }),
    onEngine: (started) => {
      engine = started;
    },
    mode: options.mode,
    // A narrowed root stays implicit (the policy takes the cwd), so the sandbox keeps $HOME private.
    ...(options.notice === undefined ? { workspaceRoot: options.workspaceRoot } : {}),
    ptyLocal: {
      worlds: options.worlds ?? {},
      ...(options.shell === undefined ? {} : { dialect: options.shell }),
    },
  });
  const worldNames = Object.keys(options.worlds ?? {});
  const pty = host.service('pty');
  // The watch page (SPEC §13): its link goes to stderr and a 0600 file, never to the client.
  const watch =
    options.watch === true && engine !== undefined
      ? await startMcpWatch(engine).catch(async (error: unknown) => {
          await host.dispose();
          throw error;
        })
      : undefined;
  const server = createTerminalMcpServer({
    pty,
    owner: CONNECTION_OWNER,
    maxWaitMs: options.maxWaitMs,
    maxSessions: options.maxSessions,
    ...(watch === undefined ? {} : { watchPage: watch.address }),
    instructionsSuffix:
      `\nThis server runs every terminal in sandbox mode ${options.mode} (${MODE_MEANING[options.mode]}) ` +
      `with workspace ${options.workspaceRoot}.\n` +
      (options.notice === undefined ? '' : `It was ${options.notice}.\n`) +
      (socket === undefined
        ? ''
        : 'Terminals outlive this connection: terminal_list also shows earlier ones (attached: false); terminal_open with such a name reattaches it. Name long-running terminals.\n') +
      (worldNames.length === 0
        ? ''
        : `Besides this machine (world "local", the default), terminal_open can open terminals in these execution worlds: ${worldNames.join(', ')}.\n`),
  });

  let endConnection!: (why: string) => void;
  const ended = new Promise<string>((resolve) => {
    endConnection = resolve;
  });
  // Kept installed until teardown is complete: a second signal must not kill the process while
  // terminals are still being closed (that would orphan them).
  const onSignal = (signal: NodeJS.Signals) => endConnection(signal);
  const hooks = new DisposableStore();
  for (const signal of SHUTDOWN_SIGNALS) {
    hooks.listen('mcp shutdown signal hook', process, signal, onSignal);
  }
  const onStdinEnd = () => endConnection(STDIN_CLOSED);
  const stdinHooks = new DisposableStore();
  stdinHooks.listen('mcp stdin end listener', process.stdin, 'end', onStdinEnd, { once: true });
  stdinHooks.listen('mcp stdin end listener', process.stdin, 'close', onStdinEnd, { once: true });
  server.onclose = () => endConnection('connection closed');
  server.onerror = (error) => process.stderr.write(`agent-pty mcp: ${describeError(error)}\n`);

  const failures: unknown[] = [];
  let why = 'setup failed';
  try {
    // Not the SDK's StdioServerTransport: it drops the connection on a line over 10 MiB (SPEC §4.7).
    await server.connect(new StdioLineTransport(process.stdin, process.stdout));
    why = await ended;
    process.stderr.write(
      `agent-pty mcp: ${why}; ${daemonEngine === undefined ? 'closing' : 'detaching'} terminals\n`,
    );
  } finally {
    // Order: stop answering, close the connection's terminals, then the engine and the rest. A client
    // that is gone (its stdin ended) waits for nobody: the terminals get a short grace (SPEC §4.8).
    await server.close().catch((error: unknown) => failures.push(error));
    await watch?.close().catch((error: unknown) => failures.push(error));
    const grace = why === STDIN_CLOSED ? { graceMs: CLIENT_GONE_GRACE_MS } : {};
    // With --daemon the connection's terminals detach (they run on for a later connection): ending
    // the daemon link first makes every later close of them a no-op.
    await daemonEngine?.close().catch((error: unknown) => failures.push(error));
    await pty
      .disposeOwned(CONNECTION_OWNER, 'MCP connection closed', grace)
      .catch((error: unknown) => failures.push(error));
    await host.dispose().catch((error: unknown) => failures.push(error));
    stdinHooks.dispose();
    // A paused stdin pipe would keep the event loop alive after a signal-triggered shutdown.
    process.stdin.destroy();
    hooks.dispose();
  }
  if (failures.length > 0) {
    throw new AggregateError(
      failures,
      `agent-pty mcp: teardown failed: ${failures.map(describeError).join('; ')}`,
    );
  }
}
