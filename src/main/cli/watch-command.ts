/**
 * `agent-pty watch [--port N] [--socket PATH]` (SPEC §13): the watch page over the per-user daemon's
 * sessions (SPEC §12). Prints the page's link (with its token) on stdout and keeps serving until
 * SIGINT/SIGTERM; the link is also written to `watch-<pid>.url` (0600) so `agent-pty attach` finds it.
 */
import { existsSync } from 'node:fs';
import { TerminalError } from '../../shared/errors.js';
import { flagArguments } from '../../shared/flag-arguments.js';
import { DisposableStore } from '../../shared/lifecycle.js';
import { daemonWatchSource } from '../watch/daemon-watch-source.js';
import { startWatchServer } from '../watch/watch-server.js';
import { removeWatchUrlFile, writeWatchUrlFile } from '../watch/watch-url-file.js';
import { defaultSocketPath } from '../worlds/socket-directory.js';

/** Usage line, quoted by every options error. */
export const WATCH_USAGE_LINE = 'agent-pty watch [--port N] [--socket PATH]';

/** Text of `agent-pty watch --help`. */
export const WATCH_HELP = `${WATCH_USAGE_LINE}

Serves a page on 127.0.0.1 that shows every terminal of the agent-pty daemon live (docs/watch.md).
Read-only until you press "Take over": then your keys go to the terminal and the agent waits until
you "Hand back" (use it to type a password the agent must not see). The link it prints carries a
secret token: open it in your browser, do not share it. For a remote machine, forward the port:
  ssh -L 8080:127.0.0.1:8080 host agent-pty watch --port 8080

Options:
  --port N       port on 127.0.0.1 (default: a random free one)
  --socket PATH  the daemon's socket (default $XDG_RUNTIME_DIR/agent-pty/engine.sock)

An MCP server without a daemon serves its own page: agent-pty mcp --watch.`;

/** Parsed options. */
export interface WatchOptions {
  port: number | undefined;
  socket: string;
}

/** Parses the options; throws INVALID_ARGUMENT. */
export function parseWatchOptions(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): WatchOptions {
  const options: WatchOptions = { port: undefined, socket: defaultSocketPath(env) };
  for (const { arg, flag, value } of flagArguments(
    argv,
    (flag) => `agent-pty watch: ${flag} needs a value`,
  )) {
    if (flag === '--port') {
      const text = value();
      const port = Number(text);
      if (!/^[0-9]+$/.test(text) || port < 1 || port > 65_535) {
        throw new TerminalError('INVALID_ARGUMENT', `agent-pty watch: --port must be 1-65535; got '${text}'`);
      }
      options.port = port;
    } else if (flag === '--socket') {
      options.socket = value();
    } else {
      throw new TerminalError(
        'INVALID_ARGUMENT',
        `agent-pty watch: unknown argument '${arg}' (usage: ${WATCH_USAGE_LINE})`,
      );
    }
  }
  return options;
}

/**
 * Connects to the daemon at `socket` as a watcher (SPEC §12, §13): every session of every scope, none
 * attached — the person runs as the daemon's uid (the socket's directory check proves it), and
 * viewing must not take a session from the model's client.
 */
async function daemonViewer(socket: string) {
  if (!existsSync(socket)) {
    throw new TerminalError(
      'TRANSPORT_CLOSED',
      `no agent-pty daemon at ${socket}: start one with agent-pty daemon (or serve an MCP server's own terminals with agent-pty mcp --watch)`,
    );
  }
  const { connectDaemonViewer } = await import('../worlds/daemon-viewer.js');
  return connectDaemonViewer({ socket });
}

/** Runs `agent-pty watch` until a signal; returns the exit code. */
export async function runWatch(argv: readonly string[]): Promise<number> {
  const options = parseWatchOptions(argv);
  const viewer = await daemonViewer(options.socket);
  const server = await startWatchServer({
    source: daemonWatchSource(viewer),
    ...(options.port === undefined ? {} : { port: options.port }),
  });
  const urlFile = writeWatchUrlFile(server.url);
  process.stdout.write(`${server.url}\n`);
  process.stderr.write(`agent-pty watch: open the link above in a browser; Ctrl-C stops the page\n`);
  // Until a signal, or until the daemon goes (its sessions went with it: nothing is left to watch).
  // The signal hooks are released once the page stops, so a later signal acts as it would without
  // them. The viewer's listener ends with the viewer, closed below.
  const hooks = new DisposableStore();
  const daemonGone = await new Promise<string | undefined>((resolve) => {
    const onSignal = () => resolve(undefined);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      hooks.listen('watch stop signal hook', process, signal, onSignal, { once: true });
    }
    viewer.onClosed((error) => resolve(error.message));
  }).finally(() => hooks.dispose());
  removeWatchUrlFile(urlFile);
  await server.close();
  await viewer.close();
  if (daemonGone === undefined) return 0;
  process.stderr.write(`agent-pty watch: the daemon's connection ended (${daemonGone}); stopping the page\n`);
  return 1;
}
