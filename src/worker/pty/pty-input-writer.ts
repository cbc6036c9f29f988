/**
 * Every byte the engine writes to the pty master: caller input in slices, so a send can know when its
 * write finished and a cancellation can stop queued input from ever being written (SPEC §4.4), and
 * terminal replies, through a bounded queue (SPEC §4.3).
 *
 * node-pty's own `write()` queues without bound, retries EAGAIN forever and offers no completion
 * signal, and once its fd is closed it prints `Unhandled pty write error` for what it still held. So
 * nothing goes through it: this writer writes straight to the master fd (the same non-blocking fd
 * node-pty reads from), one write at a time. Replies go before the next slice of caller input, as a
 * terminal's answers interleave with what a person types. After {@link PtyInputWriter.close} nothing
 * more is written: the fd number may already belong to another file.
 *
 * On a non-blocking fd each write is a `writeSync`: the kernel copies the slice into the tty's input
 * queue or answers EAGAIN at once, so nothing can block. `fs.write` would take a round trip through
 * libuv's thread pool instead, which a send then waited for before it looked for readiness: 0.1 ms at
 * the median, and several ms at p90/p99 under load (bench/README.md). A blocking fd keeps `fs.write`.
 */
import { write as fsWrite, writeSync } from 'node:fs';
import { DisposableSlot, DisposableStore } from '../../shared/lifecycle.js';

/**
 * Bytes per write: below the tty input queue (4 KiB), so one slice never waits on a half-full queue.
 * One slice reaches the reader in one piece (one pass of the kernel's flush work); input longer than
 * this arrives in pieces, between which a raw-mode reader can be seen blocked.
 */
export const SLICE_BYTES = 1024;

/**
 * Synchronous writes in one turn at most; the rest goes on in a later turn. The tty input queue holds
 * 4 KiB, so a reader that keeps up is needed to reach this, and then a long input must not hold the
 * event loop (and the processing of its echo) for its whole length.
 */
const SYNC_WRITES_PER_TURN = 8;

/** Back-off while the tty input queue is full (EAGAIN): the reader must consume before more fits. */
const FULL_QUEUE_RETRY_MS = 2;

/**
 * Reply bytes queued at most. Replies only queue while the tty input queue is full (the reader is not
 * reading); a reader that reads takes them in one write.
 */
const MAX_QUEUED_REPLY_BYTES = 4 * 1024;

/**
 * Length of the next slice: up to SLICE_BYTES, ending after the last line break inside it when there is
 * one, so that a cancellation between slices leaves whole lines behind — never half a command typed
 * at the next prompt.
 */
function sliceLength(buffer: Buffer, offset: number): number {
  const end = Math.min(offset + SLICE_BYTES, buffer.length);
  if (end === buffer.length) return end - offset;
  for (let i = end - 1; i > offset; i--) {
    const byte = buffer[i];
    if (byte === 0x0d || byte === 0x0a) return i + 1 - offset;
  }
  return end - offset;
}

/** How a write ended. */
export type WriteOutcome = 'written' | 'cancelled';

/** One caller write in progress. */
interface InputWrite {
  buffer: Buffer;
  offset: number;
  isCancelled: () => boolean;
  resolve: (outcome: WriteOutcome) => void;
  reject: (error: Error) => void;
}

/** Counters for tests and benchmarks. */
export interface PtyInputWriterStats {
  /** Reply bytes written. */
  replyBytesWritten: number;
  /** Replies dropped: the queue was full, the writer closed, or a write failed. */
  repliesDropped: number;
}

/** Sliced, cancellable writer for one pty master fd, with a bounded reply queue. */
export class PtyInputWriter {
  private readonly inputs: InputWrite[] = [];
  private replies: Buffer = Buffer.alloc(0);
  private inFlight = false;
  /** The write in flight carries replies. */
  private repliesInFlight = false;
  /** The next pump's turn and the full-queue retry timer; released by close(). */
  private readonly owned = new DisposableStore();
  /** Armed while the tty input queue is full: the only one to try again then. */
  private readonly retry = this.owned.add(new DisposableSlot());
  private closed = false;
  private readonly counters: PtyInputWriterStats = { replyBytesWritten: 0, repliesDropped: 0 };

  /**
   * @param fd the pty master
   * @param onRepliesWritten called each time queued replies reached the kernel (a reader may now take them)
   * @param nonBlocking `fd` is O_NONBLOCK: writes are synchronous (see the file comment)
   */
  constructor(
    private readonly fd: number,
    private readonly onRepliesWritten?: () => void,
    private readonly nonBlocking = false,
  ) {}

  /** True while replies are queued or being written: a reader blocked on the terminal may be waiting for them. */
  get repliesPending(): boolean {
    return this.replies.length > 0 || this.repliesInFlight;
  }

  /** A snapshot of the counters. */
  get stats(): PtyInputWriterStats {
    return { ...this.counters };
  }

  /**
   * Writes `data`. Before each slice `isCancelled()` is consulted: once it returns true no further byte is
   * written and the promise resolves `'cancelled'`. A slice already handed to the kernel always finishes
   * first, so when this promise settles nothing of this write is still in flight. Rejects on a write
   * error. After {@link close} (or once closed meanwhile) it resolves `'cancelled'` with nothing more written.
   */
  write(data: string, isCancelled: () => boolean): Promise<WriteOutcome> {
    if (this.closed) return Promise.resolve('cancelled');
    return new Promise<WriteOutcome>((resolve, reject) => {
      this.inputs.push({ buffer: Buffer.from(data, 'utf8'), offset: 0, isCancelled, resolve, reject });
      this.pump();
    });
  }

  /**
   * Queues a terminal reply, written ahead of the next slice of caller input. False when it was
   * dropped: the queue is full (the reader has not taken earlier replies) or the writer is closed.
   */
  writeReply(data: string): boolean {
    const bytes = Buffer.from(data, 'utf8');
    if (this.closed || this.replies.length + bytes.length > MAX_QUEUED_REPLY_BYTES) {
      this.counters.repliesDropped += 1;
      return false;
    }
    this.replies = this.replies.length === 0 ? bytes : Buffer.concat([this.replies, bytes]);
    this.pump();
    return true;
  }

  /**
   * Stops writing for good: queued replies are dropped and pending caller writes resolve `'cancelled'`.
   * A write already handed to the kernel completes (or fails) quietly. Idempotent.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.owned.dispose();
    if (this.replies.length > 0) this.counters.repliesDropped += 1;
    this.replies = Buffer.alloc(0);
    for (const input of this.inputs.splice(0)) input.resolve('cancelled');
  }

  /** Starts the next writes unless one is in flight: queued replies first, then slices of caller input. */
  private readonly pump = (): void => {
    for (let writes = 0; writes < SYNC_WRITES_PER_TURN; writes++) {
      // While the tty input queue is full, the retry timer is the only one to try again.
      if (this.inFlight || this.closed || this.retry.value !== undefined) return;
      if (this.replies.length > 0) {
        this.writeReplies();
        continue;
      }
      const input = this.inputs[0];
      if (input === undefined) return;
      if (input.offset >= input.buffer.length) {
        this.inputs.shift();
        input.resolve('written');
        continue;
      }
      if (input.isCancelled()) {
        this.inputs.shift();
        input.resolve('cancelled');
        continue;
      }
      this.writeSlice(input);
    }
    if (!this.inFlight && !this.closed && this.retry.value === undefined) {
      this.owned.immediate('pty input pump', this.pump);
    }
  };

  private readonly retryAfterFullQueue = (): void => {
    this.retry.clear();
    this.pump();
  };

  private writeSlice(input: InputWrite): void {
    const length = sliceLength(input.buffer, input.offset);
    this.writeBytes(input.buffer, input.offset, length, (error, written) => {
      if (this.closed) {
        // close() already resolved it; a late error on a closed fd is expected and not reported.
        return;
      }
      if (error) {
        if (error.code === 'EAGAIN') {
          this.retry.value = this.owned.timeout(
            'pty input retry',
            FULL_QUEUE_RETRY_MS,
            this.retryAfterFullQueue,
          );
          return;
        }
        this.inputs.shift();
        input.reject(error);
        return;
      }
      input.offset += written;
    });
  }

  private writeReplies(): void {
    const replies = this.replies;
    this.repliesInFlight = true;
    this.writeBytes(replies, 0, replies.length, (error, written) => {
      this.repliesInFlight = false;
      if (this.closed) return;
      if (error) {
        if (error.code === 'EAGAIN') {
          this.retry.value = this.owned.timeout(
            'pty input retry',
            FULL_QUEUE_RETRY_MS,
            this.retryAfterFullQueue,
          );
          return;
        }
        // The terminal is going away; its exit is reported elsewhere. The replies are lost.
        this.counters.repliesDropped += 1;
        this.replies = Buffer.alloc(0);
      } else {
        this.counters.replyBytesWritten += written;
        // Replies queued meanwhile were appended behind these bytes: what is left starts at `written`.
        this.replies = this.replies.subarray(written);
        this.onRepliesWritten?.();
      }
    });
  }

  /**
   * Writes `buffer[offset, offset + length)` and calls `after` with the outcome: before returning on a
   * non-blocking fd (the caller's loop goes on), else from `fs.write`'s callback, followed by a pump.
   */
  private writeBytes(
    buffer: Buffer,
    offset: number,
    length: number,
    after: (error: NodeJS.ErrnoException | null, written: number) => void,
  ): void {
    if (this.nonBlocking) {
      let written: number;
      try {
        written = writeSync(this.fd, buffer, offset, length);
      } catch (error) {
        after(error as NodeJS.ErrnoException, 0);
        return;
      }
      after(null, written);
      return;
    }
    this.inFlight = true;
    fsWrite(this.fd, buffer, offset, length, null, (error, written) => {
      this.inFlight = false;
      after(error, written);
      this.pump();
    });
  }
}
