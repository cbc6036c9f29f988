/**
 * Host-side views of a sandbox's PID namespace, read straight from the host's `/proc` (independent of
 * the engine's own helpers): which host process a pid printed inside (`$$`, `$!`) is, and which host
 * processes share a namespace.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** One host process, as far as these tests need it. */
export interface HostProcess {
  pid: number;
  ppid: number;
  comm: string;
  state: string;
  /** Its pid in each PID namespace, from the host's outwards in (`NSpid:`). */
  nsPids: number[];
}

/** Every readable host process. */
export function hostProcesses(): HostProcess[] {
  const found: HostProcess[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const status = readFileSync(`/proc/${name}/status`, 'utf8');
      const close = stat.lastIndexOf(')');
      const [state, ppid] = stat.slice(close + 2).split(' ');
      const nsPids = (/^NSpid:\s*(.*)$/m.exec(status)?.[1] ?? name).trim().split(/\s+/).map(Number);
      found.push({
        pid: Number(name),
        ppid: Number(ppid),
        comm: stat.slice(stat.indexOf('(') + 1, close),
        state: state!,
        nsPids,
      });
    } catch (_exited) {
      // Gone while scanning.
    }
  }
  return found;
}

/** Live (non-zombie) descendants of `root`, parents first. */
export function liveTree(root: number): HostProcess[] {
  const table = hostProcesses();
  const found: HostProcess[] = [];
  let frontier = [root];
  while (frontier.length > 0) {
    const children = table.filter((entry) => frontier.includes(entry.ppid));
    found.push(...children);
    frontier = children.map((entry) => entry.pid);
  }
  return found.filter((entry) => entry.state !== 'Z' && entry.state !== 'X');
}

/** The host pid of the descendant of `root` whose innermost-namespace pid is `innerPid`. */
export function hostPidOf(root: number, innerPid: number): number {
  const match = liveTree(root).find((entry) => entry.nsPids.at(-1) === innerPid);
  if (match === undefined) throw new Error(`no descendant of ${root} has namespace pid ${innerPid}`);
  return match.pid;
}

/** Live host processes in the PID namespace of host process `pid` (itself included). */
export function sameNamespace(pid: number): HostProcess[] {
  const namespace = readlinkSync(`/proc/${pid}/ns/pid`);
  return hostProcesses().filter((entry) => {
    if (entry.state === 'Z' || entry.state === 'X') return false;
    try {
      return readlinkSync(`/proc/${entry.pid}/ns/pid`) === namespace;
    } catch (_exited) {
      return false;
    }
  });
}

/** Live `sleep` processes on the host with `argument` on their command line (a unique number). */
export function sleepsWithArgument(argument: string): number[] {
  const found: number[] = [];
  for (const entry of hostProcesses()) {
    if (entry.comm !== 'sleep' || entry.state === 'Z' || entry.state === 'X') continue;
    try {
      const argv = readFileSync(`/proc/${entry.pid}/cmdline`, 'utf8').split('\0');
      if (argv.includes(argument)) found.push(entry.pid);
    } catch (_exited) {
      // Gone while scanning.
    }
  }
  return found;
}
