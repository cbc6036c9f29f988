/**
 * Opens a session's terminal through node-pty and refuses one it must not use: a master descriptor
 * that node-pty did not expose, or one that is inheritable (any later shell could type into this
 * session). The spawn itself is agent-pty's patched fork (pty-binding.ts,
 * docs/decisions/0003-node-pty-patch.md).
 */
import { readFileSync } from 'node:fs';
import type { IPty, IPtyForkOptions } from 'node-pty';
import { TerminalError } from '../../shared/errors.js';
import type { PtyBinding } from './pty-binding.js';

/** O_CLOEXEC as `/proc/<pid>/fdinfo` prints it (octal `flags:` field): set on the master of the patched fork. */
const FDINFO_CLOEXEC = 0o2000000;
/** O_NONBLOCK in the same field: node-pty sets it on the master, and the writer relies on it to write synchronously. */
const FDINFO_NONBLOCK = 0o4000;

/**
 * The parts of node-pty's UnixTerminal we rely on beyond its typings: `fd` and `ptsName` are public
 * getters there; its `close` event fires when the master fd is closed (before `exit`).
 */
interface UnixPtyExtras {
  fd?: number;
  ptsName?: string;
  on?: (event: 'close', listener: () => void) => void;
}

/** A terminal opened and checked: node-pty's handle and what the session needs of its master. */
export interface SpawnedPty {
  term: IPty;
  /** The master descriptor (close-on-exec). */
  fd: number;
  /** The slave's path (`/dev/pts/N`). */
  ptsName: string;
  /** Whether the master is non-blocking (node-pty sets it; writes are then synchronous). */
  nonBlocking: boolean;
  /** Calls `listener` once node-pty closed the master (its number may then be another file's). */
  onMasterClosed(listener: () => void): void;
}

/**
 * Spawns `file` with `args` on a new terminal and checks its master. Throws `SPAWN_FAILED` (with the
 * spawned process killed) when node-pty could not spawn, did not expose the master, or left it
 * inheritable.
 */
export function spawnPty(
  nodePty: PtyBinding['nodePty'],
  file: string,
  args: string[],
  options: IPtyForkOptions,
  what: string,
): SpawnedPty {
  let term: IPty;
  try {
    term = nodePty.spawn(file, args, options);
  } catch (error) {
    throw new TerminalError('SPAWN_FAILED', `could not start ${what}: ${String(error)}`, { cause: error });
  }
  const extras = term as unknown as UnixPtyExtras;
  if (typeof extras.fd !== 'number' || typeof extras.ptsName !== 'string') {
    term.kill('SIGKILL');
    throw new TerminalError('SPAWN_FAILED', 'node-pty did not expose the terminal fd (unsupported platform)');
  }
  const flags = fdStatusFlags(extras.fd);
  if (flags === undefined || (flags & FDINFO_CLOEXEC) === 0) {
    // node-pty's own fork leaves the master inheritable, so every later shell could type into this
    // session (docs/decisions/0003-node-pty-patch.md); pty-binding.ts replaced it with the patched one,
    // so this holds only if something put another fork back. Fail closed rather than leak it.
    term.kill('SIGKILL');
    throw new TerminalError(
      'SPAWN_FAILED',
      'agent-pty refused the terminal it opened: its pty master is not close-on-exec, so other shells ' +
        "could write to it. node-pty's own spawn ran instead of agent-pty's patched one (another copy " +
        'of node-pty in this thread, or a changed node-pty). Reinstall agent-pty with the node-pty ' +
        'version it depends on (`npm rebuild node-pty agent-pty` rebuilds both)',
    );
  }
  return {
    term,
    fd: extras.fd,
    ptsName: extras.ptsName,
    nonBlocking: (flags & FDINFO_NONBLOCK) !== 0,
    onMasterClosed: (listener) => extras.on?.('close', listener),
  };
}

/** The status flags of `fd` of this process (`O_*`), from `/proc/self/fdinfo`; undefined if unreadable. */
function fdStatusFlags(fd: number): number | undefined {
  let info: string;
  try {
    info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
  } catch {
    return undefined;
  }
  const flags = /^flags:\s*([0-7]+)$/m.exec(info)?.[1];
  return flags === undefined ? undefined : Number.parseInt(flags, 8);
}
