/**
 * The system calls a program can block in while it waits for terminal input, by number per
 * architecture, and the parser of `/proc/<pid>/task/<tid>/syscall`. Numbers come from the kernel's
 * `arch/x86/entry/syscalls/syscall_64.tbl` and `include/uapi/asm-generic/unistd.h` (arm64 uses the
 * generic table, which has no plain `select`, `poll` or `epoll_wait`).
 *
 * Limitation: the number in the syscall file is in the calling task's ABI. A 32-bit (compat)
 * program on a 64-bit kernel reports i386/arm32 numbers, which this table would misread; such
 * programs are rare in agent sessions and the fd and memory checks that follow a match make a
 * false "waiting" implausible, but not impossible.
 */

/** Wait-capable system calls, by the name the kernel gives them. */
export type WaitSyscall =
  | 'read'
  | 'select'
  | 'pselect6'
  | 'poll'
  | 'ppoll'
  | 'epoll_wait'
  | 'epoll_pwait'
  | 'epoll_pwait2';

/** How a wait syscall names the descriptors it waits on (decides how its arguments are read). */
export type WaitSyscallKind =
  /** `read(fd, buf, count)`: arg 0 is the fd. */
  | 'read'
  /** `select(nfds, readfds, …)` / `pselect6`: arg 1 points at the read fd_set. */
  | 'select'
  /** `poll(fds, nfds, …)` / `ppoll`: arg 0 points at `nfds` `struct pollfd`. */
  | 'poll'
  /** `epoll_wait(epfd, …)` and variants: arg 0 is the epoll fd, whose fdinfo lists the watched fds. */
  | 'epoll';

/** The kind of each wait syscall. */
export const WAIT_SYSCALL_KIND: Readonly<Record<WaitSyscall, WaitSyscallKind>> = {
  read: 'read',
  select: 'select',
  pselect6: 'select',
  poll: 'poll',
  ppoll: 'poll',
  epoll_wait: 'epoll',
  epoll_pwait: 'epoll',
  epoll_pwait2: 'epoll',
};

/** x86-64 numbers (`syscall_64.tbl`). */
const X86_64: ReadonlyMap<number, WaitSyscall> = new Map([
  [0, 'read'],
  [7, 'poll'],
  [23, 'select'],
  [232, 'epoll_wait'],
  [270, 'pselect6'],
  [271, 'ppoll'],
  [281, 'epoll_pwait'],
  [441, 'epoll_pwait2'],
]);

/** arm64 numbers (asm-generic `unistd.h`). */
const ARM64: ReadonlyMap<number, WaitSyscall> = new Map([
  [22, 'epoll_pwait'],
  [63, 'read'],
  [72, 'pselect6'],
  [73, 'ppoll'],
  [441, 'epoll_pwait2'],
]);

/**
 * The wait-syscall table of `arch` (Node's `process.arch` names, or the kernel's `uname -m`
 * names), or `undefined` for an architecture without one: callers then report `unknown`.
 */
export function waitSyscallTable(arch: string): ReadonlyMap<number, WaitSyscall> | undefined {
  switch (arch) {
    case 'x64':
    case 'x86_64':
      return X86_64;
    case 'arm64':
    case 'aarch64':
      return ARM64;
    default:
      return undefined;
  }
}

/** What `/proc/<pid>/task/<tid>/syscall` says about a thread at the instant it was read. */
export type SyscallState =
  /** The thread was on a CPU: the file does not say what it is doing. */
  | { kind: 'running' }
  /** The thread was off-CPU outside any system call (e.g. stopped or preempted in user space). */
  | { kind: 'user' }
  /** The thread was off-CPU inside system call `nr` with these six raw arguments. */
  | { kind: 'syscall'; nr: number; args: readonly bigint[] };

/** Number of argument registers the syscall file prints. */
const SYSCALL_ARGS = 6;

/**
 * Parses the syscall file: `running`, `-1 <sp> <pc>` (blocked, not in a syscall), or
 * `<nr> <arg0> … <arg5> <sp> <pc>` with the arguments in hex. `undefined` when malformed.
 */
export function parseSyscallLine(text: string): SyscallState | undefined {
  const fields = text.trim().split(' ');
  if (fields[0] === 'running') return { kind: 'running' };
  if (fields[0] === '-1') return { kind: 'user' };
  if (fields.length < 1 + SYSCALL_ARGS || !/^\d+$/.test(fields[0]!)) return undefined;
  const args: bigint[] = [];
  for (const field of fields.slice(1, 1 + SYSCALL_ARGS)) {
    if (!/^0x[0-9a-f]+$/.test(field)) return undefined;
    args.push(BigInt(field));
  }
  return { kind: 'syscall', nr: Number(fields[0]), args };
}
