/**
 * Edges never buffer without bound (SPEC §4.8): the MCP server's stdio transport and the world link
 * of `serve --stdio` stop reading while too much of their output is unsent, a live-output
 * acknowledgement for more than was sent is a protocol error, and both servers exit soon after stdin
 * closes even when their stdout is blocked (a client that stopped reading), their shells closed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { StdioLineTransport } from '../../../../dist/main/mcp/stdio-line-transport.js';
import { LiveOutputSender } from '../../../../dist/main/worlds/live-output-flow.js';
import { WorldLink } from '../../../../dist/main/worlds/world-link.js';
import { serveWorld } from '../../../../dist/main/worlds/world-server.js';
import { WORLD_PROTOCOL_VERSION } from '../../../../dist/shared/world-protocol.js';
import { createPtyEngine, isAlive, type TerminalSession } from '../../../support/engine.js';
import { until } from '../../../support/until.js';

const BIN = fileURLToPath(new URL('../../../../dist/main/cli/bin.js', import.meta.url));

/** A client's end that takes nothing until `release()`: what a client that stopped reading looks like. */
class StalledReader extends Writable {
  private readonly waiting: Array<() => void> = [];
  private released = false;
  received = 0;

  constructor() {
    super({ highWaterMark: 1024 });
  }

  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.received += chunk.length;
    if (this.released) callback();
    else this.waiting.push(callback);
  }

  release(): void {
    this.released = true;
    for (const callback of this.waiting.splice(0)) callback();
  }
}

describe('the MCP transport stops reading while its output is unsent', () => {
  it('holds requests once the unsent output passes the bound, and serves them once the client reads', async () => {
    const input = new PassThrough();
    const output = new StalledReader();
    const transport = new StdioLineTransport(input, output, { maxUnsentBytes: 4096 });
    const served: number[] = [];
    transport.onmessage = (message: JSONRPCMessage) => {
      const id = (message as { id: number }).id;
      served.push(id);
      // Every answer is large: the unsent output grows by 2 KiB a request.
      void transport.send({ jsonrpc: '2.0', id, result: { text: 'x'.repeat(2048) } });
    };
    await transport.start();
    for (let id = 1; id <= 200; id++)
      input.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    // The bound (4 KiB) is passed after a few answers: the rest of the requests wait, unread.
    expect(served.length).toBeGreaterThan(0);
    expect(served.length).toBeLessThan(10);
    output.release();
    await until('every request served once the client reads', () => served.length === 200);
    expect(served).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    await transport.close();
  });
});

describe('the world link stops reading while its output is unsent', () => {
  it('holds frames once 16 MiB are unsent, and goes on once the peer reads', async () => {
    const input = new PassThrough();
    const output = new StalledReader();
    const frames: number[] = [];
    const link = new WorldLink<{ t: string; n: number }, { t: string; text: string }>(input, output, {
      onFrame: (frame) => {
        frames.push(frame.n);
        link.send({ t: 'result', text: 'y'.repeat(1024 * 1024) }); // 1 MiB an answer
      },
      onClosed: () => undefined,
    });
    for (let n = 1; n <= 40; n++) input.write(`${JSON.stringify({ t: 'call', n })}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(frames.length).toBeGreaterThan(10);
    expect(frames.length).toBeLessThan(40);
    expect(link.bufferedBytes).toBeLessThan(20 * 1024 * 1024);
    output.release();
    await until('every frame handled once the peer reads', () => frames.length === 40);
    link.close();
  });
});

describe('live-output acknowledgements', () => {
  it('an acknowledgement for more than was sent, or of no whole number, is a protocol error', () => {
    const sent: string[] = [];
    const fakeSession = {
      onOutput: (listener: (chunk: { text: string; dropped: number }) => void) => {
        listener({ text: 'hello', dropped: 0 });
        return { dispose: () => undefined };
      },
    } as unknown as TerminalSession;
    const sender = new LiveOutputSender(fakeSession, (text) => sent.push(text));
    sender.start();
    expect(sent).toEqual(['hello']);
    sender.acknowledge(5);
    for (const chars of [1, 2 ** 50, -1, Number.NaN, 0.5]) {
      expect(() => sender.acknowledge(chars)).toThrow(expect.objectContaining({ code: 'PROTOCOL_MISMATCH' }));
    }
  });

  it('serve: a client acknowledging 2^50 characters is refused and its sessions are closed', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const frames: Array<Record<string, unknown>> = [];
    let buffered = '';
    output.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
        frames.push(JSON.parse(buffered.slice(0, end)));
        buffered = buffered.slice(end + 1);
      }
    });
    const serving = serveWorld({ input, output, createEngine: (config) => createPtyEngine(config) });
    const send = (frame: unknown) => input.write(`${JSON.stringify(frame)}\n`);
    send({ t: 'hello', protocol: WORLD_PROTOCOL_VERSION, config: {} });
    await until('ready', () => frames.some((frame) => frame.t === 'ready'));
    send({ t: 'call', id: 1, op: 'spawn', args: {} });
    await until('spawned', () => frames.some((frame) => frame.t === 'result' && frame.id === 1));
    const spawned = frames.find((frame) => frame.id === 1)!.value as { id: string; pid: number };
    send({ t: 'call', id: 2, op: 'live-output', args: { session: spawned.id, on: true } });
    send({
      t: 'call',
      id: 3,
      op: 'send',
      args: { session: spawned.id, send: 1, request: { text: 'echo out-$((6*7))' } },
    });
    await until('output sent', () => frames.some((frame) => frame.t === 'output'));
    send({ t: 'ack', session: spawned.id, chars: 2 ** 50 });
    const outcome = await serving;
    expect(outcome.refused).toBe(true);
    expect(frames.find((frame) => frame.t === 'fatal')).toMatchObject({
      error: { code: 'PROTOCOL_MISMATCH' },
    });
    expect(isAlive(spawned.pid)).toBe(false);
  });
});

/** Starts `agent-pty <args>` with a stdout this test never reads once `flood` is written. */
function startServer(args: string[]): ChildProcess {
  return spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'ignore'] });
}

/** Resolves with the child's exit code once it exited. */
function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

/** Reads a child's stdout until told to stop reading it for good. */
class StdoutReader {
  text = '';
  private readonly waiters = new Set<() => void>();

  constructor(private readonly child: ChildProcess) {
    child.stdout!.on('data', this.onData);
  }

  /** Resolves once what arrived matches `pattern`. */
  async waitFor(pattern: RegExp): Promise<string> {
    while (!pattern.test(this.text)) await new Promise<void>((resolve) => this.waiters.add(resolve));
    return this.text;
  }

  /** From here on nobody reads: the pipe fills and the server's writes block. */
  stop(): void {
    this.child.stdout!.off('data', this.onData);
    this.child.stdout!.pause();
  }

  private readonly onData = (chunk: Buffer): void => {
    this.text += chunk.toString();
    for (const waiter of this.waiters) waiter();
    this.waiters.clear();
  };
}

describe('a server whose stdin closed exits even when its stdout is blocked', () => {
  it('agent-pty mcp: closes its terminal (short grace) and exits', async () => {
    const child = startServer(['mcp', '--sandbox', 'danger-full-access']);
    const send = (message: unknown) => child.stdin!.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'terminal_open', arguments: {} } });
    const reader = new StdoutReader(child);
    const opened = await reader.waitFor(/"id":2\b/);
    reader.stop();
    const pid = Number(/"pid":(\d+)/.exec(opened)![1]);
    // A child of the shell that ignores SIGTERM: only the short grace's SIGKILL ends it.
    send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: {
        name: 'terminal_send',
        arguments: { sessionId: 'shell-1', text: "trap '' TERM; seq 1 200000 | head -c 3000000" },
      },
    });
    // Many answers of up to 64 KiB each, none read: stdout's pipe is full long before they are out.
    for (let id = 4; id < 200; id++) {
      send({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'terminal_read', arguments: { sessionId: 'shell-1', count: 10000 } },
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    child.stdin!.end();
    expect(await exited(child)).not.toBeNull();
    expect(isAlive(pid)).toBe(false);
  }, 60_000);

  it('agent-pty serve --stdio: closes its sessions (short grace) and exits', async () => {
    const child = startServer(['serve', '--stdio']);
    const send = (frame: unknown) => child.stdin!.write(`${JSON.stringify(frame)}\n`);
    const reader = new StdoutReader(child);
    send({ t: 'hello', protocol: WORLD_PROTOCOL_VERSION, config: {} });
    await reader.waitFor(/"t":"ready"/);
    send({ t: 'call', id: 1, op: 'spawn', args: {} });
    const spawned = await reader.waitFor(/"t":"result","id":1\b/);
    reader.stop();
    const id = /"value":\{"id":"([^"]+)"/.exec(spawned)![1]!;
    const pid = Number(/"pid":(\d+),"motd"/.exec(spawned)![1]);
    send({ t: 'call', id: 2, op: 'live-output', args: { session: id, on: true } });
    // A flood whose live output (a window of 1 Mi characters, never acknowledged) fills stdout's pipe.
    send({
      t: 'call',
      id: 3,
      op: 'send',
      args: { session: id, send: 1, request: { text: "trap '' TERM; yes | head -c 50000000" } },
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    child.stdin!.end();
    expect(await exited(child)).not.toBeNull();
    expect(isAlive(pid)).toBe(false);
  }, 60_000);
});
