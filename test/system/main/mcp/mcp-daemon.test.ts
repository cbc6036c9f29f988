// `agent-pty mcp --daemon` end to end (SPEC §12): the SDK's Client over stdio against real servers,
// the daemon they start on demand, real bash in workspace-write. Five servers started at once start
// one daemon (setsid, a 0600 log); a terminal outlives the server that opened it; the next server
// lists it detached and reattaches it by name, with what it printed meanwhile.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, runCli, scratchDirectory } from '../../../support/daemon.js';
import { isAlive } from '../../../support/engine.js';
import { until } from '../../../support/until.js';

const clients: Client[] = [];
/** What each server wrote to stderr so far. */
const stderrOf = new WeakMap<Client, () => string>();
let socketToStop: string | undefined;

afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()));
  if (socketToStop !== undefined) await runCli(['daemon', '--socket', socketToStop, '--stop']);
  socketToStop = undefined;
});

interface Setup {
  socket: string;
  state: string;
  workspace: string;
}

function setup(): Setup {
  const socket = join(scratchDirectory(), 'run', 'engine.sock');
  socketToStop = socket;
  return { socket, state: scratchDirectory(0o700), workspace: scratchDirectory() };
}

async function server({ socket, state, workspace }: Setup, extra: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', '--daemon', '--socket', socket, '--workspace', workspace, ...extra],
    env: { ...getDefaultEnvironment(), XDG_STATE_HOME: state, MCP_CLIENT_VAR: 'from-the-client' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'mcp-daemon-test', version: '1.0.0' });
  stderrOf.set(client, () => stderr);
  clients.push(client);
  await client.connect(transport);
  return client;
}

/** Pids of daemons serving `socket`. */
function daemonsOn(socket: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv.includes('daemon') && argv.includes(socket)) pids.push(Number(name));
    } catch {
      // exited while scanning
    }
  }
  return pids;
}

type Json = Record<string, unknown>;
const call = async (client: Client, name: string, args: Json = {}) =>
  (await client.callTool({ name, arguments: args })).structuredContent as Json;

describe('mcp --daemon', () => {
  it('five servers started at once start exactly one daemon, detached with setsid, logging to a 0600 file', async () => {
    const context = setup();
    const servers = await Promise.all(Array.from({ length: 5 }, () => server(context)));
    for (const client of servers) expect((await call(client, 'terminal_list')).sessions).toEqual([]);
    expect(servers[0]!.getInstructions()).toContain('Terminals outlive this connection');
    const daemons = daemonsOn(context.socket);
    // On failure: what the daemons logged and what each server said about starting one.
    const told = () =>
      `daemon log: ${readFileSync(join(context.state, 'agent-pty', 'daemon.log'), 'utf8')}\nservers: ${servers
        .map((client) => stderrOf.get(client)!())
        .join(' | ')}`;
    expect(daemons, told()).toHaveLength(1);
    const stat = readFileSync(`/proc/${daemons[0]}/stat`, 'utf8');
    const sessionId = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]);
    expect(sessionId).toBe(daemons[0]); // a session leader: setsid
    const log = join(context.state, 'agent-pty', 'daemon.log');
    expect(statSync(log).mode & 0o777).toBe(0o600);
    expect(readFileSync(log, 'utf8')).toContain(`listening on ${context.socket}`);
  });

  it('a terminal outlives its server; the next one lists it detached and reattaches it by name', async () => {
    const context = setup();
    const flag = join(context.workspace, 'finished');
    const first = await server(context);
    const opened = await call(first, 'terminal_open', { name: 'build' });
    const ran = await call(first, 'terminal_send', {
      sessionId: opened.sessionId,
      text: `echo env-$MCP_CLIENT_VAR; sleep 1; echo done-$((6*7)); touch ${flag}`,
      timeoutMs: 300,
    });
    expect(ran.waitReason).toBe('running');
    expect(ran.output).toContain('env-from-the-client');
    await first.close();
    await until('the command to finish while no server holds it', () => existsSync(flag));
    expect(isAlive(opened.pid as number)).toBe(true);

    const second = await server(context);
    const listed = (await call(second, 'terminal_list')).sessions as Json[];
    expect(listed).toMatchObject([{ name: 'build', attached: false, pid: opened.pid }]);
    const again = await call(second, 'terminal_open', { name: 'build' });
    expect(again).toMatchObject({ reattached: true, name: 'build', pid: opened.pid, missedLines: 0 });
    expect(String(again.motd).split('\n')).toContain('done-42');
    const next = await call(second, 'terminal_send', {
      sessionId: again.sessionId,
      text: 'echo next-$((6*7))',
    });
    expect(next.output).toContain('next-42');
    expect(next.output).not.toContain('done-42'); // the reattach moved the cursor past it
    expect((await call(second, 'terminal_list')).sessions).toMatchObject([{ name: 'build', attached: true }]);
    await call(second, 'terminal_close', { sessionId: again.sessionId });
    await until('the shell to be gone', () => !isAlive(opened.pid as number));
  });

  it('a reattached terminal counts against --max-sessions', async () => {
    const context = setup();
    const first = await server(context);
    await call(first, 'terminal_open', { name: 'old' });
    await first.close();
    const second = await server(context, ['--max-sessions', '1']);
    const fresh = await call(second, 'terminal_open', { name: 'new' });
    const refused = await second.callTool({ name: 'terminal_open', arguments: { name: 'old' } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('--max-sessions');
    await call(second, 'terminal_close', { sessionId: fresh.sessionId });
    expect(await call(second, 'terminal_open', { name: 'old' })).toMatchObject({ reattached: true });
  });

  it('after the daemon is killed, the server starts a new one: terminal_open and terminal_list work again', async () => {
    const context = setup();
    const client = await server(context);
    const opened = await call(client, 'terminal_open', { name: 'doomed' });
    const [daemon] = daemonsOn(context.socket);
    process.kill(daemon!, 'SIGKILL');
    await until(
      'the daemon and its shell to be gone',
      () => !isAlive(daemon!) && !isAlive(opened.pid as number),
    );
    // The first call after the death starts a new daemon, even when it goes out before this server has
    // read the end of the dead daemon's socket (then it fails on the dead link and is sent again).
    const fresh = await call(client, 'terminal_open', { name: 'reborn' });
    expect(fresh).toMatchObject({ sessionId: expect.any(String) });
    expect(daemonsOn(context.socket)).toHaveLength(1);
    const ran = await call(client, 'terminal_send', {
      sessionId: fresh.sessionId,
      text: 'echo back-$((6*7))',
    });
    expect(ran.output).toContain('back-42');
    expect((await call(client, 'terminal_list')).sessions).toContainEqual(
      expect.objectContaining({ name: 'reborn', attached: true }),
    );
    const stale = await client.callTool({
      name: 'terminal_send',
      arguments: { sessionId: opened.sessionId, text: 'echo x' },
    });
    expect(stale.isError).toBe(true);
    expect(JSON.stringify(stale.content)).toContain('terminal_open starts a new one');
    expect(JSON.stringify(stale.content)).toContain('agent-pty daemon link closed');
  });

  it('fails at once, quoting the daemon log, when the daemon it started exits without answering', async () => {
    const context = setup();
    mkdirSync(dirname(context.socket), { recursive: true, mode: 0o700 });
    writeFileSync(context.socket, 'not a socket');
    socketToStop = undefined; // no daemon will run
    let stderr = '';
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--daemon', '--socket', context.socket, '--workspace', context.workspace],
      env: { ...getDefaultEnvironment(), XDG_STATE_HOME: context.state },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const client = new Client({ name: 'mcp-daemon-test', version: '1.0.0' });
    clients.push(client);
    await expect(client.connect(transport)).rejects.toThrow();
    await until('the server to say why', () => stderr.includes('exists and is not a socket'));
    expect(stderr).toContain('the agent-pty daemon on');
    expect(stderr).not.toContain('did not answer');
  });

  it('a listed id of a session this server does not hold is refused with what works: terminal_open by name, or by id when unnamed', async () => {
    const context = setup();
    const first = await server(context);
    await call(first, 'terminal_open', { name: 'build' });
    const unnamed = await call(first, 'terminal_open', {});
    await first.close();
    const second = await server(context);
    const listed = (await call(second, 'terminal_list')).sessions as Json[];
    const named = listed.find((session) => session.name === 'build')!;
    const anonymous = listed.find((session) => session.pid === unnamed.pid)!;
    const text = async (client: Client, name: string, args: Json) => {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError).toBe(true);
      return (result.content as { text: string }[])[0]!.text;
    };
    expect(await text(second, 'terminal_send', { sessionId: named.sessionId, text: 'echo x' })).toContain(
      'is detached (it was when terminal_list last ran), not held by this connection; terminal_open {"name": "build"} reattaches it',
    );
    expect(await text(second, 'terminal_close', { sessionId: anonymous.sessionId })).toContain(
      `terminal_open {"name": "${anonymous.sessionId}"} reattaches it`,
    );
    const again = await second.callTool({ name: 'terminal_open', arguments: { name: anonymous.sessionId } });
    expect(again.structuredContent).toMatchObject({ reattached: true, pid: unnamed.pid });
    const header = (again.content as { text: string }[])[0]!.text.split('\n')[0]!;
    expect(header).toMatch(/^Reattached terminal session \S+ \(bash, pid \d+/);
    await call(second, 'terminal_open', { name: 'build' });
    const third = await server(context);
    const held = ((await call(third, 'terminal_list')).sessions as Json[]).find((s) => s.name === 'build')!;
    expect(await text(third, 'terminal_send', { sessionId: held.sessionId, text: 'echo x' })).toContain(
      'is attached to another connection, not this one; once it is detached there, terminal_open {"name": "build"} reattaches it here',
    );
  });

  it('a name held by another connection is refused with what works; a reattach says how much terminal_read can still page back', async () => {
    const context = setup();
    const first = await server(context);
    const opened = await call(first, 'terminal_open', { name: 'loud' });
    const flag = join(context.workspace, 'printed');
    await call(first, 'terminal_send', {
      sessionId: opened.sessionId,
      text: `sleep 1; seq 1 30000; touch ${flag}`,
      timeoutMs: 200,
    });
    const second = await server(context);
    const taken = await second.callTool({ name: 'terminal_open', arguments: { name: 'loud' } });
    expect(taken.isError).toBe(true);
    const refusal = (taken.content as { text: string }[])[0]!.text;
    expect(refusal).toContain('only once it is detached there');
    expect(refusal).not.toContain('attach it');
    await first.close();
    expect(stderrOf.get(first)!()).toContain('; detaching terminals');
    await until('the output to be printed while detached', () => existsSync(flag));
    const again = await second.callTool({ name: 'terminal_open', arguments: { name: 'loud' } });
    const json = again.structuredContent as Json;
    const text = (again.content as { text: string }[])[0]!.text;
    const counts =
      /(\d+) earlier lines are not shown; terminal_read \{[^}]*\} can page back through (\d+) of them; the other (\d+) are gone \(the scrollback holds (\d+) lines\)/.exec(
        text,
      );
    expect(counts, text).not.toBeNull();
    const [missed, pageable, gone, held] = counts!.slice(1).map(Number) as [number, number, number, number];
    expect(missed).toBe(json.missedLines);
    expect(pageable + gone).toBe(missed);
    expect(held).toBeLessThanOrEqual(10_000);
    expect(pageable).toBeLessThan(held);
  });
});
