// End to end: the SDK's own Client over stdio against `node dist/main/cli/bin.js mcp`, real engine,
// real bash and python3 under bubblewrap. Needs a build (`npx tsc -p .`). Verifies the connection owns
// its terminals: closing stdin, SIGTERM or SIGINT ends the server with no shell left behind.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { liveDescendants } from '../../../support/leaks.js';

const BIN = new URL('../../../../dist/main/cli/bin.js', import.meta.url).pathname;

/** Upper bound for a condition polled on /proc (a process appearing or disappearing). */
const PROC_WAIT_MS = 5_000;

let workspace: string;
let clients: Client[];

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), 'mcp-stdio-'));
  clients = [];
});

afterEach(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  rmSync(workspace, { recursive: true, force: true });
});

interface Connection {
  client: Client;
  serverPid: number;
  /** Resolves when the server process has exited and the client saw the connection close. */
  closed: Promise<void>;
  stderr: () => string;
}

async function connect(args: string[] = [], env?: Record<string, string>): Promise<Connection> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', '--workspace', workspace, ...args],
    stderr: 'pipe',
    ...(env === undefined ? {} : { env }),
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'mcp-stdio-test', version: '1.0.0' });
  clients.push(client);
  const closed = new Promise<void>((resolve) => {
    client.onclose = resolve;
  });
  await client.connect(transport);
  return { client, serverPid: transport.pid!, closed, stderr: () => stderr };
}

type CallResult = Awaited<ReturnType<Client['callTool']>>;
const textOf = (result: CallResult) =>
  (result.content as Array<{ text: string }>).map((part) => part.text).join('');

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
  return { text: textOf(result), json: result.structuredContent as Record<string, unknown> };
}

function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2) !== 'Z';
  } catch {
    return false;
  }
}

async function waitFor<T>(probe: () => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + PROC_WAIT_MS;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('agent-pty mcp over stdio', () => {
  it('serves a full session: python3 REPL, read, SIGINT to sleep, close, list; nothing survives the client', async () => {
    const { client, serverPid, closed } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      [
        'terminal_close',
        'terminal_list',
        'terminal_open',
        'terminal_read',
        'terminal_send',
        'terminal_signal',
      ].sort(),
    );

    const opened = await call(client, 'terminal_open', { name: 'repl' });
    const sessionId = opened.json.sessionId as string;
    const shellPid = opened.json.pid as number;
    expect(opened.text).toContain(`sandbox workspace-write, workspace ${workspace}`);

    const python = await call(client, 'terminal_send', { sessionId, text: 'python3' });
    expect(python.json).toMatchObject({ waitReason: 'stdin_read', sessionStatus: { kind: 'running' } });
    expect(python.json.output).toMatch(/>>> $/);
    const answer = await call(client, 'terminal_send', { sessionId, text: 'print(6*7)' });
    expect(answer.text).toMatch(
      /^print\(6\*7\)\n42\n>>> \n\[wait: stdin_read\]\n\[foreground: python3\]\n\[session: running\]$/,
    );

    const page = await call(client, 'terminal_read', { sessionId, count: 3 });
    expect(page.json.text).toMatch(/42/);
    expect(page.text).toMatch(/\[lines \d+-\d+ of \d+\]/);

    const back = await call(client, 'terminal_send', { sessionId, text: 'exit()' });
    expect(back.text).toMatch(/\[wait: stdin_read\]\n\[exit: 0\]\n\[session: running\]$/);

    const sleeping = call(client, 'terminal_send', { sessionId, text: 'sleep 100' });
    const sleepPid = await waitFor(
      () => liveDescendants(shellPid).find((entry) => entry.comm === 'sleep')?.pid,
      'sleep to start',
    );
    const signalled = await call(client, 'terminal_signal', { sessionId, signal: 'SIGINT' });
    expect(signalled.json).toMatchObject({ delivered: true });
    const interrupted = await sleeping;
    expect(interrupted.json).toMatchObject({ waitReason: 'stdin_read', exitCode: 130 });
    expect(interrupted.text).toContain('[exit: 130]');
    expect(isAlive(sleepPid)).toBe(false);

    const listed = await call(client, 'terminal_list', {});
    expect(listed.json.sessions).toEqual([
      expect.objectContaining({ sessionId, pid: shellPid, name: 'repl' }),
    ]);
    expect(await call(client, 'terminal_close', { sessionId })).toMatchObject({
      json: { sessionId, outcome: 'closed' },
    });
    expect(isAlive(shellPid)).toBe(false);
    expect((await call(client, 'terminal_list', {})).json).toMatchObject({ sessions: [] });

    // A session left open when the client goes away is closed with the connection.
    const second = await call(client, 'terminal_open', {});
    const secondPid = second.json.pid as number;
    void call(client, 'terminal_send', { sessionId: second.json.sessionId, text: 'sleep 100' }).catch(
      () => {},
    );
    await waitFor(() => liveDescendants(secondPid).find((entry) => entry.comm === 'sleep'), 'second sleep');
    const started = performance.now();
    await client.close();
    await closed;
    const closeMs = performance.now() - started;
    expect(isAlive(serverPid)).toBe(false);
    expect(isAlive(secondPid)).toBe(false);
    expect(liveDescendants(process.pid)).toEqual([]);
    // Well inside the client's 2 s grace before it escalates to SIGTERM.
    expect(closeMs).toBeLessThan(2_000);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('closes every terminal and exits on %s', async (signal) => {
    const { client, serverPid, closed, stderr } = await connect();
    const opened = await call(client, 'terminal_open', {});
    const shellPid = opened.json.pid as number;
    void call(client, 'terminal_send', { sessionId: opened.json.sessionId, text: 'sleep 100' }).catch(
      () => {},
    );
    const sleepPid = await waitFor(
      () => liveDescendants(shellPid).find((entry) => entry.comm === 'sleep')?.pid,
      'sleep to start',
    );
    process.kill(serverPid, signal);
    await closed;
    expect(isAlive(serverPid)).toBe(false);
    expect(isAlive(shellPid)).toBe(false);
    expect(isAlive(sleepPid)).toBe(false);
    expect(stderr()).toContain(`agent-pty mcp: ${signal}; closing terminals`);
  });

  it('fails terminal_open with a clear message when the sandbox mode cannot be enforced', async () => {
    const noBwrap = mkdtempSync(join(tmpdir(), 'no-bwrap-'));
    try {
      const { client } = await connect(['--sandbox', 'read-only'], {
        ...getDefaultEnvironment(),
        PATH: noBwrap,
      });
      const result = await client.callTool({ name: 'terminal_open', arguments: {} });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/bubblewrap was not found .* use sandbox mode danger-full-access/);
      expect((await call(client, 'terminal_list', {})).json).toMatchObject({ sessions: [] });
    } finally {
      rmSync(noBwrap, { recursive: true, force: true });
    }
  });

  it('confines the shell: workspace-write can write the workspace but not outside it', async () => {
    const { client } = await connect();
    const { json } = await call(client, 'terminal_open', {});
    const result = await call(client, 'terminal_send', {
      sessionId: json.sessionId,
      text: 'touch inside && touch /etc/agent-pty-outside; echo "rc=$?"',
    });
    expect(result.text).toMatch(/Read-only file system\nrc=1\n/);
    expect(readFileSync(join(workspace, 'inside'), 'utf8')).toBe('');
  });

  it('--shell zsh: a terminal_open without shell runs zsh (confined), one naming bash runs bash', async () => {
    const { client } = await connect(['--shell', 'zsh']);
    const zsh = await call(client, 'terminal_open', {});
    expect(zsh.json).toMatchObject({ shell: 'zsh' });
    const version = await call(client, 'terminal_send', {
      sessionId: zsh.json.sessionId,
      text: 'echo "zsh=$+ZSH_VERSION"; (exit 5)',
    });
    expect(version.text).toMatch(/\nzsh=1\n\[wait: stdin_read\]\n\[exit: 5\]\n/);
    const bash = await call(client, 'terminal_open', { shell: 'bash' });
    expect(bash.json).toMatchObject({ shell: 'bash' });
    const list = await call(client, 'terminal_list', {});
    expect((list.json.sessions as Array<{ shell: string }>).map((session) => session.shell)).toEqual([
      'zsh',
      'bash',
    ]);
  });
});

/** Progress notifications a call received. */
interface Progress {
  progress: number;
  message?: string;
  /** ms since the call started. */
  at: number;
}

describe('waiting over MCP: progress, cancellation, --max-wait, waitFor', () => {
  it('streams new output lines as progress notifications while the send runs', async () => {
    const { client } = await connect();
    const { json } = await call(client, 'terminal_open', {});
    const progress: Progress[] = [];
    const started = performance.now();
    const result = await client.callTool(
      {
        name: 'terminal_send',
        arguments: {
          sessionId: json.sessionId,
          text: 'for i in 1 2 3; do echo tick-$((i*7)); sleep 0.4; done',
        },
      },
      undefined,
      { onprogress: (notification) => progress.push({ ...notification, at: performance.now() - started }) },
    );
    const settledAt = performance.now() - started;
    expect(result.structuredContent).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    const messages = progress.map((entry) => entry.message ?? '').join('\n');
    for (const tick of ['tick-7', 'tick-14', 'tick-21']) expect(messages.split('\n')).toContain(tick);
    // tick-7 was shown while the loop still ran (about 0.8 s before it ended), not at the settle.
    const firstTick = progress.find((entry) => entry.message?.split('\n').includes('tick-7'));
    expect(settledAt - firstTick!.at).toBeGreaterThan(400);
    // Increasing progress, several batches (the ticks are 400 ms apart, batches at most every 300 ms).
    expect(progress.length).toBeGreaterThanOrEqual(2);
    for (let index = 1; index < progress.length; index++) {
      expect(progress[index]!.progress).toBeGreaterThan(progress[index - 1]!.progress);
    }
  });

  it('a cancelled request ends only the wait: the command is not interrupted and finishes', async () => {
    const { client } = await connect();
    const opened = await call(client, 'terminal_open', {});
    const sessionId = opened.json.sessionId as string;
    const shellPid = opened.json.pid as number;
    const controller = new AbortController();
    const cancelled = client.callTool(
      {
        name: 'terminal_send',
        arguments: { sessionId, text: 'sleep 1.5; echo after-$((6*7)) > done.txt; echo fin-$((6*7))' },
      },
      undefined,
      { signal: controller.signal },
    );
    const sleepPid = await waitFor(
      () => liveDescendants(shellPid).find((entry) => entry.comm === 'sleep')?.pid,
      'sleep to start',
    );
    controller.abort('client gave up');
    await expect(cancelled).rejects.toThrow();
    // The slot is free again at once (the send settled `running`), and the sleep was not signalled.
    const listed = await call(client, 'terminal_list', {});
    expect(listed.json.sessions).toHaveLength(1);
    expect(isAlive(sleepPid)).toBe(true);
    await waitFor(
      () => (existsSync(join(workspace, 'done.txt')) ? true : undefined),
      'the command to finish',
    );
    expect(readFileSync(join(workspace, 'done.txt'), 'utf8')).toBe('after-42\n');
    // A wait-only send picks up the end of the command: its late output and its exit code.
    const rest = await call(client, 'terminal_send', { sessionId });
    expect(rest.json).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    expect((rest.json.output as string).split('\n')).toContain('fin-42');
  });

  it('--max-wait clamps timeoutMs: a longer command comes back after the bound, still running', async () => {
    const { client } = await connect(['--max-wait', '700']);
    const opened = await call(client, 'terminal_open', {});
    const sessionId = opened.json.sessionId as string;
    const started = performance.now();
    const sent = await call(client, 'terminal_send', {
      sessionId,
      text: 'sleep 4; echo late',
      timeoutMs: 60_000,
    });
    const elapsed = performance.now() - started;
    expect(elapsed).toBeLessThan(2_500);
    // Timers may fire a fraction of a millisecond early against another clock.
    expect(sent.json.elapsedMs as number).toBeGreaterThan(650);
    expect(sent.json).toMatchObject({ waitReason: 'running' });
    expect(sent.text).toMatch(
      /\[wait bound: 700 ms, the most this server waits per call, instead of 60000 ms\]$/,
    );
    await call(client, 'terminal_signal', { sessionId, signal: 'SIGINT' });
    const back = await call(client, 'terminal_send', { sessionId });
    expect(back.json).toMatchObject({ waitReason: 'stdin_read', exitCode: 130 });
  });

  it('starts a server with waitFor: pattern in well under a second, python3 in the foreground; SIGINT frees it', async () => {
    const { client } = await connect();
    const opened = await call(client, 'terminal_open', {});
    const sessionId = opened.json.sessionId as string;
    const started = performance.now();
    const served = await call(client, 'terminal_send', {
      sessionId,
      text: 'python3 -m http.server 0 --bind 127.0.0.1',
      waitFor: 'Serving HTTP on',
    });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(served.json).toMatchObject({ waitReason: 'pattern', foreground: { command: 'python3' } });
    expect(served.json).not.toHaveProperty('exitCode');
    expect(served.text).toMatch(
      /\nServing HTTP on 127\.0\.0\.1 port \d+ .*\n\[wait: pattern\] .*\n\[foreground: python3\]\n/,
    );
    await call(client, 'terminal_signal', { sessionId, signal: 'SIGINT' });
    const freed = await call(client, 'terminal_send', { sessionId, text: 'echo free-$((6*7))' });
    expect(freed.json).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    expect((freed.json.output as string).split('\n')).toContain('free-42');
    expect(freed.text).not.toContain('[foreground:');
  });
});
