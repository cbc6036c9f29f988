/**
 * Where this process sits in each cgroup hierarchy (SPEC §4.6, §4.8): the cgroup v2 tree and, on a
 * hybrid host, the cgroup v1 hierarchies of the controllers the session limits use. Detected from
 * `/proc/self/mountinfo` (which filesystems are mounted where, and which controllers each v1 mount
 * carries) and `/proc/self/cgroup` (the process's path in each hierarchy); never assumed to be
 * `/sys/fs/cgroup`. Shared: the engine threads create cgroups there, the host reads the memory limit
 * that bounds the engine (the defaults of §4.8). The parsers are pure; only `detectCgroupLayout` reads.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The controllers behind the session limits: memory, processes, CPU weight. */
export const LIMIT_CONTROLLERS = ['memory', 'pids', 'cpu'] as const;

/** A controller behind a session limit. */
export type LimitController = (typeof LIMIT_CONTROLLERS)[number];

/** A cgroup filesystem mount from mountinfo. */
export interface CgroupMount {
  /** 2 for `cgroup2`, 1 for a v1 `cgroup` hierarchy. */
  version: 1 | 2;
  /** The mount's root within its hierarchy (`/` unless a cgroup namespace or bind mount cut it). */
  root: string;
  /** Where it is mounted. */
  point: string;
  /** v1: the controllers bound to this hierarchy (from its super options); v2: empty (see cgroup.controllers). */
  controllers: string[];
}

/** This process's path in each hierarchy, from `/proc/self/cgroup`. */
export interface OwnCgroupPaths {
  /** The `0::<path>` line: the process's cgroup v2 path. */
  v2: string | undefined;
  /** v1 paths by controller (`4:memory:/a/b` → memory: `/a/b`; `3:cpu,cpuacct:/` → both). */
  v1: Map<string, string>;
}

/** Where this process's own cgroups are, as directories. */
export interface CgroupLayout {
  /** Its cgroup v2 directory, when a cgroup2 filesystem holding it is mounted. */
  v2: string | undefined;
  /** Its cgroup v1 directory of each limit controller that is bound to a mounted v1 hierarchy. */
  v1: Partial<Record<LimitController, string>>;
}

/** Super options of a v1 cgroup mount that are not controller names. */
const NON_CONTROLLER_OPTIONS = new Set(['rw', 'ro', 'noprefix', 'clone_children', 'xattr', 'cpuset_v2_mode']);

/** The cgroup mounts of a mountinfo text (`id parent dev root point opts [tags] - fstype src superopts`). */
export function parseCgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const fields = line.split(' ');
    const separator = fields.indexOf('-');
    if (separator < 6) continue;
    const type = fields[separator + 1];
    if (type !== 'cgroup2' && type !== 'cgroup') continue;
    const root = unescapeMountField(fields[3]!);
    const point = unescapeMountField(fields[4]!);
    if (type === 'cgroup2') {
      mounts.push({ version: 2, root, point, controllers: [] });
      continue;
    }
    const controllers = (fields[separator + 3] ?? '')
      .split(',')
      .filter((option) => option !== '' && !option.includes('=') && !NON_CONTROLLER_OPTIONS.has(option));
    mounts.push({ version: 1, root, point, controllers });
  }
  return mounts;
}

/** The paths of a `/proc/self/cgroup` text (`hierarchy-id:controllers:path`). */
export function parseOwnCgroups(text: string): OwnCgroupPaths {
  const own: OwnCgroupPaths = { v2: undefined, v1: new Map() };
  for (const line of text.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second);
    const cgroupPath = line.slice(second + 1);
    if (line.slice(0, first) === '0' && controllers === '') own.v2 = cgroupPath;
    else
      for (const controller of controllers.split(','))
        if (controller !== '') own.v1.set(controller, cgroupPath);
  }
  return own;
}

/**
 * The directory of `cgroupPath` under the first of `mounts` whose root contains it; `undefined` when
 * none does (a path such as `/..` lies outside our cgroup namespace).
 */
export function directoryOf(cgroupPath: string, mounts: readonly CgroupMount[]): string | undefined {
  // A cgroup outside this process's cgroup namespace reads as `/..` (or deeper `..` segments).
  if (!cgroupPath.startsWith('/') || cgroupPath.split('/').includes('..')) return undefined;
  for (const mount of mounts) {
    if (mount.root === '/') return path.join(mount.point, cgroupPath);
    if (cgroupPath === mount.root || cgroupPath.startsWith(`${mount.root}/`)) {
      return path.join(mount.point, cgroupPath.slice(mount.root.length));
    }
  }
  return undefined;
}

/** Where this process's cgroups are, from the two texts (pure: `detectCgroupLayout` reads them). */
export function cgroupLayoutOf(mountinfo: string, procSelfCgroup: string): CgroupLayout {
  const mounts = parseCgroupMounts(mountinfo);
  const own = parseOwnCgroups(procSelfCgroup);
  const v2Mounts = mounts.filter((mount) => mount.version === 2);
  const layout: CgroupLayout = {
    v2: own.v2 === undefined ? undefined : directoryOf(own.v2, v2Mounts),
    v1: {},
  };
  for (const controller of LIMIT_CONTROLLERS) {
    const ownPath = own.v1.get(controller);
    if (ownPath === undefined) continue;
    const hierarchy = mounts.filter((mount) => mount.version === 1 && mount.controllers.includes(controller));
    const dir = directoryOf(ownPath, hierarchy);
    if (dir !== undefined) layout.v1[controller] = dir;
  }
  return layout;
}

/** Where this process's cgroups are now; an empty layout where procfs cannot tell (not Linux). */
export function detectCgroupLayout(): CgroupLayout {
  const mountinfo = readText('/proc/self/mountinfo');
  const own = readText('/proc/self/cgroup');
  if (mountinfo === undefined || own === undefined) return { v2: undefined, v1: {} };
  return cgroupLayoutOf(mountinfo, own);
}

/** mountinfo escapes space, tab, newline and backslash as `\ooo` octal. */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** A kernel file's text, or `undefined` when it cannot be read. */
export function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
