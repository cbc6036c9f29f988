/**
 * Proof that the kernel holds no more of a pty's output (SPEC §4.2 rule 6, for stdin waits).
 *
 * A program writes its prompt and then blocks reading the terminal. Its write only queues the bytes in
 * the pty's flip buffer; a kernel worker moves them into the master's read buffer later, and under
 * load that worker ran up to 4.6 ms after the program was already seen blocked (bench/README.md). So
 * seeing the reader blocked does not prove its prompt has arrived.
 *
 * A read of the master does: on a non-blocking pty master, `n_tty_read` first waits for pending flip
 * buffer work (`tty_buffer_flush_work`), and only then reports EAGAIN when nothing is left. So an
 * EAGAIN from a read that starts after the reader was seen blocked proves that every byte written
 * before the read has already reached node-pty's stream (and, delivered synchronously, the session).
 *
 * What such a read returns instead belongs to node-pty's stream, which owns the fd. It is pushed into
 * that stream, exactly as libuv's own read would: behind anything read before, out through its `data`
 * event to the session's decoder (pty-text-decoder.ts), so a character split across reads is decoded whole.
 * That keeps order and decoding only while the stream flows with nothing buffered, so the drain
 * refuses otherwise (the session paused reading for backpressure, the stream ended or was destroyed).
 */
import { readSync } from 'node:fs';

/**
 * What a drain found: `empty` proves nothing is left in the kernel; `read` moved bytes into the stream
 * (output is still arriving); `unavailable` proves nothing (paused, closed, the pty gone, an error).
 */
export type DrainOutcome = 'empty' | 'read' | 'unavailable';

/** The parts of node-pty's read stream (a `tty.ReadStream` on the master fd) the drain uses. */
export interface PtyReadStream {
  readonly readableFlowing: boolean | null;
  readonly readableLength: number;
  readonly readableEnded: boolean;
  readonly destroyed: boolean;
  push(chunk: Buffer): boolean;
}

/**
 * Bytes per drain read: the line discipline hands over at most its 4 KiB read buffer per read. More
 * output than that means output is still flowing, and one read is enough to say so.
 */
const DRAIN_READ_BYTES = 4 * 1024;

/** Shared by every drain of this thread: drains are synchronous and each copies what it read out. */
const drainBuffer = Buffer.allocUnsafe(DRAIN_READ_BYTES);

/**
 * node-pty's read stream on the master of `term` (its private `_socket`, a `tty.ReadStream`), when it has
 * the shape the drain needs; undefined otherwise (another node-pty version: drains are then off).
 */
export function nodePtyReadStream(term: object): PtyReadStream | undefined {
  const stream = (term as { _socket?: Partial<PtyReadStream> | null })._socket;
  if (typeof stream?.push !== 'function' || typeof stream.readableLength !== 'number') return undefined;
  if (!('readableFlowing' in stream) || typeof stream.readableEnded !== 'boolean') return undefined;
  return stream as PtyReadStream;
}

/** Drains a pty master's output into the stream node-pty reads it with. */
export class PtyOutputDrain {
  private closed = false;

  /**
   * @param fd the non-blocking pty master
   * @param stream node-pty's read stream on `fd`; undefined (an unknown node-pty shape) disables drains
   */
  constructor(
    private readonly fd: number,
    private readonly stream: PtyReadStream | undefined,
  ) {}

  /** Reads what the kernel holds of the pty's output now into the stream (see the file comment). */
  drain(): DrainOutcome {
    const stream = this.stream;
    if (this.closed || stream === undefined) return 'unavailable';
    // Pushed bytes are emitted at once only while the stream flows with nothing buffered; and a paused
    // stream may hold bytes libuv read earlier, which must come first.
    if (stream.readableFlowing !== true || stream.readableLength !== 0) return 'unavailable';
    if (stream.readableEnded || stream.destroyed) return 'unavailable';
    let length: number;
    try {
      length = readSync(this.fd, drainBuffer, 0, DRAIN_READ_BYTES, null);
    } catch (error) {
      // EAGAIN: nothing left, after the kernel's pending buffer work ran. EIO: the other side closed.
      return (error as NodeJS.ErrnoException).code === 'EAGAIN' ? 'empty' : 'unavailable';
    }
    if (length <= 0) return 'unavailable';
    stream.push(Buffer.from(drainBuffer.subarray(0, length)));
    return 'read';
  }

  /** No more reads: node-pty closed the fd (its number may already belong to another file). Idempotent. */
  close(): void {
    this.closed = true;
  }
}
