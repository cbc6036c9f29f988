/**
 * `agent-pty attach NAME [--force]` (SPEC §13): a real terminal on a session, through the same
 * keyboard hold as the watch page. It reaches the session through a running watch page (the newest
 * `watch-<pid>.url` of the runtime directory: `agent-pty watch` or `mcp --watch`), draws the session's
 * screen from its snapshot, takes the keyboard, and passes keys through in raw mode. It never resizes
 * the session's pty: it says the session's size and yours. Ctrl-] hands the keyboard back and leaves.
 */
import { WebSocket } from 'ws';
import { TerminalError } from '../../shared/errors.js';
import { DisposableStore } from '../../shared/lifecycle.js';
import { watchCookieName } from '../watch/request-guard.js';
import type { ServerMessage, WatchedSession } from '../watch/watch-protocol.js';
import { newestWatchUrlFile, readWatchUrlFile } from '../watch/watch-url-file.js';

/** Ctrl-] (as telnet): hands the keyboard back and ends `attach`. */
export const ATTACH_DETACH_KEY = '\x1d';
/** How often `attach` says it is still there (the hold ends after 30 s without it). */
const HEARTBEAT_MS = 5_000;

/** Usage line. */
export const ATTACH_USAGE_LINE = 'agent-pty attach NAME [--force]';

/** Text of `agent-pty attach --help`. */
export const ATTACH_HELP = `${ATTACH_USAGE_LINE}

Gives this terminal the keyboard of session NAME (its name or id), for as long as you want: the
agent's input waits meanwhile. The session's screen is drawn at its own size (your terminal's size
does not change it). Press Ctrl-] to hand the keyboard back and leave.

It goes through a running watch page (agent-pty watch, or an MCP server started with --watch) whose
link is in $XDG_RUNTIME_DIR/agent-pty/watch-<pid>.url. --force takes the keyboard from another viewer.`;

/** Streams the terminal uses; a test drives them through a pty. */
interface AttachIo {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

/** Parses `NAME [--force]`. */
export function parseAttachOptions(argv: readonly string[]): { name: string; force: boolean } {
  const words = argv.filter((arg) => arg !== '--force');
  const unknown = words.find((arg) => arg.startsWith('-'));
  if (unknown !== undefined || words.length !== 1) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      unknown !== undefined
        ? `agent-pty attach: unknown argument '${unknown}'`
        : `usage: ${ATTACH_USAGE_LINE}`,
    );
  }
  return { name: words[0]!, force: argv.includes('--force') };
}

/** Runs `agent-pty attach`; resolves with the exit code once the keyboard is handed back. */
export async function runAttach(argv: readonly string[], io: AttachIo = process): Promise<number> {
  const { name, force } = parseAttachOptions(argv);
  const file = newestWatchUrlFile();
  if (file === undefined) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      'agent-pty attach: no watch page is running; start one with agent-pty watch (or agent-pty mcp --watch)',
    );
  }
  const url = new URL(readWatchUrlFile(file));
  const token = url.searchParams.get('token') ?? '';
  const port = Number(url.port);
  const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`, {
    headers: { cookie: `${watchCookieName(port)}=${token}` },
    origin: `http://127.0.0.1:${port}`,
  });
  const send = (message: object): void => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  };
  return new Promise<number>((resolve, reject) => {
    let session: WatchedSession | undefined;
    let held = false;
    let finished = false;
    /** The heartbeat and the keyboard's listeners: released when attach finishes. */
    const owned = new DisposableStore();
    owned.interval('attach heartbeat', HEARTBEAT_MS, () => send({ t: 'beat' }));
    /** Ends attach with `code`, saying `why`; with `error` instead, the command fails with it. */
    const finish = (code: number, why: string, error?: TerminalError): void => {
      if (finished) return;
      finished = true;
      owned.dispose();
      if (io.stdin.isTTY) io.stdin.setRawMode(false);
      io.stdin.pause();
      if (error === undefined) io.stderr.write(`\r\n[agent-pty attach: ${why}]\r\n`);
      socket.close();
      if (error === undefined) resolve(code);
      else reject(error);
    };
    const onKeys = (data: Buffer): void => {
      if (session === undefined || !held) return;
      const text = data.toString('utf8');
      const stop = text.indexOf(ATTACH_DETACH_KEY);
      if (stop >= 0) {
        if (stop > 0) send({ t: 'key', id: session.id, data: text.slice(0, stop) });
        send({ t: 'release', id: session.id });
        return; // the server's `hold free` ends attach
      }
      send({ t: 'key', id: session.id, data: text });
    };
    // The terminal went away (hung up, closed): nobody types any more, so the keyboard goes back now.
    const onEnd = (): void => {
      if (session !== undefined && held) send({ t: 'release', id: session.id });
      finish(held ? 0 : 1, 'the terminal closed; keyboard handed back');
    };
    // The socket's listeners live as long as the socket, which `finish` closes (its close still
    // reaches `finish`, which has nothing left to do then).
    socket.on('error', (error) => finish(1, `cannot reach the watch page: ${error.message}`));
    socket.on('unexpected-response', (_request, response) =>
      finish(1, `the watch page refused: HTTP ${response.statusCode}`),
    );
    socket.on('close', () => finish(held ? 1 : 0, 'the watch page closed'));
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as ServerMessage;
      switch (message.t) {
        case 'sessions': {
          if (session !== undefined) return;
          const matches = message.sessions.filter((entry) => entry.name === name || entry.id === name);
          // A daemon's page lists every scope, where names are unique only per workspace: never guess.
          if (matches.length > 1) {
            finish(
              1,
              `${name} names ${matches.length} sessions; attach one by its id: ${matches
                .map(
                  (entry) =>
                    `${entry.id} (${entry.mode}${entry.workspace === undefined ? '' : ` in ${entry.workspace}`})`,
                )
                .join(', ')}`,
            );
            return;
          }
          session = matches[0];
          if (session === undefined) {
            finish(
              1,
              `no session named ${name} (sessions: ${message.sessions.map((s) => s.name ?? s.id).join(', ') || 'none'})`,
            );
            return;
          }
          // Without a terminal there is no person to type and no raw mode: a pipe or /dev/null would
          // take the keyboard from the agent and keep it (the heartbeat keeps the hold alive) with
          // nobody there. Checked once the name is known, so a wrong name is still said first.
          if (io.stdin.isTTY !== true) {
            const why =
              'agent-pty attach needs a terminal: its standard input is not one (a pipe or /dev/null); run it in a terminal';
            finish(1, why, new TerminalError('INVALID_ARGUMENT', why));
            return;
          }
          // Raw before anything is drawn: keys typed while the hold is still being taken must not be
          // echoed by this terminal's own line discipline (a password typed early would show); they
          // wait, unread, until the hold is ours.
          io.stdin.setRawMode(true);
          send({ t: 'watch', id: session.id });
          return;
        }
        case 'snapshot': {
          const { rows, cols } = message.snapshot;
          const mine = `${io.stdout.rows ?? '?'}×${io.stdout.columns ?? '?'}`;
          io.stdout.write(`\x1b[H\x1b[2J${message.snapshot.ansi}`);
          io.stderr.write(
            `\x1b7\x1b[${rows + 1};1H[agent-pty attach: ${name} is ${rows}×${cols}, this terminal ${mine} (not resized); Ctrl-] hands back]\x1b8`,
          );
          if (!held) send({ t: 'take', id: message.id, force });
          return;
        }
        case 'out':
          io.stdout.write(message.data);
          return;
        case 'hold':
          if (message.state === 'mine' && !held) {
            held = true;
            owned.listen('attach keyboard listener', io.stdin, 'data', onKeys);
            owned.listen('attach keyboard listener', io.stdin, 'end', onEnd, { once: true });
            io.stdin.resume();
          } else if (message.state !== 'mine' && held) {
            finish(
              0,
              message.ended === 'handed-back'
                ? 'keyboard handed back'
                : `hold ended (${message.ended ?? message.state})`,
            );
          }
          return;
        case 'refused':
          finish(1, `${message.message} (agent-pty attach --force takes it)`);
          return;
        case 'gone':
          finish(held ? 0 : 1, 'the session closed');
          return;
      }
    });
  });
}
