/**
 * An outer cgroup a test makes around what it runs when that could hurt the machine (fork bombs,
 * memory hogs): a `pids` and a `memory` cgroup below the test process's own, with hard caps, that a
 * child process joins before it starts. A broken build then exhausts the outer caps, not the host.
 * Found without the engine's own detection (its code is what is under test): the v1 hierarchies from
 * /proc/self/cgroup and /proc/self/mountinfo. On a pure cgroup v2 host the test process's cgroup holds
 * the test process itself, so no controller can be enabled below it: no outer cgroup, tests skip.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

/** Caps of an outer cgroup. */
export interface OuterCaps {
  /** `pids.max`: processes and threads of everything inside, the engine's own threads included. */
  pids: number;
  /** Memory (and memory + swap) limit in bytes. */
  memoryBytes: number;
}

/** An outer cgroup: its directories, how to start a process inside, and its removal. */
export interface OuterCgroup {
  /** The `pids` and `memory` directories. */
  readonly pidsDir: string;
  readonly memoryDir: string;
  /** Starts `node` with `args` inside the cgroup (joined before node runs). */
  startNode(args: string[]): ChildProcess;
  /** Kills whatever is still inside and removes the directories (children first). */
  remove(): Promise<void>;
}

/** The mount point of the v1 hierarchy of `controller`, from mountinfo. */
function v1MountOf(controller: string): string | undefined {
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const fields = line.split(' ');
    const separator = fields.indexOf('-');
    if (separator < 0 || fields[separator + 1] !== 'cgroup' || fields[3] !== '/') continue;
    if ((fields[separator + 3] ?? '').split(',').includes(controller)) return fields[4];
  }
  return undefined;
}

/** This process's path in the v1 hierarchy of `controller`. */
function v1PathOf(controller: string): string | undefined {
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
    const [, controllers, own] = line.split(':');
    if (controllers?.split(',').includes(controller)) return own;
  }
  return undefined;
}

/** Why no outer cgroup can be made here, or undefined when one can. */
export function outerCgroupUnavailable(): string | undefined {
  for (const controller of ['pids', 'memory']) {
    const mount = v1MountOf(controller);
    const own = v1PathOf(controller);
    if (mount === undefined || own === undefined) return `no cgroup v1 ${controller} hierarchy`;
    try {
      const probe = path.join(mount, own, `agent-pty-test-probe.${process.pid}`);
      mkdirSync(probe);
      rmdirSync(probe);
    } catch (error) {
      return `cannot create a cgroup in the v1 ${controller} hierarchy (${String(error)})`;
    }
  }
  return undefined;
}

/** Creates an outer cgroup with `caps` (check {@link outerCgroupUnavailable} first). */
export function createOuterCgroup(name: string, caps: OuterCaps): OuterCgroup {
  const leaf = `agent-pty-test-${name}.${process.pid}`;
  const pidsDir = path.join(v1MountOf('pids')!, v1PathOf('pids')!, leaf);
  const memoryDir = path.join(v1MountOf('memory')!, v1PathOf('memory')!, leaf);
  mkdirSync(pidsDir);
  mkdirSync(memoryDir);
  writeFileSync(path.join(pidsDir, 'pids.max'), String(caps.pids));
  writeFileSync(path.join(memoryDir, 'memory.limit_in_bytes'), String(caps.memoryBytes));
  try {
    writeFileSync(path.join(memoryDir, 'memory.memsw.limit_in_bytes'), String(caps.memoryBytes));
  } catch {
    writeFileSync(path.join(memoryDir, 'memory.swappiness'), '0');
  }
  return {
    pidsDir,
    memoryDir,
    startNode(args) {
      // The child joins both cgroups before node starts: nothing of it ever runs outside.
      const join = 'echo 0 > "$1" && echo 0 > "$2" || exit 125; shift 2; exec "$@"';
      return spawn(
        '/bin/sh',
        [
          '-c',
          join,
          'outer-join',
          path.join(pidsDir, 'cgroup.procs'),
          path.join(memoryDir, 'cgroup.procs'),
          process.execPath,
          ...args,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
    },
    async remove() {
      for (let round = 0; round < 500; round++) {
        const members = [pidsDir, memoryDir].flatMap(membersOfTree);
        if (members.length === 0) break;
        for (const pid of members) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone already
          }
        }
        await delay(10);
      }
      removeTree(pidsDir);
      removeTree(memoryDir);
    },
  };
}

/** The pids in `dir` and every cgroup below it. */
function membersOfTree(dir: string): number[] {
  let own: number[];
  try {
    own = readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return [...own, ...subdirs(dir).flatMap((child) => membersOfTree(path.join(dir, child)))];
}

function removeTree(dir: string): void {
  for (const child of subdirs(dir)) removeTree(path.join(dir, child));
  try {
    rmdirSync(dir);
  } catch {
    // already gone
  }
}

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}
