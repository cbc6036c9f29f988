/**
 * An outer cgroup around what a benchmark runs when that could hurt the machine (fork bombs, memory
 * hogs): `pids` and `memory` cgroups (v1 hierarchies) below this process's own, with hard caps, that a
 * child process joins before node starts. Same approach as test/support/outer-cgroup.ts; `undefined`
 * (with the reason) where no such cgroup can be made (a pure cgroup v2 host: the benchmark's own
 * cgroup holds the benchmark, so no controller can be enabled below it).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

function v1MountOf(controller) {
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const fields = line.split(' ');
    const separator = fields.indexOf('-');
    if (separator < 0 || fields[separator + 1] !== 'cgroup' || fields[3] !== '/') continue;
    if ((fields[separator + 3] ?? '').split(',').includes(controller)) return fields[4];
  }
  return undefined;
}

function v1PathOf(controller) {
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
    const [, controllers, own] = line.split(':');
    if (controllers?.split(',').includes(controller)) return own;
  }
  return undefined;
}

/** Creates the outer cgroup `name` with `{ pids, memoryBytes }`, or returns `{ unavailable: reason }`. */
export function createOuterCgroup(name, caps) {
  const dirs = {};
  for (const controller of ['pids', 'memory']) {
    const mount = v1MountOf(controller);
    const own = v1PathOf(controller);
    if (mount === undefined || own === undefined)
      return { unavailable: `no cgroup v1 ${controller} hierarchy` };
    dirs[controller] = path.join(mount, own, `agent-pty-bench-${name}.${process.pid}`);
  }
  try {
    mkdirSync(dirs.pids);
    mkdirSync(dirs.memory);
    writeFileSync(path.join(dirs.pids, 'pids.max'), String(caps.pids));
    writeFileSync(path.join(dirs.memory, 'memory.limit_in_bytes'), String(caps.memoryBytes));
    try {
      writeFileSync(path.join(dirs.memory, 'memory.memsw.limit_in_bytes'), String(caps.memoryBytes));
    } catch {
      writeFileSync(path.join(dirs.memory, 'memory.swappiness'), '0');
    }
  } catch (error) {
    return { unavailable: `cannot create the outer cgroup (${error.message})` };
  }
  return {
    leaf: path.basename(dirs.pids),
    /** Starts `node args…` inside the cgroup; its stdout is piped. */
    startNode(args) {
      const join = 'echo 0 > "$1" && echo 0 > "$2" || exit 125; shift 2; exec "$@"';
      return spawn(
        '/bin/sh',
        [
          '-c',
          join,
          'outer-join',
          path.join(dirs.pids, 'cgroup.procs'),
          path.join(dirs.memory, 'cgroup.procs'),
          process.execPath,
          ...args,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
    },
    /** Kills whatever is still inside and removes the directories. */
    async remove() {
      for (let round = 0; round < 500; round++) {
        const members = [dirs.pids, dirs.memory].flatMap(membersOfTree);
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
      removeTree(dirs.pids);
      removeTree(dirs.memory);
    },
  };
}

function membersOfTree(dir) {
  let own;
  try {
    own = readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return [...own, ...subdirs(dir).flatMap((child) => membersOfTree(path.join(dir, child)))];
}

function removeTree(dir) {
  for (const child of subdirs(dir)) removeTree(path.join(dir, child));
  try {
    rmdirSync(dir);
  } catch {
    // already gone
  }
}

function subdirs(dir) {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}
