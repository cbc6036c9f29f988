// SPEC §4.7 over a real stdio connection: `node dist/main/cli/bin.js mcp` with a raw JSON-lines
// client (so requests of any size and shape can be written). An 11 MiB terminal_send is answered
// with an error result carrying its id; lines over 64 MiB are skipped to their newline and answered
// with an error when their id can be found (at the head or at the tail); the server's memory stays
// bounded while skipping, the connection stays open and the other terminal keeps answering.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const BIN = new URL('../../../../dist/main/cli/bin.js', import.meta.url).pathname;
const MiB = 1024 * 1024;
/** Longer than the 64 MiB the server reads, and long enough that buffering it would show in memory. */
const SKIPPED_LINE_BYTES = 256 * MiB;
/**
 * Peak memory growth allowed while skipping: the 64 MiB kept before a line is known to be too long,
 * plus garbage not yet collected (up to ~75 MiB seen under the full suite's load). A server that
 * buffered a whole skipped line would grow by at least its 256 MiB.
 */
const SKIP_MEMORY_BOUND = 200 * MiB;
/** Time for the oversized writes (hundreds of MiB through a pipe) on a loaded machine. */
const TEST_TIMEOUT_MS = 60_000;

interface Response {
  id: number | string | null;
  result?: {
    content?: Array<{ text: string }>;
    isError?: boolean;
    structuredContent?: Record<string, unknown>;
  };
  error?: { code: number; message: string };
}

/** A raw newline-delimited JSON-RPC client of one server process. */
class RawClient {
  private buffered = '';
  private readonly responses = new Map<Response['id'], Response>();
  private readonly waiting = new Map<Response['id'], (response: Response) => void>();
  readonly exited: Promise<[number | null, NodeJS.Signals | null]>;
  stderr = '';

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      this.buffered += text;
      let newline = this.buffered.indexOf('\n');
      while (newline !== -1) {
        const response = JSON.parse(this.buffered.slice(0, newline)) as Response;
        this.buffered = this.buffered.slice(newline + 1);
        const waiter = this.waiting.get(response.id);
        if (waiter === undefined) this.responses.set(response.id, response);
        else waiter(response);
        newline = this.buffered.indexOf('\n');
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve([code, signal])));
  }

  /** Resolves with the response of `id`. */
  response(id: Response['id']): Promise<Response> {
    const known = this.responses.get(id);
    if (known !== undefined) return Promise.resolve(known);
    return new Promise((resolve) => this.waiting.set(id, resolve));
  }

  /** Writes raw bytes, honouring the pipe's back-pressure. */
  async write(data: string | Buffer): Promise<void> {
    if (!this.child.stdin.write(data)) await once(this.child.stdin, 'drain');
  }

  async request(id: number, method: string, params: Record<string, unknown>): Promise<Response> {
    await this.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return this.response(id);
  }

  async callTool(id: number, name: string, args: Record<string, unknown>): Promise<Response> {
    return this.request(id, 'tools/call', { name, arguments: args });
  }

  /** Peak resident memory of the server so far, in bytes. */
  peakMemory(): number {
    const status = readFileSync(`/proc/${this.child.pid}/status`, 'utf8');
    return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1]) * 1024;
  }
}

const textOf = (response: Response) => (response.result?.content ?? []).map((part) => part.text).join('');

let workspace: string;
let client: RawClient | undefined;

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), 'mcp-large-'));
});

afterEach(async () => {
  if (client !== undefined && client.child.exitCode === null) {
    client.child.stdin.end();
    await client.exited;
  }
  client = undefined;
  rmSync(workspace, { recursive: true, force: true });
});

async function connect(): Promise<RawClient> {
  const child = spawn(process.execPath, [BIN, 'mcp', '--workspace', workspace], { stdio: 'pipe' });
  client = new RawClient(child);
  const init = await client.request(1, 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'mcp-large-requests-test', version: '1.0.0' },
  });
  expect(init.result).toBeDefined();
  await client.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  return client;
}

/** Streams one line of `bytes` bytes: `head`, filler inside the text argument, then `tail` and a newline. */
async function writeLongLine(raw: RawClient, head: string, tail: string, bytes: number): Promise<void> {
  const filler = Buffer.alloc(MiB, 'x');
  await raw.write(head);
  let left = bytes - Buffer.byteLength(head) - Buffer.byteLength(tail);
  while (left > 0) {
    const part = left >= filler.length ? filler : filler.subarray(0, left);
    await raw.write(part);
    left -= part.length;
  }
  await raw.write(`${tail}\n`);
}

describe('agent-pty mcp: requests larger than a send may be', () => {
  it(
    'answers an 11 MiB terminal_send with an error result carrying its id; the other terminal still answers',
    async () => {
      const raw = await connect();
      const first = await raw.callTool(2, 'terminal_open', {});
      const second = await raw.callTool(3, 'terminal_open', {});
      const a = first.result?.structuredContent?.sessionId as string;
      const b = second.result?.structuredContent?.sessionId as string;
      expect(a).toBeTruthy();
      expect(b).toBeTruthy();
      // Written the way the SDK's client serializes a request: the id is the last member.
      const text = 'y'.repeat(11 * MiB);
      const big = JSON.stringify({
        method: 'tools/call',
        params: { name: 'terminal_send', arguments: { sessionId: a, text } },
        jsonrpc: '2.0',
        id: 10,
      });
      await raw.write(`${big}\n`);
      const refused = await raw.response(10);
      expect(refused.result?.isError).toBe(true);
      expect(textOf(refused)).toMatch(/larger than the limit of 1048576 bytes.*Nothing was typed/);
      const answer = await raw.callTool(11, 'terminal_send', { sessionId: b, text: 'echo ok-$((6*7))' });
      expect(textOf(answer).split('\n')).toContain('ok-42');
      const same = await raw.callTool(12, 'terminal_send', { sessionId: a, text: 'echo ok-$((6*7))' });
      expect(textOf(same).split('\n')).toContain('ok-42');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'skips lines over 64 MiB with bounded memory, answers each whose id it finds, and keeps serving',
    async () => {
      const raw = await connect();
      const opened = await raw.callTool(2, 'terminal_open', {});
      const sessionId = opened.result?.structuredContent?.sessionId as string;
      const before = raw.peakMemory();
      const args = `"params":{"name":"terminal_send","arguments":{"sessionId":"${sessionId}","text":"`;
      // id first (the head), id last (the tail), and no id at all (nothing to answer).
      await writeLongLine(
        raw,
        `{"jsonrpc":"2.0","id":20,"method":"tools/call",${args}`,
        '"}}}',
        SKIPPED_LINE_BYTES,
      );
      await writeLongLine(
        raw,
        `{"method":"tools/call",${args}`,
        '"}},"jsonrpc":"2.0","id":"tail-21"}',
        SKIPPED_LINE_BYTES,
      );
      await writeLongLine(raw, `{"method":"tools/call",${args}`, '"}}}', SKIPPED_LINE_BYTES);
      const head = await raw.response(20);
      const tail = await raw.response('tail-21');
      for (const response of [head, tail]) {
        expect(response.result).toBeUndefined();
        expect(response.error?.message).toMatch(
          /over the 67108864 bytes this server reads, was not processed/,
        );
      }
      const answer = await raw.callTool(22, 'terminal_send', { sessionId, text: 'echo ok-$((6*7))' });
      expect(textOf(answer).split('\n')).toContain('ok-42');
      // Skipping keeps at most one 64 MiB line's worth, never a whole skipped line.
      expect(raw.peakMemory() - before).toBeLessThan(SKIP_MEMORY_BOUND);
      expect(raw.stderr).toMatch(/no id found, not answered/);
      expect(raw.child.exitCode).toBeNull();
    },
    TEST_TIMEOUT_MS,
  );
});
