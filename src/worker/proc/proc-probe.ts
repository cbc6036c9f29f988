/**
 * Synchronous readers of Linux `/proc` (procfs reads never block on I/O and cost single-digit µs, so
 * sync calls are the cheapest correct choice). Every reader returns `undefined` or an empty list for
 * a process that vanished or cannot be read: ESRCH, ENOENT and EACCES are normal outcomes when
 * probing processes that exit concurrently, never exceptions.
 */
import fs from 'node:fs';
import { type ProcessIdentity, type ProcStat, parseProcStat } from '../../shared/proc-stat.js';
import { freshProcFiles, type ProcFiles, readProcText } from './proc-files.js';

/** Liveness of a {@link ProcessIdentity}. */
export type Liveness =
  /** The same process (pid and start time) exists and can run. */
  | 'alive'
  /** The same process exited and waits to be reaped: it can never execute again. */
  | 'zombie'
  /** No process with this pid and start time exists any more. */
  | 'gone';

/** `/proc/<pid>/stat`, parsed; `undefined` when the process is gone or unreadable. */
export function readProcStat(pid: number, files: ProcFiles = freshProcFiles): ProcStat | undefined {
  const text = files.read(`/proc/${pid}/stat`);
  return text === undefined ? undefined : parseProcStat(text);
}

/** `/proc/<pid>/task/<tid>/stat`, parsed (the state is the thread's own). */
export function readThreadStat(
  pid: number,
  tid: number,
  files: ProcFiles = freshProcFiles,
): ProcStat | undefined {
  const text = files.read(`/proc/${pid}/task/${tid}/stat`);
  return text === undefined ? undefined : parseProcStat(text);
}

/** The current identity (pid + start time) of `pid`, or `undefined` when it does not exist. */
export function identityOf(pid: number): ProcessIdentity | undefined {
  const stat = readProcStat(pid);
  return stat === undefined ? undefined : { pid: stat.pid, startTime: stat.startTime };
}

/** Whether the process `identity` names still exists, and whether it can still execute. */
export function isAlive(identity: ProcessIdentity): Liveness {
  return livenessOf(identity, readProcStat(identity.pid));
}

/** {@link isAlive} for a stat the caller already read. */
export function livenessOf(identity: ProcessIdentity, stat: ProcStat | undefined): Liveness {
  if (stat === undefined || stat.pid !== identity.pid || stat.startTime !== identity.startTime) return 'gone';
  // X (dead) is only visible for an instant during release; treat it like a zombie: it cannot run.
  return stat.state === 'Z' || stat.state === 'X' ? 'zombie' : 'alive';
}

/**
 * The pid `pid` has in its own, innermost PID namespace: the last field of `NSpid:` in
 * `/proc/<pid>/status` (the fields run from the namespace of our `/proc` inwards, so outside any
 * nested namespace it is `pid` itself). What `$$` prints inside a sandbox. `undefined` when the
 * process is gone; `pid` on kernels older than 4.1, which have no `NSpid:` and no way to tell.
 */
export function namespacePid(pid: number): number | undefined {
  const status = readProcText(`/proc/${pid}/status`);
  if (status === undefined) return undefined;
  const fields = namespacePidFields(status);
  if (fields.length === 0) return pid;
  const innermost = fields.at(-1)!;
  return Number.isSafeInteger(innermost) && innermost > 0 ? innermost : undefined;
}

/** The fields of `NSpid:` in a `status` text, outermost first; empty when the kernel has none. */
function namespacePidFields(status: string): number[] {
  const match = /^NSpid:[\t ]*([\d\t ]+)$/m.exec(status);
  if (match === null) return [];
  return match[1]!
    .trim()
    .split(/[\t ]+/)
    .map(Number);
}

/**
 * The process in the tree rooted at `rootPid` (the root included) whose own-namespace pid is
 * `innerPid`: the host-side identity of a pid a sandboxed process reported. The shallowest match wins
 * (parents are walked before children), so in an unconfined tree the root itself, or the process
 * with that very host pid, is found before any process of a namespace nested further down.
 */
export function findByNamespacePid(rootPid: number, innerPid: number): ProcStat | undefined {
  const root = readProcStat(rootPid);
  const tree = root === undefined ? descendantsOf(rootPid) : [root, ...descendantsOf(rootPid)];
  return tree.find((stat) => namespacePid(stat.pid) === innerPid);
}

/** Thread ids of `pid` (the main thread's id equals `pid`); empty when the process is gone. */
export function threadIds(pid: number): number[] {
  return numericEntries(`/proc/${pid}/task`);
}

/**
 * Thread ids of a process whose stat was just read: `[pid]` alone when the stat counted one thread (the
 * only task of a thread group is its leader, whose tid is the pid), else a listing of `task/`. A thread
 * created after the stat was read is missed, as one created after a listing would be.
 */
export function threadIdsOf(stat: ProcStat): number[] {
  return stat.threads === 1 ? [stat.pid] : threadIds(stat.pid);
}

/**
 * Direct children of `pid`; empty when the process is gone. `stat`, when given, is `pid`'s own, just
 * read: with one thread it spares the listing of `task/`.
 */
export function childrenOf(pid: number, files: ProcFiles = freshProcFiles, stat?: ProcStat): number[] {
  if (!childrenFilesSupported()) return childrenByScan(pid);
  const children: number[] = [];
  for (const tid of stat?.pid === pid ? threadIdsOf(stat) : threadIds(pid)) {
    // A thread that exits between readdir and read simply contributes nothing: children are
    // attached to the thread that forked them and re-attached to the group leader when it exits.
    const text = files.read(`/proc/${pid}/task/${tid}/children`);
    if (text === undefined) continue;
    for (const field of text.split(' ')) {
      const child = Number(field);
      if (field !== '' && Number.isSafeInteger(child)) children.push(child);
    }
  }
  return children;
}

/** Direct children of `pid` found by a full `/proc` scan (the fallback without CONFIG_PROC_CHILDREN). */
export function childrenByScan(pid: number): number[] {
  return allProcesses()
    .filter((stat) => stat.ppid === pid)
    .map((stat) => stat.pid);
}

/**
 * Every descendant of `pid` (not `pid` itself), parents before children, zombies included. A child
 * is accepted only when its stat still names the parent it was listed under, so a pid that was
 * reused between the listing and the stat read cannot graft a stranger onto the tree.
 */
export function descendantsOf(
  pid: number,
  files: ProcFiles = freshProcFiles,
  rootStat?: ProcStat,
): ProcStat[] {
  if (!childrenFilesSupported()) return descendantsByScan(pid);
  const found: ProcStat[] = [];
  const seen = new Set<number>([pid]);
  const parents: { pid: number; stat: ProcStat | undefined }[] = [{ pid, stat: rootStat }];
  for (let next = 0; next < parents.length; next++) {
    const parent = parents[next]!;
    for (const child of childrenOf(parent.pid, files, parent.stat)) {
      if (seen.has(child)) continue;
      const stat = readProcStat(child, files);
      if (stat === undefined || stat.ppid !== parent.pid) continue;
      seen.add(child);
      found.push(stat);
      parents.push({ pid: child, stat });
    }
  }
  return found;
}

/** Every process whose session id is `sid` (zombies included), by a full `/proc` scan. */
export function processesInSession(sid: number): ProcStat[] {
  return allProcesses().filter((stat) => stat.session === sid);
}

/**
 * A counter that increases every time thread `tid` of `pid` is scheduled onto a CPU: field 3 of
 * `/proc/<pid>/task/<tid>/schedstat` (run count; a 3-number file, the cheapest source). Kernels
 * without schedstat accounting print zeros there, so a zero falls back to the voluntary +
 * non-voluntary context switches of the thread's `status` (also monotonic, larger file).
 */
export function schedSwitches(
  pid: number,
  tid: number,
  files: ProcFiles = freshProcFiles,
): number | undefined {
  const schedstat = files.read(`/proc/${pid}/task/${tid}/schedstat`);
  if (schedstat !== undefined) {
    const runs = Number(schedstat.trim().split(' ')[2]);
    // A thread that exists has run at least once, so 0 means "not accounted", not "never ran".
    if (Number.isSafeInteger(runs) && runs > 0) return runs;
  }
  const status = files.read(`/proc/${pid}/task/${tid}/status`);
  if (status === undefined) return undefined;
  const voluntary = /^voluntary_ctxt_switches:\s*(\d+)$/m.exec(status);
  const involuntary = /^nonvoluntary_ctxt_switches:\s*(\d+)$/m.exec(status);
  if (voluntary === null || involuntary === null) return undefined;
  return Number(voluntary[1]) + Number(involuntary[1]);
}

/**
 * The signals the kernel discards when we send them to `pid`, as a bit mask where bit n-1 is signal
 * n: those it ignores (SIG_IGN, `SigIgn:` of `/proc/<pid>/status`) and, when `pid` is the init of a
 * nested PID namespace (a sandbox's), also every signal it has no handler for (not in `SigCgt:`)
 * except SIGKILL and SIGSTOP: the kernel shields a namespace's init from default actions, also
 * against signals from outside. `undefined` when unreadable.
 */
export function ignoredSignals(pid: number): bigint | undefined {
  const status = readProcText(`/proc/${pid}/status`);
  if (status === undefined) return undefined;
  const ignored = /^SigIgn:\s*([0-9a-f]+)$/m.exec(status);
  if (ignored === null) return undefined;
  const mask = BigInt(`0x${ignored[1]}`);
  const caught = /^SigCgt:\s*([0-9a-f]+)$/m.exec(status);
  if (caught === null || !isNestedNamespaceInit(status)) return mask;
  return mask | (ALL_SIGNALS & ~BigInt(`0x${caught[1]}`) & ~FORCED_SIGNALS);
}

/**
 * The signals pending for `pid` that it blocks (`ShdPnd:` and `SigPnd:` against `SigBlk:` of its
 * status), as a bit mask where bit n-1 is signal n; `undefined` when unreadable. A signal that stays
 * there is not being acted on: bash blocks SIGTERM while it sleeps between attempts at a refused
 * fork, for seconds. (A process that takes its signals through signalfd reads them promptly.)
 */
export function blockedPendingSignals(pid: number): bigint | undefined {
  const status = readProcText(`/proc/${pid}/status`);
  if (status === undefined) return undefined;
  const mask = (name: string) => {
    const match = new RegExp(`^${name}:\\s*([0-9a-f]+)$`, 'm').exec(status);
    return match === null ? undefined : BigInt(`0x${match[1]}`);
  };
  const blocked = mask('SigBlk');
  if (blocked === undefined) return undefined;
  return ((mask('ShdPnd') ?? 0n) | (mask('SigPnd') ?? 0n)) & blocked;
}

/** Bits of all 64 signals in a `Sig*:` mask. */
const ALL_SIGNALS = (1n << 64n) - 1n;
/** SIGKILL (9) and SIGSTOP (19): the kernel delivers these to a namespace's init from outside. */
const FORCED_SIGNALS = (1n << 8n) | (1n << 18n);

/** Whether a `status` text is that of pid 1 of a PID namespace below ours (`NSpid:` ends in 1). */
function isNestedNamespaceInit(status: string): boolean {
  const fields = namespacePidFields(status);
  return fields.length > 1 && fields.at(-1) === 1;
}

/** What an open descriptor refers to, as far as terminal matching needs. */
export interface FdDevice {
  /** True for a character device (a tty, /dev/null, …). */
  charDevice: boolean;
  /** True for a socket. */
  socket: boolean;
  /** The device number (`st_rdev`); 0 for anything but a device. */
  rdev: number;
}

/**
 * What fd `fd` of `pid` refers to, or `undefined` when it is closed or cannot be looked at. `stat`
 * follows the `/proc/<pid>/fd/<fd>` magic link to the open file itself, so it works across mount
 * namespaces (a bubblewrap sandbox's `/dev/pts` is not ours).
 */
export function fdDevice(pid: number, fd: number): FdDevice | undefined {
  try {
    const stats = fs.statSync(`/proc/${pid}/fd/${fd}`, { throwIfNoEntry: false });
    return stats === undefined
      ? undefined
      : { charDevice: stats.isCharacterDevice(), socket: stats.isSocket(), rdev: stats.rdev };
  } catch (_vanishedOrDenied) {
    return undefined;
  }
}

/**
 * Reads `length` bytes of `pid`'s memory at `address` through `/proc/<pid>/mem` (needs ptrace-read
 * access: normally granted because the engine is an ancestor running as the same user). `undefined`
 * when unreadable or short.
 */
export function readProcessMemory(pid: number, address: bigint, length: number): Buffer | undefined {
  let fd: number;
  try {
    fd = fs.openSync(`/proc/${pid}/mem`, 'r');
  } catch (_vanishedOrDenied) {
    return undefined;
  }
  try {
    const bytes = Buffer.alloc(length);
    const read = fs.readSync(fd, bytes, 0, length, address);
    return read === length ? bytes : undefined;
  } catch (_unmappedOrDenied) {
    // EIO for an unmapped address, EACCES/EPERM without ptrace access, ESRCH after exit.
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** Stats of every process in `/proc` (one read per process: use sparingly). */
function allProcesses(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const pid of numericEntries('/proc')) {
    const stat = readProcStat(pid);
    if (stat !== undefined) stats.push(stat);
  }
  return stats;
}

/** {@link descendantsOf} from one full scan (parents before children, ppid-consistent by construction). */
function descendantsByScan(pid: number): ProcStat[] {
  const byParent = new Map<number, ProcStat[]>();
  for (const stat of allProcesses()) {
    const siblings = byParent.get(stat.ppid);
    if (siblings === undefined) byParent.set(stat.ppid, [stat]);
    else siblings.push(stat);
  }
  const found: ProcStat[] = [];
  const seen = new Set<number>([pid]);
  const parents = [pid];
  for (let next = 0; next < parents.length; next++) {
    for (const child of byParent.get(parents[next]!) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      found.push(child);
      parents.push(child.pid);
    }
  }
  return found;
}

/** Numeric directory entries of `dir` (pids or tids); empty when the directory is gone. */
function numericEntries(dir: string): number[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (_vanishedOrDenied) {
    return [];
  }
  const ids: number[] = [];
  for (const name of names) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57) continue; // not a digit: not a process or thread entry
    const id = Number(name);
    if (Number.isSafeInteger(id)) ids.push(id);
  }
  return ids;
}

/** Memo of {@link childrenFilesSupported}: a kernel build option, constant for the life of the process. */
let childrenFiles: boolean | undefined;

/** Whether this kernel has `/proc/<pid>/task/<tid>/children` (CONFIG_PROC_CHILDREN). */
function childrenFilesSupported(): boolean {
  childrenFiles ??= fs.existsSync(`/proc/${process.pid}/task/${process.pid}/children`);
  return childrenFiles;
}
