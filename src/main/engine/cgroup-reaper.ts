/**
 * The reaper (SPEC §4.6): one small process per engine, outside the session cgroups, that kills every
 * session of the engine's host process when that host dies without closing — even by SIGKILL, which no
 * exit hook sees. A confined session dies with its PID namespace then, but a `danger-full-access`
 * session's daemons (`setsid nohup …`, a job that ignores the pty's hangup) would run on until another
 * engine starts and sweeps.
 *
 * It is `/bin/sh` reading one line from a pipe whose only writer is the host. The host writes `done`
 * when the engine closed cleanly; the reaper then exits without touching anything (other engines of
 * the same process share its cgroup directory). End of file without `done` means the host is gone:
 * the reaper searches every cgroup mount for the host's `agent-pty.<pid>.<starttime>` directories and
 * kills them as a whole (`cgroup.kill`; where a hierarchy has none, every member of the subtree by
 * pid until it is empty), then removes them.
 *
 * Started before the engine's first launcher joins a cgroup — after the engine thread found its
 * cgroup home — so no session exists that it would not find. A pipe write end is close-on-exec in the
 * host (libuv), so no shell or other child holds it open after the host died. In a session of its own
 * and deaf to INT, HUP, TERM and QUIT: a Ctrl-C or a hangup aimed at the host's terminal must not take
 * the reaper first.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { cgroupMountPoints } from '../../shared/cgroup-mounts.js';
import { engineCgroupName } from '../../shared/engine-cgroup.js';
import { withinMs } from '../../shared/lifecycle.js';
import { parseProcStat } from '../../shared/proc-stat.js';

/** The line that dismisses the reaper: the engine closed and left nothing to kill. */
const DISMISS = 'done';

/** `$0` of the reaper, as `ps` shows it. */
const REAPER_NAME = 'agent-pty-reaper';

/** Bound on the reaper exiting after it was dismissed (it only has to read a line); then it is killed. */
const DISMISS_WAIT_MS = 2_000;

/**
 * `sh -c` script; `$1` is the engine's cgroup name, the rest the directories to search. Polls 5 ms
 * at most 400 times (2 s, the bound teardown gives a killed cgroup) for each directory to empty.
 */
const REAPER_SCRIPT = `trap '' INT HUP TERM QUIT
IFS= read -r line
[ "$line" = ${DISMISS} ] && exit 0
name=$1; shift
for root in "$@"; do find "$root" -type d -name "$name" -prune 2>/dev/null; done | while IFS= read -r dir; do
  echo 1 > "$dir/cgroup.freeze" 2>/dev/null
  echo 1 > "$dir/cgroup.kill" 2>/dev/null
  tries=0
  while [ $tries -lt 400 ]; do
    members=$(find "$dir" -name cgroup.procs -exec cat {} + 2>/dev/null)
    [ -z "$members" ] && break
    if [ ! -e "$dir/cgroup.kill" ]; then
      for pid in $members; do [ "$pid" -gt 1 ] && kill -KILL "$pid" 2>/dev/null; done
    fi
    sleep 0.005
    tries=$((tries + 1))
  done
  find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null
done
exit 0`;

/** The reaper of one engine; starts lazily, dismissed by {@link close}. */
export class CgroupReaper {
  private child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;

  /** @param cgroupRoot the engine's configured `cgroupRoot`, searched beside the cgroup mounts. */
  constructor(private readonly cgroupRoot: string | undefined) {}

  /**
   * Starts the reaper unless it runs. Call before a session's launcher may join a cgroup. Without any
   * cgroupfs (and no `cgroupRoot`) there is nothing a reaper could kill, and none is started.
   */
  ensureRunning(): void {
    if (this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null) return;
    const roots = [...cgroupMountPoints(), ...(this.cgroupRoot === undefined ? [] : [this.cgroupRoot])];
    if (roots.length === 0) return;
    const self = ownStat();
    if (self === undefined) return;
    const child = spawn(
      '/bin/sh',
      [
        '-c',
        REAPER_SCRIPT,
        REAPER_NAME,
        engineCgroupName({ pid: process.pid, startTime: self.startTime }),
        ...roots,
      ],
      { stdio: ['pipe', 'ignore', 'ignore'], detached: true },
    );
    // A failed spawn (no /bin/sh) leaves the sessions to the exit guard and the successor's sweep.
    // These listeners live as long as the child and its pipe (they are dropped with them): removed
    // earlier, a late error of a dismissed reaper would be an unhandled 'error' event.
    child.on('error', (_noReaper) => {});
    child.stdin?.on('error', (_reaperGone) => {});
    // One-shot: the child's close ends it.
    this.exited = new Promise((resolve) => child.once('close', () => resolve()));
    // The reaper must not keep an idle host alive; an open engine keeps it alive by its own handles.
    child.unref();
    (child.stdin as Socket | null)?.unref();
    this.child = child;
  }

  /** Dismisses the reaper (the engine closed) and waits until it exited; a reaper that hangs is killed. */
  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child === undefined) return;
    child.stdin?.end(`${DISMISS}\n`);
    const exited = this.exited?.then(() => 'exited' as const) ?? Promise.resolve('exited' as const);
    if ((await withinMs('cgroup reaper dismiss wait', exited, DISMISS_WAIT_MS)) === undefined) {
      child.kill('SIGKILL');
      await this.exited;
    }
  }
}

/** This process's `/proc/self/stat`, or undefined where there is no procfs (macOS) or it is unreadable. */
function ownStat(): ReturnType<typeof parseProcStat> {
  try {
    return parseProcStat(readFileSync('/proc/self/stat', 'utf8'));
  } catch (_noProcfs) {
    return undefined;
  }
}
