/**
 * `agent-pty mcp --watch` (SPEC §13): the page's link goes to stderr and to
 * `$XDG_RUNTIME_DIR/agent-pty/watch-<pid>.url` (0600, in a 0700 directory); the token is nowhere
 * else — not in the server's argv or environment, not in the instructions, not in a tool result —
 * and a hidden-input result names the page by its address without the token. A real server process.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { until } from '../../../support/until.js';

const BIN = new URL('../../../../dist/main/cli/bin.js', import.meta.url).pathname;
let dir: string;
let client: Client | undefined;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'mcp-watch-'));
});
afterEach(async () => {
  await client?.close();
  client = undefined;
  rmSync(dir, { recursive: true, force: true });
});

it('publishes the link only on stderr and in a 0600 file, and names the page without its token', async () => {
  const runtime = path.join(dir, 'run');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(runtime, { mode: 0o700 });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', '--watch', '--sandbox', 'danger-full-access', '--workspace', dir],
    stderr: 'pipe',
    env: { ...getDefaultEnvironment(), XDG_RUNTIME_DIR: runtime, XDG_STATE_HOME: dir },
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  client = new Client({ name: 'mcp-watch-test', version: '1.0.0' });
  await client.connect(transport);
  await until('the link on stderr', () => /watch page: http:\/\/127\.0\.0\.1:\d+\/\?token=/.test(stderr));
  const url = /watch page: (\S+)/.exec(stderr)![1]!;
  const token = new URL(url).searchParams.get('token')!;
  expect(Buffer.from(token, 'base64url').length).toBeGreaterThanOrEqual(16);
  const pid = transport.pid!;
  const file = path.join(runtime, 'agent-pty', `watch-${pid}.url`);
  expect(readFileSync(file, 'utf8').trim()).toBe(url);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
  expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).not.toContain(token);
  expect(readFileSync(`/proc/${pid}/environ`, 'utf8')).not.toContain(token);
  expect(client.getInstructions() ?? '').not.toContain(token);

  const opened = await client.callTool({ name: 'terminal_open', arguments: {} });
  const sessionId = (opened.structuredContent as { sessionId: string }).sessionId;
  const sent = await client.callTool({
    name: 'terminal_send',
    arguments: { sessionId, text: `python3 -c 'import getpass; getpass.getpass("Password: ")'` },
  });
  const text = (sent.content as [{ text: string }])[0].text;
  const page = url.slice(0, url.indexOf('?'));
  expect(text).toContain(
    `[input: hidden — a password or passphrase prompt; ask the user to type it in the watch page (${page}, its link with the token is in ${file}), or send it only if the user gave it to you]`,
  );
  expect(sent.structuredContent).toMatchObject({ inputHidden: true });
  for (const result of [opened, sent]) expect(JSON.stringify(result)).not.toContain(token);
  await client.close();
  client = undefined;
  await until('the URL file removed at exit', () => {
    try {
      statSync(file);
      return false;
    } catch {
      return true;
    }
  });
});
