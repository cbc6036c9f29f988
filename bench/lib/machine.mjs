/** What the numbers were measured on: they mean little without it. */
import { execFileSync } from 'node:child_process';
import os from 'node:os';

/** CPU model and count, memory, kernel, Node version and the load at the start of the run. */
export function machineInfo() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpuCount: cpus.length,
    cpuMHz: cpus[0]?.speed ?? 0,
    totalMemMB: Math.round(os.totalmem() / 2 ** 20),
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    // Other work on the machine shifts every number; record how busy it was when we started.
    loadAvg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    date: new Date().toISOString(),
    ...sourceRevision(),
  };
}

/** The commit measured, and the engine sources that differed from it (the dist/ build is of those). */
function sourceRevision() {
  const git = (...args) =>
    execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const revision = git('rev-parse', '--short', 'HEAD').trim();
    const changed = git('status', '--porcelain', '--', 'src')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(3));
    return { revision, uncommittedSources: changed };
  } catch {
    return { revision: 'unknown', uncommittedSources: [] }; // not a git checkout
  }
}
