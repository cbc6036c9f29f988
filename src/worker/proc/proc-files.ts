/**
 * How a foreground sample reads its small `/proc` files: opened afresh for every read, or through
 * descriptors held open across samples and re-read with a positioned read from offset 0. Opening a
 * procfs file costs two of its three system calls (open, read, close) and most of its time: a sample of
 * bash at its prompt read ~9 files and listed `task/` twice, ~32 system calls (bench/README.md, "Where the
 * time of a `true` goes").
 *
 * Why a held descriptor can never make a stale reading prove a wait:
 * - Every file read here (`stat`, `task/<tid>/{stat,syscall,schedstat,status,children}`) is a seq_file
 *   whose text is generated at read time; a read at offset 0 resets its iterator and regenerates it (the
 *   kernel's `seq_read_iter`). So a held descriptor returns the state of the moment it is read, like a
 *   fresh open: descriptors are cached, readings never are.
 * - A procfs inode is bound to the kernel's `struct pid` of the process or thread it was opened for, not
 *   to the number in its path, and a `struct pid` is never reused. Once that task is reaped, every read
 *   fails with ESRCH, also after its pid or tid has been handed to another process or thread: a held
 *   descriptor can never read a newcomer. The failure drops the descriptor and the path is opened
 *   afresh at once: the reading is then the newcomer's, as a fresh open's would be, with every check of
 *   the tree walk (ppid, start time) applied to it. Not skipping it matters: a process missed at the
 *   write boundary would have no baseline, and its old wait would look new to the proof (rule 4).
 *   {@link ProcFiles.replaced} counts those reopenings, so a thread's inspection that met one (its
 *   files may then describe two tasks) is `unknown`.
 * - exec changes the program, not the `struct pid`: the files show the process after exec, as a fresh
 *   open would. (An exec from a non-leader thread hands the leader's `struct pid` to that thread, which
 *   takes the leader's tid: the path and the descriptor still agree.)
 * - Files not read here for that reason: `/proc/<pid>/mem` binds the address space at open (after an exec
 *   a held one would read the old one, or that of a process sharing it), and `fd/<n>` and `fdinfo/<n>`
 *   must name the descriptor table's current file. Those are opened for every read.
 * - Node opens with O_CLOEXEC: a shell launched later by the same thread inherits none of them.
 */
import fs from 'node:fs';

/** Large enough for any stat/status/syscall/schedstat/children file of a sane process; a larger file is read in full. */
const SCRATCH_BYTES = 16 * 1024;

/** One reused read buffer: every reader here is synchronous, so no two reads can interleave. */
const scratch = Buffer.allocUnsafe(SCRATCH_BYTES);

/**
 * Reads a small procfs file as text, or `undefined` when it cannot be read. open+read+close into a
 * reused buffer is ~3x cheaper than `readFileSync` (which also fstats and allocates).
 */
export function readProcText(path: string): string | undefined {
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (_vanishedOrDenied) {
    return undefined;
  }
  try {
    const length = fs.readSync(fd, scratch, 0, SCRATCH_BYTES, 0);
    if (length < SCRATCH_BYTES) return scratch.toString('utf8', 0, length);
    // Rare: a file longer than the scratch buffer (e.g. thousands of children). Read it whole.
    return fs.readFileSync(path, 'utf8');
  } catch (_vanishedOrDenied) {
    // ESRCH when the process exits between open and read; EACCES for files that check on read.
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** A reader of small `/proc` text files; `undefined` when the file vanished or cannot be read. */
export interface ProcFiles {
  /** The text of `path` now, or `undefined` when its process or thread is gone or it is unreadable. */
  read(path: string): string | undefined;
  /** Called when a sample is complete: descriptors the sample did not use may be released. */
  endSample(): void;
  /** How many held descriptors were found dead and their path reopened (grows only; 0 when none are held). */
  readonly replaced: number;
}

/** Reads every file afresh (open, read, close): for one-off reads and callers that keep no state. */
export const freshProcFiles: ProcFiles = {
  read: readProcText,
  endSample: () => undefined,
  replaced: 0,
};

/** Upper bound on descriptors one {@link HeldProcFiles} keeps; files beyond it are read afresh. */
export const MAX_HELD_FILES = 64;

/** Large enough for every file held here (a `children` file of a huge fan-out is read in full). */
const HELD_BYTES = 4 * 1024;

/**
 * Reads `/proc` files through descriptors it keeps open from one sample to the next (positioned reads
 * from offset 0), closing after each sample those that sample did not read. One per session; `close()`
 * releases them all.
 */
export class HeldProcFiles implements ProcFiles {
  /** Open descriptors by path, and whether the current sample read each. */
  private readonly held = new Map<string, { fd: number; used: boolean }>();
  private readonly buffer = Buffer.allocUnsafe(HELD_BYTES);
  private closed = false;
  private reopened = 0;

  get replaced(): number {
    return this.reopened;
  }

  /** The number of descriptors held now. */
  get size(): number {
    return this.held.size;
  }

  read(path: string): string | undefined {
    const entry = this.held.get(path);
    if (entry === undefined) return this.openAndRead(path);
    entry.used = true;
    const text = this.readHeld(entry.fd, path);
    if (text !== undefined) return text;
    // ESRCH: the task this descriptor was opened for is gone; its id may already be another's, which a
    // fresh open reads (see the top of this file).
    this.drop(path, entry.fd);
    this.reopened++;
    return this.openAndRead(path);
  }

  private openAndRead(path: string): string | undefined {
    if (this.closed || this.held.size >= MAX_HELD_FILES) return readProcText(path);
    let fd: number;
    try {
      fd = fs.openSync(path, 'r');
    } catch (_vanishedOrDenied) {
      return undefined;
    }
    this.held.set(path, { fd, used: true });
    const text = this.readHeld(fd, path);
    if (text === undefined) this.drop(path, fd);
    return text;
  }

  /** The text read through `fd` from offset 0, or `undefined` when the read fails. */
  private readHeld(fd: number, path: string): string | undefined {
    let length: number;
    try {
      length = fs.readSync(fd, this.buffer, 0, HELD_BYTES, 0);
    } catch (_vanishedOrDenied) {
      return undefined;
    }
    if (length < HELD_BYTES) return this.buffer.toString('utf8', 0, length);
    return readProcText(path); // rare: longer than the buffer; read it whole, afresh
  }

  endSample(): void {
    for (const [path, entry] of this.held) {
      if (entry.used) entry.used = false;
      else this.drop(path, entry.fd);
    }
  }

  /** Closes every held descriptor (the session is closing); later reads are fresh ones, nothing is held. */
  close(): void {
    this.closed = true;
    for (const [path, entry] of this.held) this.drop(path, entry.fd);
  }

  private drop(path: string, fd: number): void {
    this.held.delete(path);
    try {
      fs.closeSync(fd);
    } catch (_alreadyClosed) {
      // Nothing to release.
    }
  }
}
