// Execution worlds in the harness (SPEC §10): a host holding the local world and a named world served
// by `node dist/main/cli/bin.js serve --stdio`, reached through ctx.pty, the tools and the MCP server
// over stdio — unchanged but for the `world` argument. Also the command-line splitting of
// `--world NAME=COMMAND` and the config validation.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Host } from '../../../../dist/main/harness/host.js';
import { createLocalHost } from '../../../../dist/main/harness/local-host.js';
import { resolvePtyLocalConfig } from '../../../../dist/main/harness/plugins/pty-local.js';
import { parseMcpOptions } from '../../../../dist/main/mcp/options.js';
import { runTerminalTool } from '../../../../dist/main/tools/catalog.js';
import type { TerminalToolContext } from '../../../../dist/main/tools/tool.js';
import { splitCommandLine } from '../../../../dist/main/worlds/command-line.js';
import { isAlive } from '../../../support/engine.js';
import { until } from '../../../support/until.js';

const BIN = new URL('../../../../dist/main/cli/bin.js', import.meta.url).pathname;
const SERVE = [process.execPath, BIN, 'serve', '--stdio'];

/** The `serve --stdio` process a far shell runs under (a sandbox launcher may sit in between). */
function serveProcessAbove(pid: number): number {
  for (let current = pid; current > 1; ) {
    current = Number(readFileSync(`/proc/${current}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
    if (readFileSync(`/proc/${current}/cmdline`, 'utf8').split('\0').includes('serve')) return current;
  }
  throw new Error(`no serve process above ${pid}`);
}

describe('--world NAME=COMMAND', () => {
  it('splits a command like a shell argv, without expanding anything', () => {
    expect(splitCommandLine('ssh -p 2222 box agent-pty serve --stdio')).toEqual([
      'ssh',
      '-p',
      '2222',
      'box',
      'agent-pty',
      'serve',
      '--stdio',
    ]);
    expect(splitCommandLine(`a 'b c' "d \\"e\\" \\n $HOME" f\\ g '' ~`)).toEqual([
      'a',
      'b c',
      'd "e" \\n $HOME',
      'f g',
      '',
      '~',
    ]);
    expect(() => splitCommandLine("ssh 'box")).toThrow(/unterminated ' quote/);
    expect(() => splitCommandLine('ssh box\\')).toThrow(/lone backslash/);
  });

  it('parses repeated --world options and refuses malformed ones', () => {
    const options = parseMcpOptions(
      [
        '--world',
        'box=ssh box agent-pty serve --stdio',
        "--world=pod=kubectl exec -i 'ws 1' -- agent-pty serve --stdio",
      ],
      '/tmp',
    );
    expect(options.worlds).toEqual({
      box: ['ssh', 'box', 'agent-pty', 'serve', '--stdio'],
      pod: ['kubectl', 'exec', '-i', 'ws 1', '--', 'agent-pty', 'serve', '--stdio'],
    });
    expect(() => parseMcpOptions(['--world', 'ssh box'])).toThrow(/NAME=COMMAND/);
    expect(() => parseMcpOptions(['--world', 'box='])).toThrow(/NAME=COMMAND/);
    expect(() => parseMcpOptions(['--world', 'a=x', '--world', 'a=y'])).toThrow(/given twice/);
  });

  it('validates the worlds of the pty-local config', () => {
    const config = resolvePtyLocalConfig({
      worlds: {
        box: 'ssh box agent-pty serve --stdio',
        pod: { command: ['kubectl', 'exec'], workspaceRoot: '/ws' },
      },
    });
    expect(config.worlds.box?.command).toEqual(['ssh', 'box', 'agent-pty', 'serve', '--stdio']);
    expect(config.worlds.pod).toEqual({ command: ['kubectl', 'exec'], workspaceRoot: '/ws' });
    expect(() => resolvePtyLocalConfig({ worlds: { local: 'x' } })).toThrow(
      /worlds\.local: .*host's own world/,
    );
    expect(() => resolvePtyLocalConfig({ worlds: { box: [] } })).toThrow(/INVALID_CONFIG|worlds\.box/);
    expect(() => resolvePtyLocalConfig({ worlds: { box: { command: 'x', workspaceRoot: 'rel' } } })).toThrow(
      /absolute/,
    );
  });
});

describe('a host with a world', () => {
  let workspace: string;
  let host: Host;
  let ctx: TerminalToolContext;

  beforeEach(async () => {
    workspace = mkdtempSync(join(tmpdir(), 'worlds-harness-'));
    host = await createLocalHost({
      mode: 'workspace-write',
      workspaceRoot: workspace,
      ptyLocal: { worlds: { far: SERVE } },
    });
    ctx = { pty: host.service('pty'), owner: 'model' };
  });

  afterEach(async () => {
    await host.dispose();
    rmSync(workspace, { recursive: true, force: true });
  });

  async function run(name: string, args: Record<string, unknown>) {
    const outcome = await runTerminalTool(name, args, ctx);
    if (outcome.isError) throw new Error(`${name}: ${outcome.text}`);
    return outcome;
  }

  it('opens terminals here and in the world through ctx.pty and the tools; dispose closes both', async () => {
    const here = await run('terminal_open', {});
    expect(here.json.world).toBeUndefined();
    const far = await run('terminal_open', { world: 'far', cwd: 'sub/..' });
    expect(far.json.world).toBe('far');
    expect(far.text).toContain('in world far');
    const farId = far.json.sessionId as string;

    const sent = await run('terminal_send', { sessionId: farId, text: 'echo far-$((6*7)) > out.txt; pwd' });
    expect((sent.json.output as string).split('\n')).toContain(workspace);
    expect(readFileSync(join(workspace, 'out.txt'), 'utf8')).toBe('far-42\n');
    // The far shell runs under the owner's sandbox mode, enforced next to it.
    const denied = await run('terminal_send', { sessionId: farId, text: 'echo x > /etc/agent-pty-denied' });
    expect(denied.json.exitCode).not.toBe(0);

    const listed = await run('terminal_list', {});
    const sessions = listed.json.sessions as Array<{ sessionId: string; world?: string; pid: number }>;
    expect(sessions.map((session) => session.world)).toEqual([undefined, 'far']);
    expect(listed.text).toContain('world far');
    const farPid = sessions[1]!.pid;
    expect(isAlive(farPid)).toBe(true);

    const unknown = await runTerminalTool('terminal_open', { world: 'mars' }, ctx);
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain('unknown world "mars"; configured worlds: local, far');

    await host.dispose();
    expect(isAlive(farPid)).toBe(false);
  });

  it('connects the world again once its link died', async () => {
    const pty = host.service('pty');
    const first = await pty.spawn('model', { type: 'shell', world: 'far' });
    const serverPid = serveProcessAbove(first.pid);
    process.kill(serverPid, 'SIGKILL');
    await until('the world to notice', () => !isAlive(serverPid));
    const sent = pty.startSend('model', first.sessionId, { text: 'true' });
    await expect(sent.done).rejects.toMatchObject({ code: 'TRANSPORT_CLOSED' });
    const second = await pty.spawn('model', { type: 'shell', world: 'far' });
    const result = await pty.startSend('model', second.sessionId, { text: 'echo again-$((6*7))' }).done;
    expect(result.viewport.split('\n')).toContain('again-42');
    // The dead session closes without error (its far side is gone), and leaves the registry.
    await expect(pty.kill('model', first.sessionId, 'done')).resolves.toMatchObject({ outcome: 'closed' });
  });
});

describe('agent-pty mcp --world', () => {
  let workspace: string;
  let client: Client | undefined;

  beforeEach(() => {
    workspace = mkdtempSync(join(tmpdir(), 'worlds-mcp-'));
  });

  afterEach(async () => {
    await client?.close();
    client = undefined;
    rmSync(workspace, { recursive: true, force: true });
  });

  it('serves the tools over a world unchanged', async () => {
    // The quoting of the world's command: a path with a space survives the split.
    const spaced = join(workspace, 'with space.mjs');
    writeFileSync(spaced, `await import(${JSON.stringify(BIN)});\n`);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        BIN,
        'mcp',
        '--workspace',
        workspace,
        '--world',
        `far=${process.execPath} '${spaced}' serve --stdio`,
      ],
      stderr: 'pipe',
    });
    client = new Client({ name: 'worlds-mcp-test', version: '1.0.0' });
    await client.connect(transport);
    expect(client.getInstructions()).toContain('execution worlds: far');
    const opened = await client.callTool({ name: 'terminal_open', arguments: { world: 'far' } });
    const { sessionId, world, pid } = opened.structuredContent as {
      sessionId: string;
      world: string;
      pid: number;
    };
    expect(world).toBe('far');
    const sent = await client.callTool({
      name: 'terminal_send',
      arguments: { sessionId, text: 'echo mcp-$((6*7))' },
    });
    expect((sent.structuredContent as { output: string }).output.split('\n')).toContain('mcp-42');
    await client.close();
    client = undefined;
    await until('the far shell to go', () => !isAlive(pid));
  });
});
