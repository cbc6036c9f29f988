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
 * Refuses (`INVALID_CONFIG`, naming the path and its owner) a socket directory that is not a real
 * directory owned by `uid` with mode 0700. A missing directory is `'missing'`: the daemon creates it,
 * a client has no daemon to reach.
 */
export function checkSocketDirectory(socketPath: string, uid = currentUid()): 'ok' | 'missing' {
  return checkPrivateDirectory(dirname(socketPath), SOCKET_DIRECTORY, uid);
}

/** The daemon's side: creates a missing directory 0700 (its parent must exist), then checks it. */
export function prepareSocketDirectory(socketPath: string, uid = currentUid()): void {
  preparePrivateDirectory(dirname(socketPath), SOCKET_DIRECTORY, uid);
}
