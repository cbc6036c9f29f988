/**
 * Session limits in cgroup v1 hierarchies (SPEC §4.8), for hybrid hosts whose `memory`, `pids` or
 * `cpu` controller is bound to a v1 mount (a controller lives in one hierarchy only, so the v2 tree
 * cannot offer it there). Each such hierarchy gets the layout of the v2 home, under this process's own
 * cgroup in that hierarchy: `<own>/agent-pty.<pid>.<starttime>/engine-<key>/session-<thread>-<id>`,
 * so an outer cgroup (a service's, a test's) bounds everything below it.
 *
 * v1 has no `cgroup.kill`: a v1 cgroup is emptied by SIGKILLing its members in rounds until none is
 * left (forks in between are bounded by `pids.max` and caught by the next round); that is how the
 * sweep of a dead engine's cgroups, a close that had no v2 container, and the host-exit guard kill.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { LimitController } from '../../shared/cgroup-hierarchy.js';
import { engineCgroupName } from '../../shared/engine-cgroup.js';
import { TerminalError } from '../../shared/errors.js';
import { delay } from '../../shared/lifecycle.js';
import type { ProcessIdentity } from '../../shared/proc-stat.js';
import {
  errorCode,
  isWritable,
  listDirs,
  membersOf,
  removeIfEmpty,
  removeTree,
  staleEngineDirs,
  tryWrite,
} from './cgroup-fs.js';
import { writeMemoryLimit } from './limit-files.js';

/** Attempts at creating a session cgroup while another thread may remove the empty engine directory. */
const CREATE_ATTEMPTS = 3;
/** Poll period between kill rounds of a v1 cgroup. */
const KILL_ROUND_MS = 2;
/** Bound on a v1 cgroup emptying after its members were killed: longer means a process in D state. */
const EMPTY_TIMEOUT_MS = 2_000;

/** One v1 hierarchy of a limit controller, prepared for this engine. */
export class V1LimitHierarchy {
  constructor(
    /** The controller bound to this hierarchy. */
    readonly controller: LimitController,
    /** `<own>/agent-pty.<pid>.<starttime>`. */
    readonly processDir: string,
    /** `<processDir>/engine-<key>`. */
    readonly engineDir: string,
    private readonly engineMemoryBytes: number,
  ) {}

  /** Creates the cgroup `name` of a session (e.g. `session-<thread>-<id>`); `undefined` with the reason when that fails. */
  createSession(name: string): { dir: string } | { failure: string } {
    const dir = path.join(this.engineDir, name);
    let failure = 'unknown';
    for (let attempt = 1; attempt <= CREATE_ATTEMPTS; attempt++) {
      try {
        this.ensureEngineDir();
        mkdirSync(dir);
        return { dir };
      } catch (error) {
        failure = `creating ${dir} failed (${errorCode(error) ?? String(error)})`;
        // ENOENT: another thread removed the empty engine directory between our two mkdirs; retry.
        if (errorCode(error) !== 'ENOENT') break;
      }
    }
    return { failure };
  }

  /** Removes the engine's directories of this hierarchy once no session uses them. */
  removeIfUnused(): void {
    removeIfEmpty(this.engineDir);
    removeIfEmpty(this.processDir);
  }

  /**
   * Creates the engine directory when it is missing (the last session's close removed it) with the
   * engine's memory cap in the memory hierarchy. Memory v1 is hierarchical (`use_hierarchy`, always 1
   * on kernels since 5.x; set where it can still be 0), so the cap holds for every session below.
   */
  ensureEngineDir(): void {
    mkdirSync(this.processDir, { recursive: true });
    try {
      mkdirSync(this.engineDir);
    } catch (error) {
      if (errorCode(error) === 'EEXIST') return;
      throw error;
    }
    if (this.controller !== 'memory') return;
    tryWrite(path.join(this.engineDir, 'memory.use_hierarchy'), '1');
    writeMemoryLimit(this.engineDir, 1, this.engineMemoryBytes);
  }
}

/**
 * Prepares the v1 hierarchy of `controller` whose cgroup of this process is `own`: sweeps what dead
 * engines left there, and checks that cgroups can be made and joined (the join itself is probed by
 * the caller, once for every hierarchy). The reason when the hierarchy cannot be used.
 */
export async function prepareV1Hierarchy(
  controller: LimitController,
  own: string,
  self: ProcessIdentity,
  engineKey: string,
  engineMemoryBytes: number,
): Promise<V1LimitHierarchy | { failure: string }> {
  if (!isWritable(own) || !isWritable(path.join(own, 'cgroup.procs'))) {
    return {
      failure: `the cgroup v1 ${controller} hierarchy's ${own} is not writable by the engine (no delegation)`,
    };
  }
  await sweepStaleV1(own);
  const processDir = path.join(own, engineCgroupName(self));
  return new V1LimitHierarchy(
    controller,
    processDir,
    path.join(processDir, `engine-${engineKey}`),
    engineMemoryBytes,
  );
}

/** Kills and removes the `agent-pty.<pid>.<starttime>` directories under `home` whose engine process is gone. */
async function sweepStaleV1(home: string): Promise<void> {
  for (const dir of staleEngineDirs(home)) {
    try {
      await killV1Members(treeOf(dir), EMPTY_TIMEOUT_MS);
      removeTree(dir);
    } catch {
      // A concurrent sweep (another engine thread) or a stuck process: the next start tries again.
    }
  }
}

/** `dir` and every cgroup below it. */
function treeOf(dir: string): string[] {
  return [dir, ...listDirs(dir).flatMap((child) => treeOf(path.join(dir, child)))];
}

/**
 * SIGKILLs every member of the v1 cgroups `dirs` in rounds until all are empty. A pid listed in a
 * cgroup's `cgroup.procs` is a member at that moment, so nothing outside is signalled (barring the
 * pid's reuse between the read and kill(2), which needs the member to die and be reaped and the pid
 * space to wrap in that window). Throws CLEANUP_FAILED after `timeoutMs`.
 */
export async function killV1Members(dirs: readonly string[], timeoutMs = EMPTY_TIMEOUT_MS): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const members = dirs.flatMap(membersOf);
    if (members.length === 0) return;
    if (performance.now() >= deadline) {
      throw new TerminalError(
        'CLEANUP_FAILED',
        `cgroup ${dirs[0]} still holds processes ${timeoutMs} ms after they were killed: ${members.slice(0, 10).join(', ')}`,
      );
    }
    for (const pid of members) killQuietly(pid);
    await delay('cgroup v1 kill round', KILL_ROUND_MS);
  }
}

/** SIGKILL that ignores a process already gone; never ourselves, init or a group. */
function killQuietly(pid: number): void {
  if (pid <= 1 || pid === process.pid) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // ESRCH: gone already, which is the goal.
  }
}
