/**
 * The MCP server's stdio transport (SPEC §4.7): newline-delimited JSON-RPC like the SDK's
 * `StdioServerTransport`, without its 10 MiB buffer limit that closes the connection. Lines up to
 * `MAX_REQUEST_BYTES` are parsed (an oversized send is then refused by the tool with an error result
 * carrying the request's id). A longer line is skipped to its newline keeping only its first and last
 * few KiB, and answered with a JSON-RPC error when its id can be found there. The connection stays open.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { DisposableSlot, DisposableStore } from '../../shared/lifecycle.js';
import { findRequestId } from './request-id-scan.js';

/** The largest request line this server parses (SPEC §4.7): a send's input is far smaller (1 MiB). */
export const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
/**
 * Output written but not yet taken by the client, at most, before requests stop being read (SPEC
 * §4.8): a client that never reads cannot grow the server by more than this (plus one request).
 */
export const MAX_UNSENT_BYTES = 16 * 1024 * 1024;
/**
 * While requests are not read, input is still taken off the pipe up to this much, unprocessed: so a
 * client that stopped reading and then closed its end is seen closing (the stream must be read to its
 * end for that), and the server can go down.
 */
const MAX_HELD_INPUT_BYTES = 1024 * 1024;
/** Bytes kept from each end of a skipped line to find its id: far more than any request's envelope. */
const ID_SEARCH_BYTES = 4 * 1024;
/** JSON-RPC "Invalid Request": the answer to a skipped line. */
const INVALID_REQUEST = -32600;
const NEWLINE = 0x0a;

/** A line being skipped: its first and last bytes and its length so far. */
interface Skipped {
  head: Buffer;
  tail: Buffer;
  bytes: number;
}

/** Options of {@link StdioLineTransport}. */
export interface StdioLineTransportOptions {
  /** Longest line parsed (default {@link MAX_REQUEST_BYTES}). */
  maxLineBytes?: number;
  /** Unsent output at most before requests stop being read (default {@link MAX_UNSENT_BYTES}). */
  maxUnsentBytes?: number;
}

/** Newline-delimited JSON-RPC over a readable and a writable stream (stdin/stdout). */
export class StdioLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly maxLineBytes: number;
  private readonly maxUnsentBytes: number;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private skipped: Skipped | undefined;
  private started = false;
  /** The input's listeners and the output's drain waits; released by {@link close}. */
  private readonly owned = new DisposableStore();
  /** The drain that unblocks held requests, while {@link blocked}. */
  private readonly unblockOnDrain = this.owned.add(new DisposableSlot());
  /** Input taken off the pipe while the output is over its bound: processed once the client reads again. */
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** The output is over {@link MAX_UNSENT_BYTES}: requests wait until it drained. */
  private blocked = false;

  constructor(
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
    options: StdioLineTransportOptions = {},
  ) {
    this.maxLineBytes = options.maxLineBytes ?? MAX_REQUEST_BYTES;
    this.maxUnsentBytes = options.maxUnsentBytes ?? MAX_UNSENT_BYTES;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('StdioLineTransport already started');
    this.started = true;
    this.owned.listen('mcp stdio input listener', this.input, 'data', this.onData);
    this.owned.listen('mcp stdio input listener', this.input, 'error', this.onInputError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else {
        // Released by the drain, or by close: the message is written (buffered) either way, and a
        // closed transport's sender must not wait for a client that may never read again.
        const waiting = this.owned.own('mcp send drain wait', resolve);
        this.owned.listen('mcp send drain listener', this.output, 'drain', () => waiting.dispose(), {
          once: true,
        });
      }
      this.limitUnsent();
    });
  }

  /** Output written and not yet taken by the client, in bytes. */
  private unsentBytes(): number {
    return (this.output as NodeJS.WritableStream & { writableLength?: number }).writableLength ?? 0;
  }

  /** Stops taking requests while too much output waits for the client; goes on once it drained. */
  private limitUnsent(): void {
    if (this.blocked || this.unsentBytes() <= this.maxUnsentBytes) return;
    this.blocked = true;
    this.unblockOnDrain.value = this.owned.listen(
      'mcp output drain listener',
      this.output,
      'drain',
      this.onDrain,
      {
        once: true,
      },
    );
  }

  private readonly onDrain = (): void => {
    this.unblockOnDrain.clear(); // fired: the listener is gone already
    this.blocked = false;
    const held = this.held;
    this.held = [];
    this.heldBytes = 0;
    this.input.resume();
    for (let i = 0; i < held.length; i++) {
      if (this.blocked) {
        // The answers to the held requests filled the output again: keep the rest for the next drain.
        this.hold(Buffer.concat(held.slice(i)));
        return;
      }
      this.onData(held[i]!);
    }
  };

  /** Keeps input for later; stops reading the pipe once enough is held. */
  private hold(chunk: Buffer): void {
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    if (this.heldBytes >= MAX_HELD_INPUT_BYTES) this.input.pause();
  }

  async close(): Promise<void> {
    this.owned.dispose();
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.pending = [];
    this.pendingBytes = 0;
    this.held = [];
    this.heldBytes = 0;
    this.skipped = undefined;
    this.onclose?.();
  }

  private readonly onInputError = (error: Error): void => {
    this.onerror?.(error);
  };

  private readonly onData = (chunk: Buffer | string): void => {
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    for (;;) {
      if (this.blocked) {
        // Requests answered so far filled the output: the rest waits until the client reads.
        if (start < data.length) this.hold(data.subarray(start));
        return;
      }
      const newline = data.indexOf(NEWLINE, start);
      if (newline === -1) {
        this.take(data.subarray(start));
        return;
      }
      this.take(data.subarray(start, newline));
      this.endLine();
      start = newline + 1;
    }
  };

  /** Adds part of the current line: kept whole while it fits, else only its ends. */
  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.skipped !== undefined) {
      this.skipped.bytes += part.length;
      this.skipped.tail = lastBytes([this.skipped.tail, part], ID_SEARCH_BYTES);
      return;
    }
    if (this.pendingBytes + part.length <= this.maxLineBytes) {
      this.pending.push(part);
      this.pendingBytes += part.length;
      return;
    }
    // Too long: from here on only the line's ends are kept, so memory stays bounded however long it is.
    const parts = [...this.pending, part];
    this.skipped = {
      head: firstBytes(parts, ID_SEARCH_BYTES),
      tail: lastBytes(parts, ID_SEARCH_BYTES),
      bytes: this.pendingBytes + part.length,
    };
    this.pending = [];
    this.pendingBytes = 0;
  }

  private endLine(): void {
    const skipped = this.skipped;
    this.skipped = undefined;
    if (skipped !== undefined) {
      this.answerSkipped(skipped);
      return;
    }
    const line = Buffer.concat(this.pending, this.pendingBytes).toString('utf8').replace(/\r$/, '');
    this.pending = [];
    this.pendingBytes = 0;
    if (line.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line));
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    this.onmessage?.(message);
  }

  private answerSkipped(skipped: Skipped): void {
    const id = findRequestId(skipped.head.toString('latin1'), skipped.tail.toString('latin1'));
    const what = `a request of ${skipped.bytes} bytes, over the ${this.maxLineBytes} bytes this server reads`;
    this.onerror?.(new Error(`skipped ${what}${id === undefined ? ' (no id found, not answered)' : ''}`));
    if (id === undefined) return;
    void this.send({
      jsonrpc: '2.0',
      id,
      error: {
        code: INVALID_REQUEST,
        message: `${what}, was not processed. Send smaller requests: split large input into several terminal_send calls.`,
      },
    });
  }
}

/** The first `count` bytes of the concatenation of `parts` (a copy, so the parts can be freed). */
function firstBytes(parts: readonly Buffer[], count: number): Buffer {
  const kept: Buffer[] = [];
  let bytes = 0;
  for (const part of parts) {
    if (bytes >= count) break;
    const slice = part.subarray(0, count - bytes);
    kept.push(slice);
    bytes += slice.length;
  }
  return Buffer.concat(kept, bytes);
}

/** The last `count` bytes of the concatenation of `parts` (a copy, so the parts can be freed). */
function lastBytes(parts: readonly Buffer[], count: number): Buffer {
  const kept: Buffer[] = [];
  let bytes = 0;
  for (let i = parts.length - 1; i >= 0 && bytes < count; i--) {
    const part = parts[i]!;
    const slice = part.subarray(Math.max(0, part.length - (count - bytes)));
    kept.unshift(slice);
    bytes += slice.length;
  }
  return Buffer.concat(kept, bytes);
}
