/**
 * Who may talk to the watch page (SPEC §13, docs/watch.md): without the token or its cookie, with a
 * foreign Origin, with a Host other than 127.0.0.1:PORT / localhost:PORT, or not from loopback, every
 * request is refused with 403 — the WebSocket upgrade included; the token is exchanged once for an
 * HttpOnly, SameSite=Strict cookie and leaves the address. A real server on 127.0.0.1, no sessions.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { checkWatchRequest, isLoopback } from '../../../../src/main/watch/request-guard.js';
import { startWatchServer, type WatchServer } from '../../../../src/main/watch/watch-server.js';

let server: WatchServer;
let token: string;

beforeEach(async () => {
  server = await startWatchServer({ engine: { sessions: () => [] }, recordingsDir: '/nonexistent' });
  token = new URL(server.url).searchParams.get('token')!;
});
afterEach(async () => {
  await server.close();
});

/** A GET with exactly these headers. */
function get(path: string, headers: Record<string, string>): Promise<IncomingMessage & { body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: server.port, path, headers }, (response) => {
      let body = '';
      response.on('data', (chunk) => {
        body += chunk;
      });
      response.on('end', () => resolve(Object.assign(response, { body })));
    });
    req.on('error', reject);
    req.end();
  });
}

const host = () => `127.0.0.1:${server.port}`;
const cookie = () => `agent-pty-watch-${server.port}=${token}`;

it('carries a token of at least 128 bits, and serves only on 127.0.0.1', () => {
  expect(Buffer.from(token, 'base64url').length).toBeGreaterThanOrEqual(16);
  expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${token}`);
  expect(server.pageUrl).not.toContain(token);
});

it('exchanges the token for an HttpOnly SameSite=Strict cookie and redirects to the URL without it', async () => {
  const first = await get(`/?token=${token}`, { host: host() });
  expect(first.statusCode).toBe(303);
  expect(first.headers.location).toBe('/');
  expect(first.headers['set-cookie']).toEqual([`${cookie()}; HttpOnly; SameSite=Strict; Path=/`]);
  const page = await get('/', { host: host(), cookie: cookie() });
  expect(page.statusCode).toBe(200);
  expect(page.body).toContain('<script src="/assets/xterm.js"></script>');
  // The page's assets come from the package, not a CDN.
  const xterm = await get('/assets/xterm.js', { host: `localhost:${server.port}`, cookie: cookie() });
  expect(xterm.statusCode).toBe(200);
  expect(xterm.body).toMatch(/Terminal/);
});

it('refuses a request without the token or cookie, with a wrong one, a foreign Host or a foreign Origin', async () => {
  expect((await get('/', { host: host() })).statusCode).toBe(403);
  expect((await get('/?token=guess', { host: host() })).statusCode).toBe(403);
  expect((await get('/', { host: host(), cookie: `agent-pty-watch-${server.port}=guess` })).statusCode).toBe(
    403,
  );
  // DNS rebinding: another name that resolves to 127.0.0.1 sends its own Host.
  const rebound = await get('/', { host: `attacker.example:${server.port}`, cookie: cookie() });
  expect(rebound.statusCode).toBe(403);
  expect(rebound.body).toContain('Host');
  expect((await get('/', { host: '127.0.0.1:1', cookie: cookie() })).statusCode).toBe(403);
  const foreign = await get('/', { host: host(), cookie: cookie(), origin: 'http://attacker.example' });
  expect(foreign.statusCode).toBe(403);
  expect(foreign.body).toContain('Origin');
  // Another page on loopback, at another port, is another origin too.
  expect((await get('/', { host: host(), cookie: cookie(), origin: 'http://127.0.0.1:1' })).statusCode).toBe(
    403,
  );
});

/** The upgrade's outcome: the status of a refusal, or 101 once open. */
function upgrade(headers: Record<string, string>, path = '/ws'): Promise<number> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}${path}`, { headers });
    socket.on('open', () => {
      socket.close();
      resolve(101);
    });
    socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
    socket.on('error', () => undefined);
  });
}

it('refuses the WebSocket upgrade on the same rules, and takes only the cookie there', async () => {
  const origin = `http://${host()}`;
  expect(await upgrade({ origin, cookie: cookie() })).toBe(101);
  expect(await upgrade({ origin })).toBe(403);
  expect(await upgrade({ origin }, `/ws?token=${token}`)).toBe(403);
  expect(await upgrade({ origin: 'http://attacker.example', cookie: cookie() })).toBe(403);
  expect(await upgrade({ origin, cookie: cookie(), host: `attacker.example:${server.port}` })).toBe(403);
});

it('refuses a peer outside loopback', () => {
  expect(isLoopback('127.0.0.1')).toBe(true);
  expect(isLoopback('::1')).toBe(true);
  expect(isLoopback('::ffff:127.0.0.1')).toBe(true);
  expect(isLoopback('10.0.0.5')).toBe(false);
  expect(isLoopback('::ffff:192.168.1.2')).toBe(false);
  const request = {
    socket: { remoteAddress: '192.168.1.2' },
    headers: { host: '127.0.0.1:8080', cookie: `agent-pty-watch-8080=${token}` },
    url: '/',
  } as unknown as IncomingMessage;
  expect(checkWatchRequest(request, 8080, token)).toEqual({ kind: 'refused', reason: 'not from loopback' });
  const loopback = { ...request, socket: { remoteAddress: '127.0.0.1' } } as unknown as IncomingMessage;
  expect(checkWatchRequest(loopback, 8080, token)).toEqual({ kind: 'allowed' });
});
