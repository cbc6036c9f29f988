/**
 * Who may talk to the watch page (SPEC §13, docs/watch.md): every HTTP request and every WebSocket
 * upgrade passes these checks, in this order, and anything else is refused with 403.
 *
 * - **Loopback only:** the server listens on 127.0.0.1, and a peer address outside loopback is refused
 *   anyway (a forwarded socket, a misconfigured proxy).
 * - **Host** must be `127.0.0.1:PORT` or `localhost:PORT`: a page of another site whose name was
 *   rebound to 127.0.0.1 (DNS rebinding) sends its own name and is refused.
 * - **Origin**, when sent, must be the page's own (`http://` + the Host): another site's script, even
 *   one on loopback at another port, is refused — the WebSocket upgrade always carries one.
 * - **Token or cookie:** the URL's `?token=` (exchanged for the cookie, then redirected away) or the
 *   HttpOnly, SameSite=Strict cookie that exchange set.
 */
import type { IncomingMessage } from 'node:http';
import { tokenMatches } from './watch-token.js';

/** What a request is allowed to do. */
export type RequestVerdict =
  /** Authenticated by its cookie. */
  | { kind: 'allowed' }
  /** Carries the token in its URL: set the cookie and redirect to the same path without it. */
  | { kind: 'exchange'; path: string }
  /** Refused (403), with the reason (said to the client: it reveals nothing the client did not send). */
  | { kind: 'refused'; reason: string };

/** The cookie that carries the token after the exchange; per port, as cookies ignore ports. */
export function watchCookieName(port: number): string {
  return `agent-pty-watch-${port}`;
}

/** Whether `address` (as node reports a peer) is a loopback address. */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

/** The value of cookie `name` in a Cookie header. */
function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Checks `request` against the server's `port` and `token`. */
export function checkWatchRequest(request: IncomingMessage, port: number, token: string): RequestVerdict {
  if (!isLoopback(request.socket.remoteAddress)) return { kind: 'refused', reason: 'not from loopback' };
  const host = request.headers.host;
  if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
    return { kind: 'refused', reason: 'unexpected Host header' };
  }
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `http://${host}`) {
    return { kind: 'refused', reason: 'foreign Origin' };
  }
  if (tokenMatches(token, cookieValue(request.headers.cookie, watchCookieName(port)))) {
    return { kind: 'allowed' };
  }
  const url = new URL(request.url ?? '/', `http://${host}`);
  if (tokenMatches(token, url.searchParams.get('token') ?? undefined)) {
    return { kind: 'exchange', path: url.pathname };
  }
  return { kind: 'refused', reason: 'no valid token or cookie' };
}
