/**
 * A cgroup v2 per session (SPEC §4.6 "Containment first"): a container the kernel kills as a whole,
 * so a descendant that daemonizes (new session, re-parented to init) still dies with its session.
 * Where the v2 tree offers the `memory`, `pids` and `cpu` controllers, the same cgroup carries the
 * session's limits (SPEC §4.8; session-cgroups.ts decides which hierarchy enforces which limit).
 *
 * Layout: `<home>/agent-pty.<pid>.<starttime>/engine-<key>/session-<thread>-<id>`, where `<home>` is
 * this process's own cgroup (found through /proc/self/mountinfo and /proc/self/cgroup, never assumed
 * to be /sys/fs/cgroup) or the configured `cgroupRoot`, `<pid>.<starttime>` names the engine process,
 * so a successor can tell that the owner of a leftover directory is dead and sweep it, and `<key>`
 * one engine of that process, whose sessions share its memory cap (`engineMemoryBytes`).
 *
 * Controllers: cgroup v2 enables a controller for children only in a cgroup that holds no processes
 * (the "no internal process" rule; the root is exempt). So where the engine's cgroup holds the engine
 * process and nothing else, the engine moves itself into a leaf `<home>/engine` and enables the
 * controllers in `<home>`; where other processes share it, or it is not delegated to us, the limits
 * stay unenforced by v2, with the reason.
 *
 * Detect, don't assume: a home is used only once a probe proved that the engine's cgroup can be
 * created there, has `cgroup.kill`, `cgroup.freeze` and `cgroup.events`, and can be joined by a process
 * the way the session launcher joins it. Otherwise sessions fall back to process-tree teardown.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, statfsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { threadId } from 'node:worker_threads';
import {
  detectCgroupLayout,
  LIMIT_CONTROLLERS,
  type LimitController,
} from '../../shared/cgroup-hierarchy.js';
import { engineCgroupName } from '../../shared/engine-cgroup.js';
import { TerminalError } from '../../shared/errors.js';
import { delay } from '../../shared/lifecycle.js';
import { identityOf } from '../proc/proc-probe.js';
import {
  errorCode,
  isWritable,
  membersOf,
  readText,
  removeIfEmpty,
  removeTree,
  staleEngineDirs,
  writeIfPresent,
} from './cgroup-fs.js';
import { launcherArgv } from './cgroup-launcher.js';
import { writeMemoryLimit } from './limit-files.js';
import { DEATH_POLL_MS } from './teardown.js';

/** statfs(2) magic of a cgroup v2 filesystem: the home must be one before anything is written there. */
const CGROUP2_SUPER_MAGIC = 0x63677270;
/** Kernel files a session cgroup needs: join, freeze, kill, and the populated flag. */
const REQUIRED_FILES = ['cgroup.procs', 'cgroup.freeze', 'cgroup.kill', 'cgroup.events'];
/** The shell the probe runs under the launcher: exits at once. */
const PROBE_ARGV = ['/bin/sh', '-c', ':'];
/** The leaf the engine process moves into so that its own cgroup can enable controllers (SPEC §4.8). */
export const ENGINE_LEAF = 'engine';
/** Bound on a killed cgroup emptying: longer means a process stuck in uninterruptible sleep (D). */
const CGROUP_EMPTY_TIMEOUT_MS = 2_000;
/** Attempts at creating a child cgroup while another thread may remove an empty engine directory. */
const CREATE_ATTEMPTS = 3;
/** How to get the controllers where they are missing (docs/teardown.md "Limits"). */
export const DELEGATION_REMEDY =
  'run the engine in a cgroup of its own with the controllers delegated, e.g. `systemd-run --user -p Delegate=yes --scope <command>` (docs/teardown.md)';

/** What a thread's cgroup v2 home is made from (the engine's options). */
export interface CgroupHomeOptions {
  /** Config `cgroupRoot`: a v2 directory to use instead of the process's own cgroup. */
  rootOverride?: string;
  /** This engine's key: its sessions live under `engine-<key>`. */
  engineKey: string;
  /** Memory cap of all sessions of this engine, written where v2 enforces memory. */
  engineMemoryBytes: number;
}

/** Where this engine thread creates session cgroups; `undefined` from {@link prepareCgroupHome} when nowhere. */
export class CgroupHome {
  constructor(
    /** `<home>/agent-pty.<pid>.<starttime>` of this process. */
    readonly processDir: string,
    /** `<processDir>/engine-<key>` of this engine. */
    readonly engineDir: string,
    /** The limit controllers enabled for session cgroups here. */
    readonly controllers: readonly LimitController[],
    /** Why each limit controller that is not enabled here is not. */
    readonly unavailable: ReadonlyMap<LimitController, string>,
    private readonly engineMemoryBytes: number,
  ) {}

  /** Creates the cgroup of session `id`, or `undefined` when that fails (the session falls back). */
  createSession(id: string): SessionCgroup | undefined {
    const name = `session-${threadId}-${id.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
    for (let attempt = 1; attempt <= CREATE_ATTEMPTS; attempt++) {
      try {
        this.ensureEngineDir();
        mkdirSync(path.join(this.engineDir, name));
        return new SessionCgroup(path.join(this.engineDir, name), this);
      } catch (error) {
        // ENOENT: another thread removed the empty engine directory between our two mkdirs; retry.
        if (errorCode(error) !== 'ENOENT') return undefined;
      }
    }
    return undefined;
  }

  /** Removes the engine's directories once no session uses them. */
  removeIfUnused(): void {
    removeIfEmpty(this.engineDir);
    removeIfEmpty(this.processDir);
  }

  /**
   * Creates the engine directory when it is missing (the last session's close removed it) and gives it
   * what every new one gets: the controllers for its children and the engine's memory cap.
   */
  ensureEngineDir(): void {
    if (existsSync(this.engineDir)) return;
    mkdirSync(this.processDir, { recursive: true });
    enableControllers(this.processDir, this.controllers);
    mkdirSync(this.engineDir, { recursive: true });
    enableControllers(this.engineDir, this.controllers);
    if (this.controllers.includes('memory')) writeMemoryLimit(this.engineDir, 2, this.engineMemoryBytes);
  }
}

/** The cgroup v2 of one session. */
export class SessionCgroup {
  constructor(
    /** Absolute path of the cgroup directory. */
    readonly dir: string,
    private readonly home: Pick<CgroupHome, 'removeIfUnused'>,
  ) {}

  /** Its `cgroup.procs`, which the launcher writes to join it. */
  get procsFile(): string {
    return path.join(this.dir, 'cgroup.procs');
  }

  /**
   * Freezes the cgroup, kills everything in it (`cgroup.kill`: the kernel SIGKILLs every member and
   * every process forked meanwhile), and waits until it is empty. Throws CLEANUP_FAILED after
   * `timeoutMs`. Safe to repeat; a removed cgroup counts as empty.
   */
  async kill(timeoutMs = CGROUP_EMPTY_TIMEOUT_MS): Promise<void> {
    await killCgroup(this.dir, timeoutMs);
  }

  /** Removes the (empty) cgroup, then the engine directories if no other session uses them. Idempotent. */
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
    this.home.removeIfUnused();
  }
}

/**
 * Finds (or takes `rootOverride` as) the cgroup home, enables the limit controllers there (moving the
 * engine into a leaf if that is what it takes), sweeps cgroups left by dead engine processes, and
 * probes it. Resolves `undefined` when sessions cannot get a cgroup; never rejects.
 */
export async function prepareCgroupHome(options: CgroupHomeOptions): Promise<CgroupHome | undefined> {
  try {
    const own = options.rootOverride ?? detectCgroupLayout().v2;
    if (own === undefined || !isCgroup2(own)) return undefined;
    const self = identityOf(process.pid);
    if (self === undefined) return undefined;
    const home = options.rootOverride === undefined ? homeOf(own) : own;
    const { controllers, unavailable } = enableSessionControllers(home, options.rootOverride === undefined);
    await sweepStaleCgroups(home);
    const processDir = path.join(home, engineCgroupName(self));
    const engineDir = path.join(processDir, `engine-${options.engineKey}`);
    const cgroupHome = new CgroupHome(
      processDir,
      engineDir,
      controllers,
      unavailable,
      options.engineMemoryBytes,
    );
    if (await probe(cgroupHome)) return cgroupHome;
    cgroupHome.removeIfUnused();
    return undefined;
  } catch {
    // Anything unexpected about cgroupfs means: no container, process-tree teardown.
    return undefined;
  }
}

/**
 * The home of a process whose cgroup is `own`: `own` itself, unless an engine of this process already
 * moved it into the leaf {@link ENGINE_LEAF} of its home (the leaf's parent then holds no process and
 * has controllers enabled).
 */
function homeOf(own: string): string {
  if (path.basename(own) !== ENGINE_LEAF) return own;
  const parent = path.dirname(own);
  const enabled = readText(path.join(parent, 'cgroup.subtree_control'))?.trim() ?? '';
  return enabled !== '' && membersOf(parent).length === 0 ? parent : own;
}

/**
 * Enables the limit controllers the v2 tree offers at `home` for its children. A home that holds
 * processes can only do so once they left it: when the only one is this process (and `mayMove`), it
 * moves into the leaf {@link ENGINE_LEAF}; other processes, or a home not delegated to us, leave the
 * controllers off, each with the reason.
 */
function enableSessionControllers(
  home: string,
  mayMove: boolean,
): { controllers: LimitController[]; unavailable: Map<LimitController, string> } {
  const offered = words(readText(path.join(home, 'cgroup.controllers')));
  const wanted = LIMIT_CONTROLLERS.filter((controller) => offered.includes(controller));
  const unavailable = new Map<LimitController, string>();
  for (const controller of LIMIT_CONTROLLERS) {
    if (!wanted.includes(controller)) {
      unavailable.set(
        controller,
        `the cgroup v2 tree does not offer the ${controller} controller at ${home} (cgroup.controllers: ${offered.join(' ') || 'none'}); ${DELEGATION_REMEDY}`,
      );
    }
  }
  if (wanted.length === 0) return { controllers: [], unavailable };
  const failure = tryEnable(home, wanted, mayMove);
  if (failure === undefined) return { controllers: wanted, unavailable };
  for (const controller of wanted) unavailable.set(controller, failure);
  return { controllers: [], unavailable };
}

/** Enables `controllers` in `home`'s subtree_control (moving this process out first if needed); the failure, if any. */
function tryEnable(
  home: string,
  controllers: readonly LimitController[],
  mayMove: boolean,
): string | undefined {
  const control = path.join(home, 'cgroup.subtree_control');
  const enabled = words(readText(control));
  if (controllers.every((controller) => enabled.includes(controller))) return undefined;
  const line = controllers.map((controller) => `+${controller}`).join(' ');
  try {
    writeFileSync(control, line);
    return undefined;
  } catch (error) {
    const code = errorCode(error);
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
      return `${control} is not writable by the engine (no delegation); ${DELEGATION_REMEDY}`;
    }
    if (code !== 'EBUSY') return `enabling ${line} in ${control} failed (${code}); ${DELEGATION_REMEDY}`;
  }
  // EBUSY: processes live in the home, and v2 enables controllers only below a cgroup without any.
  const others = membersOf(home).filter((pid) => pid !== process.pid);
  if (others.length > 0 || !mayMove) {
    const shown = others.slice(0, 5).join(', ') + (others.length > 5 ? ', …' : '');
    return (
      `the engine's cgroup ${home} holds other processes (${shown || 'the engine'}), and cgroup v2 ` +
      `enables controllers only below a cgroup without processes; ${DELEGATION_REMEDY}`
    );
  }
  try {
    const leaf = path.join(home, ENGINE_LEAF);
    mkdirSync(leaf, { recursive: true });
    // Moves the whole process (every thread) into the leaf: the home then holds no process.
    writeFileSync(path.join(leaf, 'cgroup.procs'), String(process.pid));
    writeFileSync(control, line);
    return undefined;
  } catch (error) {
    return `moving the engine into ${path.join(home, ENGINE_LEAF)} to enable ${line} failed (${errorCode(error)}); ${DELEGATION_REMEDY}`;
  }
}

/** Enables `controllers` for the children of a cgroup this engine made (it holds no processes). */
function enableControllers(dir: string, controllers: readonly LimitController[]): void {
  if (controllers.length === 0) return;
  writeFileSync(path.join(dir, 'cgroup.subtree_control'), controllers.map((c) => `+${c}`).join(' '));
}

/**
 * Kills and removes every `agent-pty.<pid>.<starttime>` directory under `home` whose engine process
 * is gone (pid not alive with that start time). A live engine's directory is never touched.
 */
async function sweepStaleCgroups(home: string): Promise<void> {
  for (const dir of staleEngineDirs(home)) {
    try {
      // One write kills the whole subtree: every session cgroup of the dead engine.
      await killCgroup(dir, CGROUP_EMPTY_TIMEOUT_MS);
      removeTree(dir);
    } catch {
      // A concurrent sweep (another engine thread) or a stuck process: the next start tries again.
    }
  }
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
 * Proves the home usable: a probe cgroup of this thread in the engine directory (created if needed)
 * has every required kernel file, and a launcher run with a no-op argv joins it and exits 0. A thread
 * terminated mid-probe leaves its probe cgroup, which the next sweep after this process removes.
 */
async function probe(home: CgroupHome): Promise<boolean> {
  for (let attempt = 1; attempt <= CREATE_ATTEMPTS; attempt++) {
    const dir = path.join(home.engineDir, `probe-${threadId}`);
    try {
      home.ensureEngineDir();
      mkdirSync(dir, { recursive: true });
    } catch (error) {
      if (errorCode(error) === 'ENOENT') continue; // the engine directory went meanwhile: retry
      return false;
    }
    const usable = REQUIRED_FILES.every((name) => isWritable(path.join(dir, name)));
    const joined = usable && (await runLauncher([path.join(dir, 'cgroup.procs')]));
    removeIfEmpty(dir);
    if (joined) return true;
    if (!usable || existsSync(home.engineDir)) return false;
  }
  return false;
}

/** Runs the launcher with a no-op argv, joining `procsFiles`; true when it exited 0. */
export function runLauncher(procsFiles: readonly string[]): Promise<boolean> {
  const [file, ...args] = launcherArgv(procsFiles, PROBE_ARGV);
  return new Promise<boolean>((resolve) => {
    execFile(file!, args, (error) => resolve(error === null));
  });
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
    await delay('cgroup kill poll', period);
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

/** The space-separated words of a kernel file (`cgroup.controllers`, `cgroup.subtree_control`). */
function words(text: string | undefined): string[] {
  return (text ?? '').split(/\s+/).filter((word) => word !== '');
}
