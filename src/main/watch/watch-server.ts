/**
 * The watch page's server (SPEC §13): HTTP and a WebSocket on 127.0.0.1, guarded by request-guard.ts
 * (docs/watch.md explains the model). It shows the sessions of one engine (the in-process engine of
 * `mcp --watch`, or a daemon's through `watch --socket`) and relays keyboard holds to them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { DisposableStore } from '../../shared/lifecycle.js';
import { recordingsDirectory } from '../engine/session-recording.js';
import { checkWatchRequest, watchCookieName } from './request-guard.js';
import { engineWatchSource, type WatchedEngine } from './session-overview.js';
import { ViewerConnection, type ViewerHost } from './viewer-connection.js';
import { watchAsset } from './watch-assets.js';
import type { RecordingEntry, WatchedSession } from './watch-protocol.js';
import type { WatchSource } from './watch-source.js';
import { createWatchToken } from './watch-token.js';

/** How often the page's session list is refreshed (status is read from each session). */
const LISTING_INTERVAL_MS = 1_000;
/** Largest frame a viewer may send: keys and pastes, never more. */
const MAX_VIEWER_FRAME_BYTES = 256 * 1024;
/** A recording's file name as the server writes them (nothing else under the directory is served). */
const RECORDING_NAME = /^[A-Za-z0-9._-]+\.cast$/;

export type { WatchedEngine } from './session-overview.js';
export type { WatchSource } from './watch-source.js';

/** Options of {@link startWatchServer}: what to watch, as an engine or as a source. */
export type WatchServerOptions = ({ engine: WatchedEngine } | { source: WatchSource }) & {
  /** Port on 127.0.0.1 (default: a random free one). */
  port?: number;
  /** Where closed sessions' recordings are, for replay (default: `$XDG_STATE_HOME/agent-pty/recordings`). */
  recordingsDir?: string;
};

/** A running watch server. */
export interface WatchServer {
  /** The page's URL with its token: only for the person (printed, or written to a 0600 file). */
  readonly url: string;
  /** The page's URL without the token (safe to show anywhere). */
  readonly pageUrl: string;
  readonly port: number;
  /** Stops serving: every viewer is disconnected and its holds end. */
  close(): Promise<void>;
}

/** Starts the server; resolves once it listens. */
export async function startWatchServer(options: WatchServerOptions): Promise<WatchServer> {
  const token = createWatchToken();
  const recordingsDir = options.recordingsDir ?? recordingsDirectory();
  const viewers = new Set<ViewerConnection>();
  const holders = new Map<string, ViewerConnection>();
  let nextViewer = 1;
  let port = 0;
  const source = 'source' in options ? options.source : engineWatchSource(options.engine);
  const viewerHost: ViewerHost = {
    session: (id) => source.session(id),
    holderOf: (id) => holders.get(id),
    setHolder: (id, viewer) => {
      if (viewer === undefined) holders.delete(id);
      else holders.set(id, viewer);
    },
    holdChanged: (id) => {
      for (const viewer of viewers) viewer.sendHoldState(id);
    },
  };

  const http: Server = createServer((request, response) => serve(request, response));
  const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_VIEWER_FRAME_BYTES });

  function refuse(response: ServerResponse, reason: string): void {
    response.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
    response.end(`403 forbidden: ${reason}\n`);
  }

  function serve(request: IncomingMessage, response: ServerResponse): void {
    const verdict = checkWatchRequest(request, port, token);
    if (verdict.kind === 'refused') {
      refuse(response, verdict.reason);
      return;
    }
    if (verdict.kind === 'exchange') {
      // The token leaves the address bar (and the history) at once; the cookie carries it from now on.
      response.writeHead(303, {
        location: verdict.path,
        'set-cookie': `${watchCookieName(port)}=${token}; HttpOnly; SameSite=Strict; Path=/`,
        'cache-control': 'no-store',
      });
      response.end();
      return;
    }
    if (request.method !== 'GET') {
      response.writeHead(405).end();
      return;
    }
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path.startsWith('/recordings/')) {
      serveRecording(path.slice('/recordings/'.length), response);
      return;
    }
    const asset = watchAsset(path);
    if (asset === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    const host = request.headers.host ?? '';
    response.writeHead(200, {
      'content-type': asset.contentType,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      // Scripts only from the package; xterm's renderer writes its theme as inline styles.
      'content-security-policy': `default-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self' ws://${host}; frame-ancestors 'none'`,
    });
    response.end(asset.body);
  }

  function serveRecording(name: string, response: ServerResponse): void {
    const dir = recordingsDir;
    if (!RECORDING_NAME.test(name)) {
      response.writeHead(404).end();
      return;
    }
    try {
      const body = readFileSync(`${dir}/${name}`);
      response.writeHead(200, { 'content-type': 'application/x-asciicast', 'cache-control': 'no-store' });
      response.end(body);
    } catch {
      response.writeHead(404).end();
    }
  }

  /** The server's upgrade listener and listing refresh; released as it closes. */
  const owned = new DisposableStore();
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const verdict = checkWatchRequest(request, port, token);
    // Only the cookie opens the socket (a page always has it by then; attach sends it too).
    if (verdict.kind !== 'allowed' || new URL(request.url ?? '/', 'http://localhost').pathname !== '/ws') {
      const reason =
        verdict.kind === 'refused' ? verdict.reason : 'the WebSocket takes the cookie, not the token';
      socket.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n403 forbidden: ${reason}\n`,
      );
      return;
    }
    sockets.handleUpgrade(request, socket, head, (ws) => {
      const viewer = new ViewerConnection(ws, viewerHost, `viewer ${nextViewer++}`);
      viewers.add(viewer);
      // The socket closes once (the server's close terminates it); the listener leaves the store then.
      const onClose = () => {
        viewers.delete(viewer);
        for (const [id, holder] of holders) if (holder === viewer) holders.delete(id);
      };
      owned.listen('watch viewer close listener', ws, 'close', onClose, { once: true });
      // A listing that fails (a daemon gone) leaves the page as it was; the next refresh tries again.
      listing().then(
        (message) => viewer.send(message),
        () => undefined,
      );
    });
  };
  owned.listen('watch upgrade listener', http, 'upgrade', onUpgrade);

  async function listing(): Promise<{
    t: 'sessions';
    sessions: WatchedSession[];
    recordings: RecordingEntry[];
  }> {
    return { t: 'sessions', sessions: await source.overview(), recordings: recordingsIn(recordingsDir) };
  }

  let known = new Set<string>();
  const refresh = () => {
    if (viewers.size === 0) return;
    listing().then(
      (message) => {
        const live = new Set(message.sessions.map((session) => session.id));
        for (const id of known) {
          if (!live.has(id)) for (const viewer of viewers) viewer.sessionGone(id);
        }
        known = live;
        for (const viewer of viewers) viewer.send(message);
      },
      () => undefined,
    );
  };
  owned.interval('watch listing refresh', LISTING_INTERVAL_MS, refresh, { unref: true });

  // One-shot: removed once listening (or fired).
  const listening = new DisposableStore();
  await new Promise<void>((resolve, reject) => {
    listening.listen('watch listen error listener', http, 'error', reject, { once: true });
    http.listen(options.port ?? 0, '127.0.0.1', () => {
      listening.dispose();
      resolve();
    });
  }).catch((error: unknown) => {
    owned.dispose(); // a server that never listened refreshes nothing
    throw error;
  });
  const address = http.address();
  port = typeof address === 'object' && address !== null ? address.port : 0;
  const pageUrl = `http://127.0.0.1:${port}/`;
  let closing: Promise<void> | undefined;
  return {
    url: `${pageUrl}?token=${token}`,
    pageUrl,
    port,
    close: () => {
      closing ??= (async () => {
        owned.dispose();
        for (const viewer of viewers) viewer.close();
        for (const client of sockets.clients) client.terminate();
        await new Promise<void>((resolve) => sockets.close(() => resolve()));
        http.closeAllConnections();
        await new Promise<void>((resolve) => http.close(() => resolve()));
      })();
      return closing;
    },
  };
}

/** The recordings under `dir`, newest first (none when there is no such directory). */
function recordingsIn(dir: string): RecordingEntry[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((name) => RECORDING_NAME.test(name))
    .flatMap((file) => {
      try {
        const stat = statSync(`${dir}/${file}`);
        return [{ file, bytes: stat.size, modifiedAt: stat.mtimeMs }];
      } catch {
        return [];
      }
    })
    .sort((a, b) => b.modifiedAt - a.modifiedAt);
}
