/**
 * Workspace roots too broad to bind (SPEC §4.1): `/`, `$HOME` or an ancestor of `$HOME`, taken from
 * where `agent-pty mcp` or the CLI was started because no `--workspace` was given. Desktop MCP clients
 * start servers in `/` or `$HOME`; there `workspace-write` used to bind the whole filesystem (or the
 * whole home) writable. Now they run `read-only`, with the home private, and say so; `/` named
 * explicitly is refused for `workspace-write`.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseCliArgs } from '../../../../dist/main/cli/args.js';
import { parseMcpOptions } from '../../../../dist/main/mcp/options.js';
import { bwrapIt } from '../../../support/bwrap.js';

const BIN = new URL('../../../../dist/main/cli/bin.js', import.meta.url).pathname;
const itBwrap = bwrapIt('broad workspace');

describe('the MCP server and the CLI without --workspace', () => {
  it('mcp in /, in $HOME or above it runs read-only and says why', () => {
    const home = homedir();
    for (const cwd of ['/', home, path.dirname(home)]) {
      const options = parseMcpOptions([], cwd);
      expect(options, cwd).toMatchObject({ mode: 'read-only', workspaceRoot: cwd });
      expect(options.notice, cwd).toMatch(/read-only.*--workspace/s);
    }
    // Asked for workspace-write there: still read-only, still said.
    expect(parseMcpOptions(['--sandbox', 'workspace-write'], '/')).toMatchObject({ mode: 'read-only' });
    // Unconfined on request: no sandbox to narrow.
    expect(parseMcpOptions(['--sandbox', 'danger-full-access'], '/')).toEqual({
      mode: 'danger-full-access',
      workspaceRoot: '/',
      maxWaitMs: 50_000,
      maxSessions: 32,
    });
    // Named explicitly: $HOME is a workspace like any other; `/` is never writable.
    expect(parseMcpOptions(['--workspace', home], '/')).toEqual({
      mode: 'workspace-write',
      workspaceRoot: home,
      maxWaitMs: 50_000,
      maxSessions: 32,
    });
    expect(() => parseMcpOptions(['--workspace', '/'], '/tmp')).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('read-only') }),
    );
    expect(parseMcpOptions(['--workspace', '/', '--sandbox', 'read-only'], '/tmp')).toMatchObject({
      mode: 'read-only',
      workspaceRoot: '/',
    });
  });

  it('the CLI in / or $HOME with a confined --sandbox runs read-only and says why', () => {
    for (const cwd of ['/', homedir()]) {
      const args = parseCliArgs(['--sandbox', 'workspace-write'], cwd);
      expect(args, cwd).toMatchObject({ sandbox: 'read-only', workspace: cwd });
      expect(args.command === 'interactive' && args.notice, cwd).toMatch(/read-only.*--workspace/s);
    }
    expect(parseCliArgs(['--sandbox', 'workspace-write', '--workspace', homedir()], '/')).toMatchObject({
      sandbox: 'workspace-write',
    });
    // The CLI's default mode is the MCP server's (workspace-write): narrowed the same way.
    expect(parseCliArgs([], '/')).toMatchObject({
      sandbox: 'read-only',
      notice: expect.stringContaining('--workspace'),
    });
    expect(parseCliArgs(['--sandbox', 'danger-full-access'], '/')).not.toHaveProperty('notice');
    expect(() => parseCliArgs(['--workspace', '/'], '/tmp')).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });
});

describe('agent-pty mcp started in $HOME, end to end', () => {
  let home: string;
  const clients: Client[] = [];

  beforeEach(() => {
    const base = existsSync('/var/tmp') ? '/var/tmp' : homedir();
    home = mkdtempSync(path.join(base, 'broad-workspace-home-'));
    mkdirSync(path.join(home, '.claude'));
    writeFileSync(path.join(home, '.claude', '.credentials.json'), 'hunter2-canary');
    writeFileSync(path.join(home, 'notes.txt'), 'hunter2-canary');
  });

  afterEach(async () => {
    await Promise.allSettled(clients.splice(0).map((client) => client.close()));
    rmSync(home, { recursive: true, force: true });
  });

  itBwrap(
    'read-only, said in the instructions and on stderr; nothing of $HOME is readable or writable',
    async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp'],
        cwd: home,
        env: { ...getDefaultEnvironment(), HOME: home },
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const client = new Client({ name: 'broad-workspace-test', version: '1.0.0' });
      clients.push(client);
      await client.connect(transport);
      expect(client.getInstructions()).toMatch(/sandbox mode read-only/);
      expect(client.getInstructions()).toMatch(/--workspace/);
      expect(stderr).toMatch(/read-only/);
      const opened = await client.callTool({ name: 'terminal_open', arguments: {} });
      expect(opened.isError, JSON.stringify(opened.content)).toBeFalsy();
      const sessionId = (opened.structuredContent as { sessionId: string }).sessionId;
      const sent = await client.callTool({
        name: 'terminal_send',
        arguments: {
          sessionId,
          text: 'pwd; echo found-$(cat ~/.claude/.credentials.json ~/notes.txt 2>/dev/null | grep -c canary); touch ~/x 2>/dev/null; echo touched-$((100+$?))',
        },
      });
      const text = (sent.content as Array<{ text: string }>).map((part) => part.text).join('');
      const lines = text.split('\n').map((line) => line.trim());
      expect(lines).toContain(home);
      expect(lines).toContain('found-0');
      expect(lines).toContain('touched-101');
      expect(existsSync(path.join(home, 'x'))).toBe(false);
    },
  );
});
