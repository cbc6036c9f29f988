/**
 * Writes caller input to the pty master in slices, so a send can know when its write finished and a
 * cancellation can stop queued input from ever being written (SPEC §4.4).
 *
 * node-pty's own `write()` queues internally and offers no completion signal, so input goes straight to
 * the master fd with `fs.write` (the same non-blocking fd node-pty writes to). Terminal replies still go
 * through node-pty's `write()`; they are drained before caller input starts.
 */
import { write as fsWrite } from 'node:fs';

/** Bytes per `fs.write`: below the tty input queue (4 KiB), so one slice never waits on a half-full queue. */
const SLICE_BYTES = 1024;

/** Back-off while the tty input queue is full (EAGAIN): the reader must consume before more fits. */
const FULL_QUEUE_RETRY_MS = 2;

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

/** Sliced, cancellable writer for one pty master fd. */
export class PtyInputWriter {
  constructor(private readonly fd: number) {}

  /**
   * Writes `data`. Before each slice `isCancelled()` is consulted: once it returns true no further byte is
   * written and the promise resolves `'cancelled'`. A slice already handed to the kernel always finishes
   * first, so when this promise settles nothing of this write is still in flight. Rejects on a write error.
   */
  write(data: string, isCancelled: () => boolean): Promise<WriteOutcome> {
    const buffer = Buffer.from(data, 'utf8');
    let offset = 0;
    return new Promise<WriteOutcome>((resolve, reject) => {
      const step = (): void => {
        if (offset >= buffer.length) {
          resolve('written');
          return;
        }
        if (isCancelled()) {
          resolve('cancelled');
          return;
        }
        const length = sliceLength(buffer, offset);
        fsWrite(this.fd, buffer, offset, length, null, (error, written) => {
          if (error) {
            if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
              setTimeout(step, FULL_QUEUE_RETRY_MS);
              return;
            }
            reject(error);
            return;
          }
          offset += written;
          step();
        });
      };
      step();
    });
  }
}
