/**
 * The name of an engine process's cgroup directory, `agent-pty.<pid>.<starttime>`: the engine threads
 * create it (src/worker/containment/cgroup.ts), a successor's sweep parses it to tell whether its owner is dead,
 * and the reaper (src/main/engine/cgroup-reaper.ts) searches for it when its host dies. Pure.
 */
import type { ProcessIdentity } from './proc-stat.js';

/** `agent-pty.<pid>.<starttime>`, and nothing else. */
const ENGINE_CGROUP_PATTERN = /^agent-pty\.(\d+)\.(\d+)$/;

/** The cgroup directory name of the engine process `engine`. */
export function engineCgroupName(engine: ProcessIdentity): string {
  return `agent-pty.${engine.pid}.${engine.startTime}`;
}

/** The engine process a directory name belongs to, or undefined when it is no engine's. */
export function engineOfCgroupName(name: string): ProcessIdentity | undefined {
  const match = ENGINE_CGROUP_PATTERN.exec(name);
  return match === null ? undefined : { pid: Number(match[1]), startTime: Number(match[2]) };
}
