/**
 * The kernel files behind each session limit (SPEC §4.8), for cgroup v2 and for the v1 hierarchies of
 * a hybrid host: where a limit is written and where its events are counted. Writers return
 * `undefined` when the limit holds, else the reason it does not (for `status().limits`).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { tryWrite } from './cgroup-fs.js';

/** Which cgroup version a directory belongs to. */
export type CgroupVersion = 1 | 2;

/** CPU weight every session gets: the kernel's default, written so that it holds whatever a parent set. */
const CPU_WEIGHT = { 1: { file: 'cpu.shares', value: '1024' }, 2: { file: 'cpu.weight', value: '100' } };

/**
 * Limits the memory of the cgroup `dir` to `bytes`, swap off: v2 `memory.max` and `memory.swap.max 0`
 * (absent without swap accounting: then there is no swap to limit); v1 `memory.limit_in_bytes` and
 * `memory.memsw.limit_in_bytes` equal to it (memory + swap = memory), or, without swap accounting,
 * `memory.swappiness 0` (the cgroup's pages are not swapped).
 */
export function writeMemoryLimit(dir: string, version: CgroupVersion, bytes: number): string | undefined {
  if (version === 2) {
    const failed = tryWrite(path.join(dir, 'memory.max'), String(bytes));
    if (failed !== undefined || !existsSync(path.join(dir, 'memory.swap.max'))) return failed;
    return tryWrite(path.join(dir, 'memory.swap.max'), '0');
  }
  const failed = tryWrite(path.join(dir, 'memory.limit_in_bytes'), String(bytes));
  if (failed !== undefined) return failed;
  const memsw = path.join(dir, 'memory.memsw.limit_in_bytes');
  if (existsSync(memsw)) return tryWrite(memsw, String(bytes));
  return tryWrite(path.join(dir, 'memory.swappiness'), '0');
}

/** Limits the processes and threads of the cgroup `dir` to `max` (`pids.max`, in v1 as in v2). */
export function writePidsLimit(dir: string, max: number): string | undefined {
  return tryWrite(path.join(dir, 'pids.max'), String(max));
}

/** Gives the cgroup `dir` the default CPU weight, the same as every other session's. */
export function writeCpuWeight(dir: string, version: CgroupVersion): string | undefined {
  const { file, value } = CPU_WEIGHT[version];
  return tryWrite(path.join(dir, file), value);
}

/** Where a kind of limit event is counted: a flat-keyed kernel file and the key of its line. */
export interface CounterLine {
  file: string;
  key: string;
}

/**
 * Where the processes the OOM killer killed in the cgroup `dir` are counted: v2 `memory.events`
 * `oom_kill`; v1 the `oom_kill` line of `memory.oom_control` (`memory.failcnt` counts allocations that
 * hit the limit and were reclaimed, and stays 0 on a kill).
 */
export function oomKillCounter(dir: string, version: CgroupVersion): CounterLine {
  return { file: path.join(dir, version === 2 ? 'memory.events' : 'memory.oom_control'), key: 'oom_kill' };
}

/** Where the forks refused at `pids.max` in the cgroup `dir` are counted (the `max` line of `pids.events`). */
export function pidsRefusedCounter(dir: string): CounterLine {
  return { file: path.join(dir, 'pids.events'), key: 'max' };
}
