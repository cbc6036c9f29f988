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
import { dirname, join } from 'node:path';
import { TerminalError } from '../../shared/errors.js';
import {
  agentPtyRuntimeDirectory,
  checkPrivateDirectory,
  currentUid,
  type PrivateDirectoryRole,
  preparePrivateDirectory,
} from './private-directory.js';

export { currentUid } from './private-directory.js';

/** File name of the socket in its directory. */
export const SOCKET_FILE = 'engine.sock';

/** How a refusal of the socket's directory reads. */
const SOCKET_DIRECTORY: PrivateDirectoryRole = {
  what: "the daemon's socket directory",
  threat: 'to capture the socket',
  remedy: 'Remove it, or pass --socket in a directory only you can reach',
};

/** The default socket: `$XDG_RUNTIME_DIR/agent-pty/engine.sock`, else `/tmp/agent-pty-$UID/engine.sock`. */
export function defaultSocketPath(env: NodeJS.ProcessEnv = process.env, uid = currentUid()): string {
  return join(agentPtyRuntimeDirectory(env, uid), SOCKET_FILE);
}

/**
 * Bytes a socket path may have: `sun_path` holds 108 bytes on Linux (104 on macOS and the BSDs),
 * one of them the terminating NUL.
 */
export const SOCKET_PATH_MAX_BYTES = process.platform === 'linux' ? 107 : 103;

/**
 * Refuses (`INVALID_CONFIG`, naming the limit) a socket path longer than `sun_path` holds: bound or
 * connected, it would be cut short to a path outside the directory this module checked.
 */
export function checkSocketPathLength(socketPath: string): void {
  const bytes = Buffer.byteLength(socketPath);
  if (bytes > SOCKET_PATH_MAX_BYTES) {
    throw new TerminalError(
      'INVALID_CONFIG',
      `the socket path ${socketPath} is ${bytes} bytes; a Unix socket path may have at most ${SOCKET_PATH_MAX_BYTES} (sun_path); pass a shorter --socket`,
    );
  }
}

/**
 * Refuses (`INVALID_CONFIG`, naming the path and its owner) a socket directory that is not a real
 * directory owned by `uid` with mode 0700. A missing directory is `'missing'`: the daemon creates it,
 * a client has no daemon to reach. A path too long for `sun_path` is refused first.
 */
export function checkSocketDirectory(socketPath: string, uid = currentUid()): 'ok' | 'missing' {
  checkSocketPathLength(socketPath);
  return checkPrivateDirectory(dirname(socketPath), SOCKET_DIRECTORY, uid);
}

/** The daemon's side: refuses a path too long for `sun_path`, creates a missing directory 0700 (its parent must exist), then checks it. */
export function prepareSocketDirectory(socketPath: string, uid = currentUid()): void {
  checkSocketPathLength(socketPath);
  preparePrivateDirectory(dirname(socketPath), SOCKET_DIRECTORY, uid);
}
