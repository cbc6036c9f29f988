import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Host } from '../../../../src/main/harness/host.js';
import { parseMcpOptions } from '../../../../src/main/mcp/options.js';
import {
  createTerminalMcpServer,
  MAX_INSTRUCTIONS_CHARS,
} from '../../../../src/main/mcp/terminal-mcp-server.js';
import { TERMINAL_TOOLS_GUIDANCE } from '../../../../src/main/tools/guidance.js';
import { createFakeHost, type FakeHost } from '../../../support/fake-host.js';
import { gate } from '../../../support/fake-pty-engine.js';
import { until } from '../../../support/until.js';

let fixture: FakeHost;
let host: Host;
let server: Server;
let client: Client;

beforeEach(async () => {
  fixture = await createFakeHost('mcp-');
  ({ host } = fixture);
  server = createTerminalMcpServer({
    pty: host.service('pty'),
    owner: 'conn',
    instructionsSuffix: '\nmode X\n',
  });
  client = new Client({ name: 'test-client', version: '1.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
});

afterEach(async () => {
  await client.close();
  await server.close();
  await fixture.dispose();
});

const textOf = (result: Awaited<ReturnType<Client['callTool']>>) =>
  (result.content as Array<{ type: string; text: string }>).map((part) => part.text).join('');

describe('terminal MCP server', () => {
  it('announces itself with the guidance as instructions and lists the six tools with schemas and hints', async () => {
    expect(client.getServerVersion()?.name).toBe('agent-pty');
    expect(client.getInstructions()).toMatch(
      /^## Terminal sessions\n[\s\S]*NOT proven finished[\s\S]*mode X\n$/,
    );
    expect(client.getInstructions()!.length).toBeLessThan(MAX_INSTRUCTIONS_CHARS);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      'terminal_open',
      'terminal_send',
      'terminal_read',
      'terminal_signal',
      'terminal_close',
      'terminal_list',
    ]);
    const read = tools.find((tool) => tool.name === 'terminal_read')!;
    expect(read.inputSchema).toMatchObject({ type: 'object', required: ['sessionId'] });
    expect(read.outputSchema).toMatchObject({ type: 'object' });
    expect(read.annotations).toMatchObject({ readOnlyHint: true });
    expect(tools.find((tool) => tool.name === 'terminal_close')?.annotations).toMatchObject({
      destructiveHint: true,
    });
  });

  it('answers with rendered text and structuredContent that the client validates against the output schema', async () => {
    await client.listTools(); // the client validates structuredContent only for tools it has listed
    const opened = await client.callTool({ name: 'terminal_open', arguments: { name: 'a' } });
    expect(opened.isError).toBeFalsy();
    expect(opened.structuredContent).toMatchObject({ sessionId: 'shell-1', name: 'a', type: 'shell' });
    const sent = await client.callTool({
      name: 'terminal_send',
      arguments: { sessionId: 'shell-1', text: 'echo 1' },
    });
    expect(textOf(sent)).toBe('ran: echo 1\n[wait: stdin_read]\n[exit: 0]\n[session: running]');
    expect(sent.structuredContent).toMatchObject({
      output: 'ran: echo 1',
      waitReason: 'stdin_read',
      exitCode: 0,
    });
    for (const [name, args] of [
      ['terminal_read', { sessionId: 'shell-1' }],
      ['terminal_signal', { sessionId: 'shell-1', signal: 'SIGINT' }],
      ['terminal_list', {}],
      ['terminal_close', { sessionId: 'shell-1' }],
    ] as const) {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
      expect(result.structuredContent).toBeDefined();
    }
  });

  it('returns invalid calls as isError results saying what to do instead', async () => {
    const unknown = await client.callTool({ name: 'terminal_read', arguments: { sessionId: 'shell-7' } });
    expect(unknown.isError).toBe(true);
    expect(unknown.structuredContent).toBeUndefined();
    expect(textOf(unknown)).toMatch(/^unknown PTY session: shell-7\. Call terminal_list/);
    const missing = await client.callTool({ name: 'terminal_send', arguments: { text: 'ls' } });
    expect(textOf(missing)).toMatch(/"sessionId" is required/);
    const badKeys = await client.callTool({
      name: 'terminal_send',
      arguments: { sessionId: 'shell-7', keys: 'Enter' },
    });
    expect(textOf(badKeys)).toMatch(/"keys" must be a list of key names/);
    const noArgs = await client.callTool({ name: 'terminal_signal' });
    expect(textOf(noArgs)).toMatch(/"sessionId" is required; "signal" is required/);
  });

  it("sends the server's wait cap (50 s by default) with every send, and renders the cut the engine reports", async () => {
    expect(client.getInstructions()).toMatch(
      /one terminal_send call waits at most 50000 ms \(a larger timeoutMs is cut to that\)/,
    );
    await client.callTool({ name: 'terminal_open', arguments: {} });
    const session = fixture.engine.spawned[0]!;
    await client.callTool({
      name: 'terminal_send',
      arguments: { sessionId: 'shell-1', text: 'make', timeoutMs: 3_600_000 },
    });
    await client.callTool({ name: 'terminal_send', arguments: { sessionId: 'shell-1' } });
    // The tools never guess the engine's default: an omitted timeoutMs stays omitted, the cap travels.
    expect(session.sends.map(({ timeoutMs, maxWaitMs }) => ({ timeoutMs, maxWaitMs }))).toEqual([
      { timeoutMs: 3_600_000, maxWaitMs: 50_000 },
      { timeoutMs: undefined, maxWaitMs: 50_000 },
    ]);

    const narrow = createTerminalMcpServer({ pty: host.service('pty'), owner: 'conn', maxWaitMs: 800 });
    const narrowClient = new Client({ name: 'narrow', version: '1.0.0' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([narrow.connect(serverSide), narrowClient.connect(clientSide)]);
    try {
      session.script = () => ({
        viewport: '',
        waitReason: 'running',
        cappedWait: { boundMs: 800, askedMs: 1_500 },
      });
      const sent = await narrowClient.callTool({
        name: 'terminal_send',
        arguments: { sessionId: 'shell-1' },
      });
      expect(session.sends[2]).toMatchObject({ maxWaitMs: 800 });
      expect(textOf(sent)).toMatch(
        /\[wait bound: 800 ms, the most this server waits per call, instead of 1500 ms\]$/,
      );
      // A bound the cap did not cut gets no note.
      session.script = () => ({ viewport: '', waitReason: 'running' });
      const uncut = await narrowClient.callTool({
        name: 'terminal_send',
        arguments: { sessionId: 'shell-1' },
      });
      expect(textOf(uncut)).not.toContain('[wait bound:');
    } finally {
      await narrowClient.close();
      await narrow.close();
    }
  });

  it('streams the output of a running send as progress notifications when the client asks for progress', async () => {
    await client.callTool({ name: 'terminal_open', arguments: {} });
    const session = fixture.engine.spawned[0]!;
    session.holdSends = gate();
    const progress: Array<{ progress: number; message?: string }> = [];
    let sawProgress!: () => void;
    const progressed = new Promise<void>((resolve) => {
      sawProgress = resolve;
    });
    const sending = client.callTool(
      { name: 'terminal_send', arguments: { sessionId: 'shell-1', text: 'build' } },
      undefined,
      {
        onprogress: (notification) => {
          progress.push(notification);
          sawProgress();
        },
      },
    );
    await until('the send to subscribe', () => session.outputListeners.size === 1);
    session.emitOutput('step-1\nstep-2\n');
    await progressed;
    session.holdSends.open();
    await sending;
    expect(progress).toEqual([{ progress: 2, message: 'step-1\nstep-2' }]);
    expect(session.outputListeners.size).toBe(0);
    // Without a progress token nobody subscribes to live output.
    session.holdSends = undefined;
    await client.callTool({ name: 'terminal_send', arguments: { sessionId: 'shell-1', text: 'x' } });
    expect(session.outputListeners.size).toBe(0);
  });

  it('refuses a terminal_open beyond --max-sessions with SESSION_LIMIT, counting opens in flight; a close frees a slot', async () => {
    const capped = createTerminalMcpServer({ pty: host.service('pty'), owner: 'capped', maxSessions: 2 });
    const cappedClient = new Client({ name: 'capped', version: '1.0.0' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([capped.connect(serverSide), cappedClient.connect(clientSide)]);
    try {
      // Two opens held in the engine: the third is refused while neither has finished.
      fixture.engine.spawnGate = gate();
      const held = [1, 2].map(() => cappedClient.callTool({ name: 'terminal_open', arguments: {} }));
      await until('both spawns started', () => fixture.engine.spawnOptions.length === 2);
      const refused = await cappedClient.callTool({ name: 'terminal_open', arguments: {} });
      fixture.engine.spawnGate.open();
      fixture.engine.spawnGate = undefined;
      for (const opened of await Promise.all(held)) expect(opened.isError).toBeFalsy();
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(
        /2 terminals open or opening \(--max-sessions\); close one first.*terminal_close/s,
      );
      // Another connection of the same service has slots of its own.
      expect((await client.callTool({ name: 'terminal_open', arguments: {} })).isError).toBeFalsy();
      const [first] = await host.service('pty').list('capped');
      await cappedClient.callTool({ name: 'terminal_close', arguments: { sessionId: first!.sessionId } });
      expect((await cappedClient.callTool({ name: 'terminal_open', arguments: {} })).isError).toBeFalsy();
    } finally {
      await cappedClient.close();
      await capped.close();
    }
  });

  it('keeps its instructions under 2 000 characters: a long suffix is cut, the guidance and wait bound never', async () => {
    expect(MAX_INSTRUCTIONS_CHARS).toBe(2_000);
    const long = createTerminalMcpServer({
      pty: host.service('pty'),
      owner: 'conn',
      instructionsSuffix: `\nThis server runs every terminal with workspace /${'deep/'.repeat(400)}.\n`,
    });
    const longClient = new Client({ name: 'long', version: '1.0.0' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([long.connect(serverSide), longClient.connect(clientSide)]);
    try {
      const instructions = longClient.getInstructions()!;
      expect(instructions.length).toBe(MAX_INSTRUCTIONS_CHARS - 1);
      expect(instructions.startsWith(TERMINAL_TOOLS_GUIDANCE)).toBe(true);
      expect(instructions).toMatch(
        /one terminal_send call waits at most 50000 ms[\s\S]*with workspace \/deep\/[a-z/]*…$/,
      );
    } finally {
      await longClient.close();
      await long.close();
    }
  });

  it('keeps sessions of the connection invisible to other owners of the same service', async () => {
    await client.callTool({ name: 'terminal_open', arguments: {} });
    expect(await host.service('pty').list('someone-else')).toEqual([]);
    expect(await host.service('pty').list('conn')).toHaveLength(1);
  });
});

describe('agent-pty mcp options', () => {
  it('defaults to workspace-write on the current folder and validates flags', () => {
    expect(parseMcpOptions([], '/w')).toEqual({
      mode: 'workspace-write',
      workspaceRoot: '/w',
      maxWaitMs: 50_000,
      maxSessions: 32,
    });
    expect(
      parseMcpOptions(['--sandbox', 'read-only', '--workspace', 'sub', '--max-wait', '20000'], '/w'),
    ).toEqual({
      mode: 'read-only',
      workspaceRoot: '/w/sub',
      maxWaitMs: 20_000,
      maxSessions: 32,
    });
    expect(
      parseMcpOptions(['--sandbox=danger-full-access', '--workspace=/x', '--max-wait=900'], '/w'),
    ).toEqual({
      mode: 'danger-full-access',
      workspaceRoot: '/x',
      maxWaitMs: 900,
      maxSessions: 32,
    });
    for (const bad of ['0', '-1', '1.5', '50s', '']) {
      expect(() => parseMcpOptions([`--max-wait=${bad}`])).toThrow(
        bad === ''
          ? /--max-wait needs a value/
          : /--max-wait must be a whole number of milliseconds \(1 or more\), e\.g\. 50000/,
      );
    }
    expect(() => parseMcpOptions(['--sandbox', 'open'])).toThrow(
      /--sandbox must be one of read-only, workspace-write, danger-full-access; got 'open'/,
    );
    expect(() => parseMcpOptions(['--workspace'])).toThrow(/--workspace needs a value/);
    expect(() => parseMcpOptions(['--port', '1'])).toThrow(/unknown argument '--port'/);
    expect(parseMcpOptions(['--max-sessions', '4'], '/w').maxSessions).toBe(4);
    for (const bad of ['0', '-3', '2.5', 'many']) {
      expect(() => parseMcpOptions([`--max-sessions=${bad}`])).toThrow(
        /--max-sessions must be a whole number of terminals \(1 or more\), e\.g\. 32/,
      );
    }
  });

  it('--shell names the shell of a terminal_open that names none', () => {
    expect(parseMcpOptions(['--shell', 'pwsh'], '/w')).toMatchObject({ shell: 'pwsh' });
    expect(parseMcpOptions(['--shell=bash'], '/w')).toMatchObject({ shell: 'bash' });
    expect(parseMcpOptions([], '/w').shell).toBeUndefined();
    expect(() => parseMcpOptions(['--shell', 'fish'])).toThrow(
      /--shell must be one of bash, .*pwsh; got 'fish'/,
    );
    expect(() => parseMcpOptions(['--shell'])).toThrow(/--shell needs a value/);
  });
});
