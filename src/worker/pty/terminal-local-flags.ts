/**
 * Reads how a terminal's program takes its input, from the termios local flags of the session's pty
 * master (Node has no tcgetattr; agent-pty's pty addon reads them, see pty-binding.ts). On Linux the
 * master reports what the program on the slave side set. For the watcher of SPEC §13: a line editor
 * (bash's readline, zsh's ZLE, a REPL) turns `canonical` off; `read x` leaves both on; a password
 * prompt (`read -s`, ssh, sudo) keeps `canonical` on and turns `echo` off.
 */
import { constants as osConstants } from 'node:os';
import { ptyBinding } from './pty-binding.js';

/** ICANON and ECHO of a terminal's local flags. */
export interface TerminalLocalFlags {
  /** ICANON: the kernel assembles lines (the program reads whole lines, with line editing by the tty). */
  canonical: boolean;
  /** ECHO: the kernel echoes what is typed. */
  echo: boolean;
}

/** An errno name for the native error's number (e.g. `EBADF`), when the platform has one. */
function errnoName(errno: number): string | undefined {
  return Object.entries(osConstants.errno).find(([, value]) => value === errno)?.[0];
}

/**
 * The local flags of the terminal `fd` refers to (a pty master or slave). One `tcgetattr(3)`, no
 * allocation beyond the result. Throws an Error whose `code` is the errno name (`EBADF` for a closed
 * descriptor, `ENOTTY` for one that is no terminal); SPAWN_FAILED when the addon cannot load.
 */
export function readTerminalLocalFlags(fd: number): TerminalLocalFlags {
  const { addon } = ptyBinding();
  try {
    return addon.localFlags(fd);
  } catch (error) {
    const errno = (error as { errno?: unknown }).errno;
    if (typeof errno !== 'number') throw error;
    const code = errnoName(errno) ?? `errno ${errno}`;
    throw Object.assign(new Error(`tcgetattr(${fd}) failed: ${code}`, { cause: error }), { code });
  }
}
