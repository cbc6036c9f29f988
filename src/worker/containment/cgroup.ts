/**
 * A cgroup v2 per session (SPEC §4.6 "Containment first"): a container the kernel kills as a whole,
 * so a descendant that daemonizes (new session, re-parented to init) still dies with its session.
 *
 * Layout: `<home>/agent-pty.<pid>.<starttime>/session-<thread>-<id>`, where `<home>` is this
 * process's own cgroup (found through /proc/self/mountinfo and /proc/self/cgroup, never assumed to be
 * /sys/fs/cgroup) or the configured `cgroupRoot`, and `<pid>.<starttime>` names the engine process, so
 * a successor can tell that the owner of a leftover directory is dead and sweep it.
 *
 * Detect, don't assume: a home is used only once a probe proved that the engine's cgroup can be
 * created there, has `cgroup.kill`, `cgroup.freeze` and `cgroup.events`, and can be joined by a process
 * the way the session launcher joins it. Otherwise sessions fall back to process-tree teardown.
 */
import { execFile } from 'node:child_process';
import {
  accessSync,
  existsSync,
  constants as fsConstants,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { threadId } from 'node:worker_threads';
import { engineCgroupName, engineOfCgroupName } from '../../shared/engine-cgroup.js';
import { TerminalError } from '../../shared/errors.js';
import { identityOf, isAlive } from '../proc/proc-probe.js';
import { DEATH_POLL_MS } from './teardown.js';

/** statfs(2) magic of a cgroup v2 filesystem: the home must be one before anything is written there. */
const CGROUP2_SUPER_MAGIC = 0x63677270;
/** Kernel files a session cgroup needs: join, freeze, kill, and the populated flag. */
const REQUIRED_FILES = ['cgroup.procs', 'cgroup.freeze', 'cgroup.kill', 'cgroup.events'];
/** The shell interpreter of the launcher (POSIX sh; `echo` is a builtin, so the writer is the shell itself). */
const LAUNCHER_SHELL = '/bin/sh';
/** Exit status of a launcher that could not join its cgroup (125: like env(1), "the wrapper failed"). */
export const JOIN_FAILED_EXIT_CODE = 125;
/**
 * The launcher: moves itself into the session cgroup (writing 0 to `cgroup.procs` moves the writing
 * process), then execs the session argv in place, so the pty child keeps its pid and nothing it forks
 * can start outside. A failed join exits with {@link JOIN_FAILED_EXIT_CODE} instead of running the argv.
 */
const LAUNCHER_SCRIPT = `echo 0 > "$1" || exit ${JOIN_FAILED_EXIT_CODE}; shift; exec "$@"`;
/** `$0` of the launcher, as `ps` shows it for the instant before the exec. */
const LAUNCHER_NAME = 'agent-pty-launch';
/** Bound on a killed cgroup emptying: longer means a process stuck in uninterruptible sleep (D). */
const CGROUP_EMPTY_TIMEOUT_MS = 2_000;
/** Attempts at creating a child cgroup while another thread may remove an empty engine directory. */
const CREATE_ATTEMPTS = 3;

/** Where this engine thread creates session cgroups; `undefined` from {@link prepareCgroupHome} when nowhere. */
export class CgroupHome {
  /** @param engineDir `<home>/agent-pty.<pid>.<starttime>` of this process. */
  constructor(readonly engineDir: string) {}

  /** Creates the cgroup of session `id`, or `undefined` when that fails (the session falls back). */
  createSession(id: string): SessionCgroup | undefined {
    const name = `session-${threadId}-${id.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
    const dir = makeChildCgroup(this.engineDir, name);
    return dir === undefined ? undefined : new SessionCgroup(dir, this.engineDir);
  }
}

/** The cgroup of one session. */
export class SessionCgroup {
  constructor(
    /** Absolute path of the cgroup directory. */
    readonly dir: string,
    private readonly engineDir: string,
  ) {}

  /** `argv` wrapped in the launcher that joins this cgroup before it execs `argv`. */
  launcherArgv(argv: readonly string[]): string[] {
    return launcherArgv(this.dir, argv);
  }

  /**
   * Freezes the cgroup, kills everything in it (`cgroup.kill`: the kernel SIGKILLs every member and
   * every process forked meanwhile), and waits until it is empty. Throws CLEANUP_FAILED after
   * `timeoutMs`. Safe to repeat; a removed cgroup counts as empty.
   */
  async kill(timeoutMs = CGROUP_EMPTY_TIMEOUT_MS): Promise<void> {
    await killCgroup(this.dir, timeoutMs);
  }

  /** Removes the (empty) cgroup, then the engine directory if no other session uses it. Idempotent. */
  remove(): void {
    try {
      rmdirSync(this.dir);
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') {
        throw new TerminalError('CLEANUP_FAILED', `could not remove the session cgroup ${this.dir}`, {
          cause: error,
        });
      }
    }
    removeIfEmpty(this.engineDir);
  }
}

/**
 * Finds (or takes `rootOverride` as) the cgroup home, sweeps cgroups left by dead engine processes
 * there, and probes it. Resolves `undefined` when sessions cannot get a cgroup; never rejects.
 */
export async function prepareCgroupHome(rootOverride?: string): Promise<CgroupHome | undefined> {
  try {
    const home = rootOverride ?? ownCgroupDir();
    if (home === undefined || !isCgroup2(home)) return undefined;
    const self = identityOf(process.pid);
    if (self === undefined) return undefined;
    await sweepStaleCgroups(home);
    const engineDir = path.join(home, engineCgroupName(self));
    if (await probe(engineDir)) return new CgroupHome(engineDir);
    removeIfEmpty(engineDir);
    return undefined;
  } catch {
    // Anything unexpected about cgroupfs means: no container, process-tree teardown.
    return undefined;
  }
}

/**
 * Kills and removes every `agent-pty.<pid>.<starttime>` directory under `home` whose engine process
 * is gone (pid not alive with that start time). A live engine's directory is never touched.
 */
async function sweepStaleCgroups(home: string): Promise<void> {
  for (const entry of listDirs(home)) {
    const owner = engineOfCgroupName(entry);
    if (owner === undefined || isAlive(owner) === 'alive') continue;
    const dir = path.join(home, entry);
    try {
      // One write kills the whole subtree: every session cgroup of the dead engine.
      await killCgroup(dir, CGROUP_EMPTY_TIMEOUT_MS);
      for (const child of listDirs(dir)) rmdirIgnoringGone(path.join(dir, child));
      rmdirIgnoringGone(dir);
    } catch {
      // A concurrent sweep (another engine thread) or a stuck process: the next start tries again.
    }
  }
}

/**
 * This process's own cgroup v2 directory: the `0::<path>` line of /proc/self/cgroup, under the
 * cgroup2 mount (from /proc/self/mountinfo) whose root contains it. `undefined` without one.
 */
function ownCgroupDir(): string | undefined {
  const own = readText('/proc/self/cgroup')
    ?.split('\n')
    .find((line) => line.startsWith('0::'))
    ?.slice(3);
  if (own === undefined || !own.startsWith('/')) return undefined; // e.g. `/..` outside our namespace
  for (const mount of cgroup2Mounts()) {
    if (mount.root === '/') return path.join(mount.point, own);
    if (own === mount.root || own.startsWith(`${mount.root}/`)) {
      return path.join(mount.point, own.slice(mount.root.length));
    }
  }
  return undefined;
}

/** A cgroup2 mount: its root within the hierarchy and where it is mounted. */
interface Cgroup2Mount {
  root: string;
  point: string;
}

/** cgroup2 mounts of /proc/self/mountinfo (`id parent dev root point opts [tags] - fstype src opts`). */
function cgroup2Mounts(): Cgroup2Mount[] {
  const mounts: Cgroup2Mount[] = [];
  for (const line of readText('/proc/self/mountinfo')?.split('\n') ?? []) {
    const fields = line.split(' ');
    const separator = fields.indexOf('-');
    if (separator < 6 || fields[separator + 1] !== 'cgroup2') continue;
    mounts.push({ root: unescapeMountField(fields[3]!), point: unescapeMountField(fields[4]!) });
  }
  return mounts;
}

/** mountinfo escapes space, tab, newline and backslash as `\ooo` octal. */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** Whether `dir` is a directory of a cgroup v2 filesystem. */
function isCgroup2(dir: string): boolean {
  try {
    return statfsSync(dir).type === CGROUP2_SUPER_MAGIC;
  } catch {
    return false;
  }
}

/**
 * Proves the home usable: the engine directory (created if needed) has every required kernel file,
 * and a launcher run with a no-op argv joins it and exits 0. The probe joins the engine directory
 * itself rather than a cgroup of its own, so a thread terminated mid-probe leaves no directory behind
 * but its (empty) engine directory, which the next close in this process or our successor's sweep
 * removes.
 */
async function probe(engineDir: string): Promise<boolean> {
  for (let attempt = 1; attempt <= CREATE_ATTEMPTS; attempt++) {
    try {
      mkdirSync(engineDir, { recursive: true });
    } catch {
      return false;
    }
    if (!REQUIRED_FILES.every((name) => isWritable(path.join(engineDir, name)))) return false;
    const [file, ...args] = launcherArgv(engineDir, [LAUNCHER_SHELL, '-c', ':']);
    const joined = await new Promise<boolean>((resolve) => {
      execFile(file!, args, (error) => resolve(error === null));
    });
    if (joined) return true;
    // A close on another thread removed the then-empty engine directory before the join: retry.
    if (existsSync(engineDir)) return false;
  }
  return false;
}

/** `argv` wrapped in the launcher that joins the cgroup `dir` before it execs `argv`. */
function launcherArgv(dir: string, argv: readonly string[]): string[] {
  return [LAUNCHER_SHELL, '-c', LAUNCHER_SCRIPT, LAUNCHER_NAME, path.join(dir, 'cgroup.procs'), ...argv];
}

/** Creates `<parent>/<name>` (and `parent` if needed); `undefined` on failure. */
function makeChildCgroup(parent: string, name: string): string | undefined {
  const dir = path.join(parent, name);
  for (let attempt = 1; attempt <= CREATE_ATTEMPTS; attempt++) {
    try {
      mkdirSync(parent, { recursive: true });
      mkdirSync(dir);
      return dir;
    } catch (error) {
      // ENOENT: another thread removed the empty engine directory between our two mkdirs; retry.
      if (errorCode(error) !== 'ENOENT') return undefined;
    }
  }
  return undefined;
}

/** Freeze, `cgroup.kill`, wait for `populated 0` (bounded). A missing cgroup is already empty. */
async function killCgroup(dir: string, timeoutMs: number): Promise<void> {
  const events = path.join(dir, 'cgroup.events');
  if (populated(events) === false) return;
  // Freeze first (SPEC §4.6): nothing in the cgroup runs while the kill goes out. cgroup.kill alone is
  // already race-free against forks; the freeze also stops a process from reacting at all.
  writeIfPresent(path.join(dir, 'cgroup.freeze'), '1');
  writeIfPresent(path.join(dir, 'cgroup.kill'), '1');
  const deadline = performance.now() + timeoutMs;
  // SIGKILL usually lands well within a millisecond: start polling fast so a close does not wait a
  // full period for nothing.
  let period = 1;
  while (populated(events) === true) {
    if (performance.now() >= deadline) {
      const members = readText(path.join(dir, 'cgroup.procs'))?.trim().split('\n').join(', ');
      throw new TerminalError(
        'CLEANUP_FAILED',
        `cgroup ${dir} still holds processes ${timeoutMs} ms after cgroup.kill: ${members}`,
      );
    }
    await delay(period);
    period = Math.min(period * 2, DEATH_POLL_MS); // polls start at 1 ms and double
  }
}

/** `populated` of a `cgroup.events` file; `false` when the cgroup is gone, `undefined` when unreadable. */
function populated(events: string): boolean | undefined {
  let text: string;
  try {
    text = readFileSync(events, 'utf8');
  } catch (error) {
    return errorCode(error) === 'ENOENT' ? false : undefined;
  }
  const line = text.split('\n').find((entry) => entry.startsWith('populated '));
  return line === undefined ? undefined : line.endsWith(' 1');
}

/** Writes `value` to a kernel file; a vanished cgroup (ENOENT) is not an error. */
function writeIfPresent(file: string, value: string): void {
  try {
    writeFileSync(file, value);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

/** Removes an engine directory once its last session cgroup is gone (EBUSY/ENOTEMPTY: still in use). */
function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // In use by another session or thread, or already gone.
  }
}

/** rmdir that treats an already removed directory as success. */
function rmdirIgnoringGone(dir: string): void {
  try {
    rmdirSync(dir);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

/** Subdirectories of `dir` (empty when unreadable). */
function listDirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}

/** Whether `file` exists and is writable by us. */
function isWritable(file: string): boolean {
  try {
    accessSync(file, fsConstants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}
