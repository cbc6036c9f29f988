/**
 * Where the daemon's socket lives and why only its owner can reach it (SPEC §12, docs/daemon.md).
 *
 * Node cannot read a Unix socket peer's credentials (no SO_PEERCRED), so the protection is the
 * filesystem's: connecting needs search permission on every directory of the path and write permission
 * on the socket. The socket's directory is a real directory (not a symlink), owned by this uid, mode
 * 0700: no other uid (root aside) can reach the socket inside it. Both ends check it with `lstat`
 * before listening or connecting — another local user can pre-create `/tmp/agent-pty-$UID` (or a
 * symlink of that name) to capture the socket, and that must be refused, never used.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TerminalError } from '../../shared/errors.js';

/** File name of the socket in its directory. */
export const SOCKET_FILE = 'engine.sock';

/** The only mode the socket's directory may have: its owner's alone. */
const PRIVATE_DIRECTORY_MODE = 0o700;

/** The default socket: `$XDG_RUNTIME_DIR/agent-pty/engine.sock`, else `/tmp/agent-pty-$UID/engine.sock`. */
export function defaultSocketPath(env: NodeJS.ProcessEnv = process.env, uid = currentUid()): string {
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime?.startsWith('/')) return join(runtime, 'agent-pty', SOCKET_FILE);
  return join('/tmp', `agent-pty-${uid}`, SOCKET_FILE);
}

/** This process's uid (Linux and macOS have one). */
export function currentUid(): number {
  return process.getuid?.() ?? 0;
}

/**
 * Refuses (`INVALID_CONFIG`, naming the path and its owner) a socket directory that is not a real
 * directory owned by `uid` with mode 0700. A missing directory is `'missing'`: the daemon creates it,
 * a client has no daemon to reach.
 */
export function checkSocketDirectory(socketPath: string, uid = currentUid()): 'ok' | 'missing' {
  const dir = dirname(socketPath);
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw new TerminalError(
      'INVALID_CONFIG',
      `cannot check the daemon's socket directory ${dir}: ${(error as Error).message}`,
    );
  }
  const problem = stat.isSymbolicLink()
    ? 'is a symbolic link'
    : !stat.isDirectory()
      ? 'is not a directory'
      : stat.uid !== uid
        ? `is owned by uid ${stat.uid}, not by this user (uid ${uid})`
        : (stat.mode & 0o777) !== PRIVATE_DIRECTORY_MODE
          ? `has mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')}, not 0700`
          : undefined;
  if (problem === undefined) return 'ok';
  throw new TerminalError(
    'INVALID_CONFIG',
    `refusing the daemon's socket directory ${dir} (owner uid ${stat.uid}): it ${problem}; another user may have created it to capture the socket. Remove it, or pass --socket in a directory only you can reach`,
  );
}

/** The daemon's side: creates a missing directory 0700 (its parent must exist), then checks it. */
export function prepareSocketDirectory(socketPath: string, uid = currentUid()): void {
  if (checkSocketDirectory(socketPath, uid) === 'missing') {
    try {
      mkdirSync(dirname(socketPath), { mode: PRIVATE_DIRECTORY_MODE });
    } catch (error) {
      // Another daemon starting at the same time created it: checked below like any other.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new TerminalError(
          'INVALID_CONFIG',
          `cannot create the daemon's socket directory ${dirname(socketPath)}: ${(error as Error).message}`,
        );
      }
    }
    checkSocketDirectory(socketPath, uid);
  }
}
