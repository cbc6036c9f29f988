/**
 * Exact stdin-wait detection (SPEC §4.2 rule 3): is the terminal's foreground process group blocked
 * waiting for terminal input right now?
 *
 * A thread counts as waiting when `/proc/<pid>/task/<tid>/syscall` shows it off-CPU inside a wait
 * syscall on a descriptor that is the session's terminal (compared by `st_rdev`, which holds across
 * mount namespaces such as bubblewrap's), its thread state is `S` (asleep, not woken and queued), and
 * its run counter did not move while the syscall file and state were read (so the two reads describe
 * one and the same wait). "On the terminal" means:
 * - `read(fd)`: fd is the terminal;
 * - `select`/`pselect6`: a set bit of the read fd_set (read from `/proc/<pid>/mem`) is the terminal;
 * - `poll`/`ppoll`: a `struct pollfd` (read from `/proc/<pid>/mem`) asks POLLIN of the terminal;
 * - `epoll_wait`/`epoll_pwait`/`epoll_pwait2`: the epoll fd's fdinfo lists the terminal with EPOLLIN.
 * Any terminal fd counts, not only fd 0: programs that read `/dev/tty` directly (password prompts)
 * and Node (libuv reopens the tty as a new fd) wait on the same terminal through another fd. A
 * `/dev/tty` fd has rdev 5:0, not the pty's; it counts when the process's controlling tty is ours.
 *
 * Observed on this machine (Linux 6.18 x86-64, bash 5.2.15, Python 3.11.7, Node 20; node-pty 1.1.0):
 * - `bash --norc --noprofile -i` at its prompt: `pselect6(1, readfds={0})` (readline) → waiting.
 * - `python3` REPL at `>>>`: `pselect6(1, readfds={0})` (readline) → waiting.
 * - `read x`: `read(0, …, 4096)` → waiting.   `cat` on the tty: `read(0, …, 131072)` → waiting.
 * - `python3 -c 'import sys; sys.stdin.read(1)'`: `read(0, …, 8192)` → waiting.
 * - `sleep 100 | cat`: cat in `read(0)`, but fd 0 is a pipe → not waiting; sleep in
 *   `clock_nanosleep` → not waiting. The group is not waiting.
 * - `node` REPL: main thread in `epoll_pwait` on an epoll fd whose fdinfo lists the reopened tty
 *   (fd 20, events 0x19) → waiting; its other threads wait on futexes/another epoll → not waiting.
 * - `python3 -c 'os.read(os.open("/dev/tty", …), 1)' < /dev/null`: `read(3)`, fd 3 = /dev/tty → waiting.
 * - bash itself, while a foreground job runs: `wait4` → not waiting.
 * Unknown architecture, unreadable or unparsable state gives `unknown`, which is never evidence.
 *
 * Not waiting, although blocked on the terminal:
 * - a task that is exiting (`PF_EXITING`, or a zombie leader): node's REPL after `.exit` sits in
 *   `epoll_pwait` on the tty for up to ~20 ms while it flushes its history, then exits;
 * - a wait that times out by itself within {@link SHORT_WAIT_MS}: a pause, not a wait for input (that
 *   same node wait has a 15 ms timeout, its history debounce; an idle node REPL waits ~8 s);
 * - a **relay** (verdict `relay`): the wait set also watches a socket or a pty master (`script`, `ssh`,
 *   `tmux`, `expect`, a dev server reading keypresses): the real reader is out of sight.
 *   `script -qc 'sleep 4' /dev/null`: `poll([0, 3=/dev/ptmx, 5=signalfd])`.
 */
import { performance } from 'node:perf_hooks';
import { isExiting } from '../../shared/proc-stat.js';
import { freshProcFiles, type ProcFiles, readProcText } from './proc-files.js';
import {
  descendantsOf,
  fdDevice,
  readProcessMemory,
  readProcStat,
  readThreadStat,
  schedSwitches,
  threadIdsOf,
} from './proc-probe.js';
import { parseSyscallLine, WAIT_SYSCALL_KIND, waitSyscallTable } from './syscall-table.js';

/**
 * Whether a thread is blocked waiting for terminal input. `relay`: blocked on the terminal together
 * with a socket or pty master (not proof of anything). `unknown` is never treated as waiting.
 */
export type StdinWaitVerdict = 'waiting' | 'relay' | 'not_waiting' | 'unknown';

/** One thread's stdin-wait verdict. */
export interface ThreadWait {
  /** Process id. */
  pid: number;
  /** Thread id. */
  tid: number;
  /** The verdict. */
  verdict: StdinWaitVerdict;
  /** The system call the thread was blocked in (`#<nr>` for one outside the wait table). */
  syscall?: string;
  /** The thread's run counter when observed (see `schedSwitches`); a change means it ran. */
  switches?: number;
  /** The terminal descriptor the thread waits on, when waiting. */
  fd?: number;
  /** True for a process outside the foreground group (one that opened the terminal itself, pinentry). */
  outside?: boolean;
  /**
   * A `not_waiting` thread polling the terminal with a short timeout: not waiting for a person (rule 3),
   * but it may be waiting for a terminal reply (vim polls for its queries' answers on its way out).
   */
  pollsTerminal?: boolean;
}

/** A sample of the terminal's foreground process group. */
export interface ForegroundSample {
  /** Foreground process group of the shell's terminal (from the shell's stat), -1 when none. */
  tpgid: number;
  /** Process group of the shell itself (`tpgid === shellPgrp` when the shell owns the foreground). */
  shellPgrp: number;
  /** Every thread of every process in the session tree whose process group is `tpgid`. */
  members: ThreadWait[];
  /** True when at least one member is `waiting`. */
  anyWaiting: boolean;
  /** True when a foreground member is blocked in a relay (its wait also watches a socket or pty master). */
  relay: boolean;
  /** `performance.now()` when the sample started: everything in it was observed at or after `at`. */
  at: number;
}

/** FD_SETSIZE: glibc's fd_set holds 1024 bits; larger select sets are rare and not inspected past this. */
const MAX_SELECT_FDS = 1024;
/** Bound on the pollfd array read from the target's memory (8 bytes each). */
const MAX_POLL_FDS = 1024;
/** Size of `struct pollfd { int fd; short events; short revents; }`. */
const POLLFD_BYTES = 8;
/** poll(2) input events: POLLIN | POLLRDNORM. */
const POLL_INPUT_EVENTS = 0x1 | 0x40;
/** epoll input events: EPOLLIN | EPOLLRDNORM. */
const EPOLL_INPUT_EVENTS = 0x1n | 0x40n;
/**
 * Device number of `/dev/tty` (major 5, minor 0). Both `st_rdev` (glibc's makedev) and stat's
 * tty_nr (the kernel's new_encode_dev) put major in bits 8–19 and the low minor bits in 0–7, so
 * `(5 << 8) | 0` in either, and a pty's tty_nr equals its rdev.
 */
const DEV_TTY_RDEV = (5 << 8) | 0;
/** One `tfd:` line of an epoll fd's fdinfo: target fd and event mask (hex). */
const EPOLL_TARGET_LINE = /^tfd:\s+(\d+)\s+events:\s+([0-9a-f]+)/gm;
/** Device number of `/dev/ptmx` (5:2): what `fstat` reports for every pty master opened through it. */
const PTMX_RDEV = (5 << 8) | 2;
/**
 * A wait whose own timeout is at most this long is a pause, not a wait for input: the program wakes by
 * itself before a person could answer. Seen on the way out of programs: node's REPL flushes its
 * history 15 ms after `.exit`, waiting in `epoll_pwait` on the tty meanwhile; vim, after `:wq`, waits
 * 100 ms in `pselect6` on the tty for late terminal responses, then exits. Waits for input block
 * indefinitely or for seconds (a program that polls the terminal this fast while idle is reported
 * `running` at the wait bound rather than proven waiting: never back early).
 */
export const SHORT_WAIT_MS = 150;

/**
 * Where a wait syscall keeps its timeout: an `int` of milliseconds (negative: none), or a pointer to a
 * `timespec`/`timeval` (NULL: none). The kernel reads it at entry and does not update it while blocked.
 */
const TIMEOUT_ARG: Readonly<Record<string, { arg: number; kind: 'ms' | 'timespec' | 'timeval' }>> = {
  select: { arg: 4, kind: 'timeval' },
  pselect6: { arg: 4, kind: 'timespec' },
  poll: { arg: 2, kind: 'ms' },
  ppoll: { arg: 2, kind: 'timespec' },
  epoll_wait: { arg: 3, kind: 'ms' },
  epoll_pwait: { arg: 3, kind: 'ms' },
  epoll_pwait2: { arg: 3, kind: 'timespec' },
};

/** Result of asking whether a syscall's descriptors include the terminal. */
type WatchResult = { watched: true; fd: number; relay: boolean } | { watched: false; unreadable: boolean };

/**
 * Inspects one thread. Reading order pins the race: run counter, syscall file, thread state, run
 * counter again. If the counter moved, the thread ran in between and the reads may describe
 * different moments, so the verdict is `not_waiting` (it was demonstrably not blocked throughout).
 * A thread woken but not yet scheduled still shows the old syscall; its state `R` rules it out.
 * `files` may hold the thread's descriptors across calls (`HeldProcFiles`): each read is still of
 * that moment; a held descriptor found dead (its thread gone, the tid perhaps another's) is reopened,
 * and an inspection that met such a reopening is `unknown`: its reads may describe two threads.
 */
export function inspectThreadStdinWait(
  pid: number,
  tid: number,
  terminalRdev: number,
  arch: string = process.arch,
  files: ProcFiles = freshProcFiles,
): ThreadWait {
  const table = waitSyscallTable(arch);
  if (table === undefined) return { pid, tid, verdict: 'unknown' };
  const replaced = files.replaced;
  const before = schedSwitches(pid, tid, files);
  const line = files.read(`/proc/${pid}/task/${tid}/syscall`);
  const thread = readThreadStat(pid, tid, files);
  const switches = schedSwitches(pid, tid, files);
  const state = line === undefined ? undefined : parseSyscallLine(line);
  if (
    state === undefined ||
    thread === undefined ||
    before === undefined ||
    switches === undefined ||
    files.replaced !== replaced
  ) {
    return { pid, tid, verdict: 'unknown' };
  }
  if (state.kind !== 'syscall') return { pid, tid, verdict: 'not_waiting', switches };
  const name = table.get(state.nr);
  const syscall = name ?? `#${state.nr}`;
  if (name === undefined || before !== switches || thread.state !== 'S' || isExiting(thread)) {
    return { pid, tid, verdict: 'not_waiting', syscall, switches };
  }
  const timeout = waitTimeoutMs(pid, name, state.args);
  if (timeout === 'unreadable') return { pid, tid, verdict: 'unknown', syscall, switches };
  const result = watchesTerminal(pid, WAIT_SYSCALL_KIND[name], state.args, terminalRdev);
  if (timeout <= SHORT_WAIT_MS) {
    const pollsTerminal = result.watched && !result.relay;
    return {
      pid,
      tid,
      verdict: 'not_waiting',
      syscall,
      switches,
      ...(pollsTerminal ? { pollsTerminal } : {}),
    };
  }
  if (result.watched) {
    return { pid, tid, verdict: result.relay ? 'relay' : 'waiting', syscall, switches, fd: result.fd };
  }
  return { pid, tid, verdict: result.unreadable ? 'unknown' : 'not_waiting', syscall, switches };
}

/**
 * Samples the terminal's foreground process group: tpgid from the shell's stat; members are the
 * processes of the tree rooted at `rootPid` (the pty child: the shell itself, or the sandbox
 * launcher above it) whose process group is tpgid, then (flagged `outside`) the other processes of the
 * tree but the shell: one of them may have opened the terminal itself and read it (pinentry). A process
 * that is exiting (zombie or dead, `PF_EXITING`, or a leader gone while its threads finish) is left out:
 * it never waits for input again. Walks only that tree, never all of `/proc`. `undefined` when the
 * shell is gone or a zombie. `files`: see {@link inspectThreadStdinWait}; a session passes its own
 * `HeldProcFiles`, so the proof sample re-reads the descriptors the write-boundary sample opened.
 */
export function sampleForeground(
  rootPid: number,
  shellPid: number,
  terminalRdev: number,
  arch: string = process.arch,
  files: ProcFiles = freshProcFiles,
): ForegroundSample | undefined {
  try {
    return sampleWith(rootPid, shellPid, terminalRdev, arch, files);
  } finally {
    files.endSample();
  }
}

function sampleWith(
  rootPid: number,
  shellPid: number,
  terminalRdev: number,
  arch: string,
  files: ProcFiles,
): ForegroundSample | undefined {
  const at = performance.now();
  const shell = readProcStat(shellPid, files);
  if (shell === undefined || shell.state === 'Z' || shell.state === 'X') return undefined;
  const tpgid = shell.tpgid;
  const members: ThreadWait[] = [];
  if (tpgid > 0) {
    const root = rootPid === shellPid ? shell : readProcStat(rootPid, files);
    const tree =
      root === undefined ? descendantsOf(rootPid, files) : [root, ...descendantsOf(rootPid, files, root)];
    const outsiders: ThreadWait[] = [];
    for (const candidate of tree) {
      if (isExiting(candidate)) continue;
      const outside = candidate.pgrp !== tpgid;
      if (outside && candidate.pid === shellPid) continue; // the shell reads the terminal only in front
      const tids = threadIdsOf(candidate);
      if (!tids.includes(candidate.pid)) continue; // the leader has exited: the whole group is going
      for (const tid of tids) {
        const wait = inspectThreadStdinWait(candidate.pid, tid, terminalRdev, arch, files);
        if (outside) outsiders.push({ ...wait, outside: true });
        else members.push(wait);
      }
    }
    members.push(...outsiders);
  }
  const anyWaiting = members.some((member) => member.verdict === 'waiting');
  const relay = members.some((member) => member.verdict === 'relay' && member.outside !== true);
  return { tpgid, shellPgrp: shell.pgrp, members, anyWaiting, relay, at };
}

/** Whether a blocked wait syscall of kind `kind` with raw arguments `args` includes the terminal. */
function watchesTerminal(
  pid: number,
  kind: 'read' | 'select' | 'poll' | 'epoll',
  args: readonly bigint[],
  terminalRdev: number,
): WatchResult {
  switch (kind) {
    case 'read':
      return anyTerminal(pid, [descriptor(args[0]!)], terminalRdev);
    case 'select':
      return anyTerminal(pid, selectReadFds(pid, args[0]!, args[1]!), terminalRdev);
    case 'poll':
      return anyTerminal(pid, pollInputFds(pid, args[0]!, args[1]!), terminalRdev);
    case 'epoll':
      return anyTerminal(pid, epollInputFds(pid, descriptor(args[0]!)), terminalRdev);
  }
}

/**
 * The first descriptor in `fds` that is the terminal, and whether the same wait also watches a socket or
 * a pty master (a relay). `fds === undefined` (the wait's descriptor list could not be read), or a
 * descriptor that could not be looked at and no terminal match, means `unreadable`. `/dev/tty` is its
 * own device (5:0) that the kernel redirects to the caller's controlling terminal, so a `/dev/tty` fd is
 * the terminal when the process's tty_nr is.
 */
function anyTerminal(pid: number, fds: readonly number[] | undefined, terminalRdev: number): WatchResult {
  if (fds === undefined) return { watched: false, unreadable: true };
  let unreadable = false;
  let terminalFd: number | undefined;
  let relay = false;
  for (const fd of fds) {
    if (fd < 0) continue;
    const device = fdDevice(pid, fd);
    if (device === undefined) unreadable = true;
    else if (device.socket) relay = true;
    else if (!device.charDevice) continue;
    else if (device.rdev === PTMX_RDEV) relay = true;
    else if (terminalFd !== undefined) continue;
    else if (device.rdev === terminalRdev) terminalFd = fd;
    else if (device.rdev === DEV_TTY_RDEV && readProcStat(pid)?.ttyNr === terminalRdev) terminalFd = fd;
  }
  if (terminalFd !== undefined) return { watched: true, fd: terminalFd, relay };
  return { watched: false, unreadable };
}

/**
 * The timeout a blocked wait syscall was entered with, in ms (`Infinity` for none), or `unreadable`.
 * `read` has none.
 */
function waitTimeoutMs(pid: number, name: string, args: readonly bigint[]): number | 'unreadable' {
  const where = TIMEOUT_ARG[name];
  if (where === undefined) return Number.POSITIVE_INFINITY;
  const value = args[where.arg]!;
  if (where.kind === 'ms') {
    const ms = Number(BigInt.asIntN(32, value));
    return ms < 0 ? Number.POSITIVE_INFINITY : ms;
  }
  if (value === 0n) return Number.POSITIVE_INFINITY;
  // struct timespec / timeval: two 64-bit fields (seconds, then nanoseconds or microseconds).
  const bytes = readProcessMemory(pid, value, 16);
  if (bytes === undefined) return 'unreadable';
  const seconds = Number(bytes.readBigInt64LE(0));
  const fraction = Number(bytes.readBigInt64LE(8));
  return seconds * 1_000 + (where.kind === 'timespec' ? fraction / 1_000_000 : fraction / 1_000);
}

/** The fds of the read set of a blocked `select`/`pselect6`, or `undefined` when unreadable. */
function selectReadFds(pid: number, nfdsArg: bigint, readfds: bigint): number[] | undefined {
  const nfds = Math.min(Number(BigInt.asIntN(32, nfdsArg)), MAX_SELECT_FDS);
  if (readfds === 0n || nfds <= 0) return [];
  const bytes = readProcessMemory(pid, readfds, Math.ceil(nfds / 8));
  if (bytes === undefined) return undefined;
  // fd_set is an array of longs, little-endian on both supported architectures: fd n is bit n % 8
  // of byte n / 8.
  const fds: number[] = [];
  for (let fd = 0; fd < nfds; fd++) {
    if ((bytes[fd >> 3]! >> (fd & 7)) & 1) fds.push(fd);
  }
  return fds;
}

/** The fds a blocked `poll`/`ppoll` asks input events of, or `undefined` when unreadable. */
function pollInputFds(pid: number, pollfds: bigint, nfdsArg: bigint): number[] | undefined {
  const nfds = nfdsArg > BigInt(MAX_POLL_FDS) ? MAX_POLL_FDS : Number(nfdsArg);
  if (nfds === 0) return [];
  const bytes = readProcessMemory(pid, pollfds, nfds * POLLFD_BYTES);
  if (bytes === undefined) return undefined;
  const fds: number[] = [];
  for (let offset = 0; offset < bytes.length; offset += POLLFD_BYTES) {
    const fd = bytes.readInt32LE(offset);
    const events = bytes.readInt16LE(offset + 4);
    if (events & POLL_INPUT_EVENTS) fds.push(fd);
  }
  return fds;
}

/** The fds an epoll instance watches for input, from its fdinfo, or `undefined` when unreadable. */
function epollInputFds(pid: number, epfd: number): number[] | undefined {
  const info = readProcText(`/proc/${pid}/fdinfo/${epfd}`);
  if (info === undefined) return undefined;
  const fds: number[] = [];
  for (const match of info.matchAll(EPOLL_TARGET_LINE)) {
    if (BigInt(`0x${match[2]}`) & EPOLL_INPUT_EVENTS) fds.push(Number(match[1]));
  }
  return fds;
}

/** A syscall's `int fd` argument (registers are 64-bit; the fd is the low 32 bits, signed). */
function descriptor(arg: bigint): number {
  return Number(BigInt.asIntN(32, arg));
}
