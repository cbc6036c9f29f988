/**
 * The host-exit guard (SPEC §2): the host thread remembers the identity (pid + start time) of every pty
 * child it was told about. When the host process exits — normally, by `process.exit()`, or by a
 * terminating signal nobody else handles — or when an engine thread dies, it SIGKILLs those shells and
 * everything in their terminal sessions, synchronously.
 *
 * A session with a cgroup (SPEC §4.6) is killed through `cgroup.kill` first, so a descendant that
 * daemonized out of the shell's tree and POSIX session dies too; the tree scan covers the rest.
 *
 * SIGKILL of the host itself cannot be caught here: then the engine's reaper (cgroup-reaper.ts) kills
 * every session that has a cgroup, confined sessions die with their PID namespace, and an unconfined
 * session without a cgroup gets only the kernel's SIGHUP on pty close.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { DisposableStore } from '../../shared/lifecycle.js';
import { type ProcessIdentity, parseProcStat } from '../../shared/proc-stat.js';

/** Terminating signals whose default action we preserve after cleaning up. */
const GUARDED_SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** Every live guard of this process; the process hooks are installed while it is non-empty. */
const liveGuards = new Set<HostExitGuard>();
/** The process hooks, while at least one guard lives: disposing it removes them. */
let hooks: DisposableStore | undefined;

/** A guarded session: its pty child and, when it has one, its cgroup. */
export interface GuardedSession extends ProcessIdentity {
  /** The session's cgroup directory (written `cgroup.kill` when the session must die). */
  cgroupDir?: string | undefined;
  /** The session's cgroup v1 limit directories: v1 has no `cgroup.kill`, so their members are SIGKILLed. */
  limitDirs?: readonly string[];
}

/** Remembers pty children and kills their terminal sessions when the host goes away. */
export class HostExitGuard {
  private readonly roots = new Map<string, GuardedSession>();

  constructor() {
    liveGuards.add(this);
    installHooks();
  }

  /** Starts guarding the pty child of session `id`. */
  register(
    id: string,
    identity: ProcessIdentity,
    cgroupDir?: string,
    limitDirs: readonly string[] = [],
  ): void {
    this.roots.set(id, { ...identity, cgroupDir, limitDirs });
  }

  /** The guarded pty child of session `id`, if any. */
  rootOf(id: string): ProcessIdentity | undefined {
    return this.roots.get(id);
  }

  /** Stops guarding session `id` (its teardown was verified). */
  unregister(id: string): void {
    this.roots.delete(id);
  }

  /** Kills the terminal session of `id` now (its engine thread died) and forgets it. */
  killSession(id: string): void {
    const root = this.roots.get(id);
    if (root === undefined) return;
    killTerminalSessions([root]);
    this.roots.delete(id);
  }

  /** Kills every guarded session. */
  killAll(): void {
    killTerminalSessions(this.takeAll());
  }

  /** Forgets and returns every guarded root. */
  takeAll(): GuardedSession[] {
    const roots = [...this.roots.values()];
    this.roots.clear();
    return roots;
  }

  /** Detaches from the process hooks (after the engine closed cleanly). */
  dispose(): void {
    liveGuards.delete(this);
    if (liveGuards.size === 0) uninstallHooks();
  }
}

function onProcessExit(): void {
  const roots: GuardedSession[] = [];
  for (const guard of liveGuards) roots.push(...guard.takeAll());
  killTerminalSessions(roots);
  // Engine threads keep running while 'exit' listeners run, but are torn down right after. If node-pty's
  // exit callback for a shell we just killed ran during that teardown, it would abort the whole process
  // (SPEC §2). So wait here until every killed shell was reaped and its callback had time to run.
  waitUntilReaped(roots);
}

function onTerminatingSignal(signal: NodeJS.Signals): void {
  // When the host handles this signal itself, it owns the shutdown (and 'exit' still covers the end).
  if (process.listenerCount(signal) > 1) return;
  // Otherwise the signal would have terminated the host: clean up, restore the default action and
  // re-raise, so installing the guard never changes how the host reacts to SIGTERM/SIGINT/SIGHUP.
  for (const guard of liveGuards) guard.killAll();
  uninstallHooks();
  process.kill(process.pid, signal);
}

function installHooks(): void {
  if (hooks !== undefined) return;
  hooks = new DisposableStore();
  hooks.listen('host exit guard exit hook', process, 'exit', onProcessExit);
  for (const signal of GUARDED_SIGNALS) {
    hooks.listen('host exit guard signal hook', process, signal, onTerminatingSignal);
  }
}

function uninstallHooks(): void {
  const installed = hooks;
  hooks = undefined;
  installed?.dispose();
}

/**
 * SIGKILLs each root (if it is still the same process) and every process of its terminal session:
 * members of the POSIX session it leads, and its descendants. Synchronous, so it works in 'exit'.
 */
export function killTerminalSessions(roots: GuardedSession[]): void {
  if (roots.length === 0) return;
  for (const root of roots) if (root.cgroupDir !== undefined) killCgroupNow(root.cgroupDir);
  killV1MembersNow(roots.flatMap((root) => root.limitDirs ?? []));
  const table = readProcessTable();
  const byPid = new Map(table.map((entry) => [entry.pid, entry]));
  const victims = new Set<number>();
  for (const root of roots) {
    const current = byPid.get(root.pid);
    const reused = current !== undefined && root.startTime >= 0 && current.startTime !== root.startTime;
    if (reused) continue; // the pid now belongs to an unrelated process
    if (current !== undefined) victims.add(root.pid);
    // Session members: the kernel keeps a session id reserved while any member uses it, so processes
    // whose sid is the root's pid belong to the root's terminal session even after the root died.
    for (const entry of table) if (entry.session === root.pid) victims.add(entry.pid);
    // Descendants that moved to a session of their own.
    let frontier = [root.pid];
    while (frontier.length > 0) {
      const next: number[] = [];
      for (const entry of table) {
        if (frontier.includes(entry.ppid) && !victims.has(entry.pid)) {
          victims.add(entry.pid);
          next.push(entry.pid);
        }
      }
      frontier = next;
    }
  }
  victims.delete(process.pid);
  for (const pid of victims) {
    if (pid <= 1) continue; // never init, never "every process" (a corrupt identity must not widen this)
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // ESRCH: it is already gone, which is the goal.
    }
  }
}

/**
 * Writes `cgroup.kill` of a session's cgroup: the kernel SIGKILLs every process in it, wherever it
 * moved in the process tree. Synchronous, so it works in 'exit'. Removing the directory is left to
 * the engine's close or to the next engine's start sweep (it must first be empty).
 */
function killCgroupNow(dir: string): void {
  try {
    writeFileSync(`${dir}/cgroup.kill`, '1');
  } catch {
    // Already removed (its session closed meanwhile), or never populated: nothing left to kill.
  }
}

/** Kill rounds over the v1 limit cgroups: members forked between two rounds are caught by the next. */
const V1_KILL_ROUNDS = 20;

/**
 * SIGKILLs every member of the v1 cgroups `dirs`, in rounds until they are empty (bounded: a host
 * must never hang on its way out). A pid listed in `cgroup.procs` is a member of the session at that
 * moment, so nothing outside it is signalled. Synchronous, so it works in 'exit'.
 */
function killV1MembersNow(dirs: readonly string[]): void {
  for (let round = 0; round < V1_KILL_ROUNDS && dirs.length > 0; round++) {
    const members = dirs.flatMap(membersOf);
    if (members.length === 0) return;
    for (const pid of members) {
      if (pid <= 1 || pid === process.pid) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // ESRCH: it is already gone, which is the goal.
      }
    }
    sleepSync(1);
  }
}

/** The pids of a cgroup's `cgroup.procs` (none when it is gone). */
function membersOf(dir: string): number[] {
  let text: string;
  try {
    text = readFileSync(`${dir}/cgroup.procs`, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

/** Upper bound of the synchronous wait in 'exit': a host must never hang on its way out. */
const REAP_WAIT_MS = 2_000;
/** Time for the engine thread to run node-pty's exit callback after the kernel reaped the shell. */
const CALLBACK_SETTLE_MS = 50;

function waitUntilReaped(roots: ProcessIdentity[]): void {
  if (roots.length === 0) return;
  const deadline = Date.now() + REAP_WAIT_MS;
  while (roots.some((root) => existsSync(`/proc/${root.pid}`)) && Date.now() < deadline) sleepSync(5);
  sleepSync(CALLBACK_SETTLE_MS);
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function readProcessTable(): Array<{ pid: number; ppid: number; session: number; startTime: number }> {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return []; // no procfs (not Linux): nothing to scan
  }
  const table = [];
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    try {
      const stat = parseProcStat(readFileSync(`/proc/${name}/stat`, 'utf8'));
      if (stat !== undefined) table.push(stat);
    } catch {
      // The process exited between readdir and read.
    }
  }
  return table;
}
