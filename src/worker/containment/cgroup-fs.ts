/**
 * Small synchronous operations on cgroup filesystems (v1 and v2), shared by the containment cgroup
 * (cgroup.ts) and the limit cgroups (cgroup-v1-limits.ts, session-cgroups.ts). Kernel files of a
 * cgroup are tiny and never block on I/O, so sync calls are the cheapest correct choice.
 */
import { accessSync, constants as fsConstants, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { engineOfCgroupName } from '../../shared/engine-cgroup.js';
import { readProcText } from '../proc/proc-files.js';
import { isAlive } from '../proc/proc-probe.js';

/** The `agent-pty.<pid>.<starttime>` directories under `home` whose engine process is gone. */
export function staleEngineDirs(home: string): string[] {
  return listDirs(home)
    .filter((name) => {
      const owner = engineOfCgroupName(name);
      return owner !== undefined && isAlive(owner) !== 'alive';
    })
    .map((name) => path.join(home, name));
}

/**
 * A kernel file's text, or `undefined` when it cannot be read (the cgroup is gone). Read like a procfs
 * file (open, one read into a reused buffer, close): the limit-event counters are read on every
 * result's way back, and `readFileSync` costs twice the calls (fstat, a second read) and an allocation.
 */
export function readText(file: string): string | undefined {
  return readProcText(file);
}

/** Writes `value` to a kernel file; a vanished cgroup (ENOENT) is not an error. */
export function writeIfPresent(file: string, value: string): void {
  try {
    writeFileSync(file, value);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

/** Writes `value` to a kernel file; `undefined` when it worked, else the reason (for a limit's report). */
export function tryWrite(file: string, value: string): string | undefined {
  try {
    writeFileSync(file, value);
    return undefined;
  } catch (error) {
    return `writing ${value.trim()} to ${file} failed (${errorCode(error) ?? String(error)})`;
  }
}

/** The pids of a cgroup's `cgroup.procs` (empty when the cgroup is gone or empty). */
export function membersOf(dir: string): number[] {
  const text = readText(path.join(dir, 'cgroup.procs'));
  if (text === undefined) return [];
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

/** Removes a directory once it is empty (EBUSY/ENOTEMPTY: still in use; ENOENT: gone). */
export function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // In use by another session or thread, or already gone.
  }
}

/** rmdir that treats an already removed directory as success. */
export function rmdirIgnoringGone(dir: string): void {
  try {
    rmdirSync(dir);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

/** Removes `dir` and every cgroup below it, children first (each must be empty of processes). */
export function removeTree(dir: string): void {
  for (const child of listDirs(dir)) removeTree(path.join(dir, child));
  rmdirIgnoringGone(dir);
}

/** Subdirectories of `dir` (empty when unreadable). */
export function listDirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}

/** Whether `file` exists and is writable by us. */
export function isWritable(file: string): boolean {
  try {
    accessSync(file, fsConstants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The `code` of a Node system error. */
export function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}
