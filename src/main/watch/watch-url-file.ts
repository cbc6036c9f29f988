/**
 * The file `mcp --watch` leaves the page's link in (its stdout is the MCP channel, so the link cannot
 * go there): `$XDG_RUNTIME_DIR/agent-pty/watch-<pid>.url`, else `/tmp/agent-pty-$UID/watch-<pid>.url`
 * — the directory the daemon's socket uses, with the same rule: a real directory, owned by this uid,
 * mode 0700 (another user can pre-create `/tmp/agent-pty-$UID` to read the link), the file 0600.
 */
import { readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  agentPtyRuntimeDirectory,
  type PrivateDirectoryRole,
  preparePrivateDirectory,
} from '../worlds/private-directory.js';

/** Only its owner may read the file. */
const PRIVATE_FILE_MODE = 0o600;

/** How a refusal of the link's directory reads. */
const LINK_DIRECTORY: PrivateDirectoryRole = {
  what: "the watch page link's directory",
  threat: 'to read the link',
  remedy: 'Remove it and start again',
};

/** The per-user runtime directory of agent-pty (created 0700 when missing). */
export function runtimeDirectory(env: NodeJS.ProcessEnv = process.env): string {
  return agentPtyRuntimeDirectory(env);
}

/** Writes `url` to `watch-<pid>.url` (0600) in the runtime directory; returns the path. */
export function writeWatchUrlFile(
  url: string,
  env: NodeJS.ProcessEnv = process.env,
  pid = process.pid,
): string {
  const dir = runtimeDirectory(env);
  preparePrivateDirectory(dir, LINK_DIRECTORY);
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
