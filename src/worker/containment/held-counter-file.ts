/**
 * A cgroup's event counter file (`memory.events`, `memory.oom_control`, `pids.events`) read through a
 * descriptor held open for the session's life, with a positioned read from offset 0. Every result reads
 * the session's counters (its `limitEvents`), and opening a cgroup file costs most of such a read: a
 * kernfs open allocates the file's seq_file state, which one `pread` then only fills.
 *
 * A held descriptor reads the counter of the moment, never an old one: these files are kernfs seq_files
 * whose text is generated at read time, and a read at offset 0 resets the iterator and regenerates it
 * (the kernel's `seq_read_iter`), as for the procfs files of proc-files.ts. A descriptor is bound to its
 * cgroup: once the cgroup is removed its reads fail, which reads as "unreadable" (the caller keeps the
 * counts it had); the session closes it before removing the cgroup.
 */
import fs from 'node:fs';

/** Far more than any counter file's text (a handful of `name value` lines). */
const BUFFER_BYTES = 1024;

/** One counter file of one cgroup, opened on first read. */
export class HeldCounterFile {
  private fd: number | undefined;
  private closed = false;
  private readonly buffer = Buffer.allocUnsafe(BUFFER_BYTES);

  constructor(readonly path: string) {}

  /** The value of the `key value` line `key` now; `undefined` when the file or the line is unreadable. */
  value(key: string): number | undefined {
    const text = this.text();
    return text === undefined ? undefined : keyedValueIn(text, key);
  }

  /** The file's text now, or `undefined` when it cannot be read (the cgroup is gone, or it was closed). */
  text(): string | undefined {
    if (this.closed) return undefined;
    if (this.fd === undefined) {
      try {
        this.fd = fs.openSync(this.path, 'r');
      } catch (_goneOrDenied) {
        return undefined;
      }
    }
    try {
      const length = fs.readSync(this.fd, this.buffer, 0, BUFFER_BYTES, 0);
      return this.buffer.toString('latin1', 0, length);
    } catch (_gone) {
      // The cgroup went away under the descriptor: release it; a later read tries the path again.
      this.release();
      return undefined;
    }
  }

  /** Releases the descriptor; later reads answer `undefined`. Idempotent. */
  close(): void {
    this.closed = true;
    this.release();
  }

  private release(): void {
    const fd = this.fd;
    this.fd = undefined;
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The value of the `key value` line `key` of a flat-keyed kernel file's `text`. */
export function keyedValueIn(text: string, key: string): number | undefined {
  for (const line of text.split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0 && line.slice(0, space) === key) {
      const value = Number(line.slice(space + 1));
      return Number.isFinite(value) ? value : undefined;
    }
  }
  return undefined;
}
