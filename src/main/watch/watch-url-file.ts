/**
 * The file `mcp --watch` leaves the page's link in (its stdout is the MCP channel, so the link cannot
 * go there): `$XDG_RUNTIME_DIR/agent-pty/watch-<pid>.url`, else `/tmp/agent-pty-$UID/watch-<pid>.url`
 * — the directory the daemon's socket uses, with the same rule: a real directory, owned by this uid,
 * mode 0700 (another user can pre-create `/tmp/agent-pty-$UID` to read the link), the file 0600.
 */
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { TerminalError } from '../../shared/errors.js';

/** Only its owner may enter the directory or read the file. */
const PRIVATE_DIRECTORY_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;

/** The per-user runtime directory of agent-pty (created 0700 when missing). */
export function runtimeDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime?.startsWith('/')) return join(runtime, 'agent-pty');
  return join('/tmp', `agent-pty-${process.getuid?.() ?? 0}`);
}

/** Refuses a directory that is not a real directory owned by this uid with mode 0700; creates a missing one. */
export function preparePrivateDirectory(dir: string): void {
  try {
    mkdirSync(dir, { mode: PRIVATE_DIRECTORY_MODE });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new TerminalError('INVALID_CONFIG', `cannot create ${dir}: ${(error as Error).message}`);
    }
  }
  const stat = lstatSync(dir);
  const uid = process.getuid?.() ?? 0;
  const problem = stat.isSymbolicLink()
    ? 'is a symbolic link'
    : !stat.isDirectory()
      ? 'is not a directory'
      : stat.uid !== uid
        ? `is owned by uid ${stat.uid}, not by this user (uid ${uid})`
        : (stat.mode & 0o777) !== PRIVATE_DIRECTORY_MODE
          ? `has mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')}, not 0700`
          : undefined;
  if (problem !== undefined) {
    throw new TerminalError(
      'INVALID_CONFIG',
      `refusing ${dir} (owner uid ${stat.uid}): it ${problem}; another user may have created it. Remove it and start again`,
    );
  }
}

/** Writes `url` to `watch-<pid>.url` (0600) in the runtime directory; returns the path. */
export function writeWatchUrlFile(
  url: string,
  env: NodeJS.ProcessEnv = process.env,
  pid = process.pid,
): string {
  const dir = runtimeDirectory(env);
  preparePrivateDirectory(dir);
  const file = join(dir, `watch-${pid}.url`);
  removeWatchUrlFile(file); // a dead process's file of the same pid: never reuse its mode
  writeFileSync(file, `${url}\n`, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  return file;
}

/** Removes the file (at the server's close); a missing one is fine. */
export function removeWatchUrlFile(file: string): void {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** The newest watch URL file of a live server in the runtime directory, for `attach`; undefined when none. */
export function newestWatchUrlFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = runtimeDirectory(env);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  const live = names
    .map((name) => /^watch-(\d+)\.url$/.exec(name))
    .filter((match): match is RegExpExecArray => match !== null && processAlive(Number(match[1])))
    .map((match) => join(dir, match[0]));
  return live.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
}

/** Reads the URL in a watch URL file. */
export function readWatchUrlFile(file: string): string {
  return readFileSync(file, 'utf8').trim();
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
