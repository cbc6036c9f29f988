/**
 * agent-pty's per-user runtime directory and the one rule for it (SPEC §12, §13, docs/daemon.md): a
 * real directory (not a symlink), owned by this uid, mode 0700. What lives there — the daemon's socket,
 * a watch page's link — is reachable only by its owner because of that rule, so every user of the
 * directory checks it with `lstat` before trusting it: another local user can pre-create
 * `/tmp/agent-pty-$UID` (or a symlink of that name) to capture the socket or read the link.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { TerminalError } from '../../shared/errors.js';

/** The only mode the directory may have: its owner's alone. */
export const PRIVATE_DIRECTORY_MODE = 0o700;

/** How a refusal names the directory and what its misuse would allow (the messages the user reads). */
export interface PrivateDirectoryRole {
  /** `the daemon's socket directory`. */
  what: string;
  /** What another user gains: `to capture the socket`. */
  threat: string;
  /** What to do: `Remove it, or pass --socket in a directory only you can reach`. */
  remedy: string;
}

/** This process's uid (Linux and macOS have one). */
export function currentUid(): number {
  return process.getuid?.() ?? 0;
}

/** `$XDG_RUNTIME_DIR/agent-pty`, else `/tmp/agent-pty-$UID`. */
export function agentPtyRuntimeDirectory(env: NodeJS.ProcessEnv = process.env, uid = currentUid()): string {
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime?.startsWith('/')) return join(runtime, 'agent-pty');
  return join('/tmp', `agent-pty-${uid}`);
}

/**
 * Refuses (`INVALID_CONFIG`, naming the path and its owner) a directory that is not a real directory
 * owned by `uid` with mode 0700; `'missing'` when there is none.
 */
export function checkPrivateDirectory(
  dir: string,
  role: PrivateDirectoryRole,
  uid = currentUid(),
): 'ok' | 'missing' {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw new TerminalError(
      'INVALID_CONFIG',
      `cannot check ${role.what} ${dir}: ${(error as Error).message}`,
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
    `refusing ${role.what} ${dir} (owner uid ${stat.uid}): it ${problem}; another user may have created it ${role.threat}. ${role.remedy}`,
  );
}

/** Creates a missing directory 0700 (its parent must exist), then checks it like any other. */
export function preparePrivateDirectory(dir: string, role: PrivateDirectoryRole, uid = currentUid()): void {
  if (checkPrivateDirectory(dir, role, uid) === 'ok') return;
  try {
    mkdirSync(dir, { mode: PRIVATE_DIRECTORY_MODE });
  } catch (error) {
    // Another process creating it at the same time: checked below like any other.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new TerminalError(
        'INVALID_CONFIG',
        `cannot create ${role.what} ${dir}: ${(error as Error).message}`,
      );
    }
  }
  checkPrivateDirectory(dir, role, uid);
}
