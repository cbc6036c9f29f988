/**
 * What the machine gives the engine (SPEC §4.8 defaults): the memory available to it — the smaller of
 * the machine's RAM and the memory limit of the engine's own cgroup, so an engine started inside a
 * service's or a test's cgroup sizes its sessions to that cgroup — and its CPUs.
 */
import { availableParallelism, totalmem } from 'node:os';
import path from 'node:path';
import { type CgroupLayout, detectCgroupLayout, readText } from './cgroup-hierarchy.js';

/** The resources the §4.8 defaults are computed from. */
export interface MachineResources {
  /** Bytes of memory available to the engine process. */
  memoryBytes: number;
  /** CPUs this process may run on. */
  cpus: number;
}

/** The resources of this machine and process, read now. */
export function machineResources(layout: CgroupLayout = detectCgroupLayout()): MachineResources {
  const limit = ownMemoryLimit(layout);
  const total = totalmem();
  return { memoryBytes: limit === undefined ? total : Math.min(total, limit), cpus: availableParallelism() };
}

/**
 * The memory limit that bounds this process's cgroup, its ancestors' included; `undefined` when none
 * is set (or none can be read). v1: the memcg's `hierarchical_memory_limit` (the smallest limit on the
 * way to the root); v2: the smallest `memory.max` from the process's cgroup up to the mount.
 */
export function ownMemoryLimit(layout: CgroupLayout): number | undefined {
  const v1 = layout.v1.memory;
  if (v1 !== undefined) {
    const stat = readText(path.join(v1, 'memory.stat'));
    const hierarchical = /^hierarchical_memory_limit (\d+)$/m.exec(stat ?? '')?.[1];
    const own = hierarchical ?? readText(path.join(v1, 'memory.limit_in_bytes'))?.trim();
    return limitOf(own);
  }
  let smallest: number | undefined;
  for (let dir = layout.v2; dir !== undefined; ) {
    const max = limitOf(readText(path.join(dir, 'memory.max'))?.trim());
    if (max !== undefined) smallest = Math.min(smallest ?? max, max);
    const parent = path.dirname(dir);
    // Up to the mount: the root cgroup has no memory.max, and above it lies no cgroup filesystem.
    dir =
      parent !== dir && readText(path.join(parent, 'cgroup.controllers')) !== undefined ? parent : undefined;
  }
  return smallest;
}

/**
 * A limit file's value in bytes; `undefined` for `max`, for v1's "unlimited" (the largest page-aligned
 * long, 9223372036854771712) or anything that is no number.
 */
function limitOf(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d+$/.test(text)) return undefined;
  const value = Number(text);
  return value >= Number.MAX_SAFE_INTEGER ? undefined : value;
}
