/**
 * The configuration and detection behind the session limits (SPEC §3, §4.8): the machine-dependent
 * defaults, the rules checked at load (naming the field), and where this process's cgroups are found
 * in each hierarchy — on a hybrid host like these machines, on a pure v2 host, with a combined
 * `cpu,cpuacct` v1 mount, and inside a cgroup namespace.
 */
import { describe, expect, it } from 'vitest';
import { cgroupLayoutOf, parseCgroupMounts } from '../../../src/shared/cgroup-hierarchy.js';
import { resolveEngineConfig } from '../../../src/shared/config.js';

const GIB = 1024 * 1024 * 1024;
const MIB = 1024 * 1024;

describe('limit defaults and rules (config)', () => {
  it('defaults to half and three quarters of the memory available, and max(4096, 64 × CPUs) pids', () => {
    const config = resolveEngineConfig({}, 'config', { memoryBytes: 8 * GIB, cpus: 128 });
    expect(config.sessionMemoryBytes).toBe(4 * GIB);
    expect(config.engineMemoryBytes).toBe(6 * GIB);
    expect(config.sessionPids).toBe(8192);
    expect(resolveEngineConfig({}, 'config', { memoryBytes: 8 * GIB, cpus: 2 }).sessionPids).toBe(4096);
    expect(config.maxSessions).toBe(256);
    expect(config.maxScreenCells).toBe(250_000);
  });

  it('on a small machine the session default is the floor (3 × tmpfsBytes + 256 MiB), never below', () => {
    const config = resolveEngineConfig({}, 'config', { memoryBytes: 1 * GIB, cpus: 1 });
    expect(config.sessionMemoryBytes).toBe(3 * 256 * MIB + 256 * MIB);
    expect(config.engineMemoryBytes).toBeGreaterThanOrEqual(config.sessionMemoryBytes);
  });

  it('explicit values win over the machine', () => {
    const config = resolveEngineConfig(
      { sessionMemoryBytes: 2 * GIB, engineMemoryBytes: 3 * GIB, sessionPids: 500 },
      'config',
      { memoryBytes: 64 * GIB, cpus: 8 },
    );
    expect([config.sessionMemoryBytes, config.engineMemoryBytes, config.sessionPids]).toEqual([
      2 * GIB,
      3 * GIB,
      500,
    ]);
  });

  it('rejects at load, naming the field: a session memory below the floor, rows × cols above maxScreenCells', () => {
    expect(() => resolveEngineConfig({ sessionMemoryBytes: 512 * MIB })).toThrow(
      /sessionMemoryBytes: must be an integer >= 3 × tmpfsBytes \+ 256 MiB \(1073741824\)/,
    );
    // A smaller tmpfs lowers the floor.
    expect(
      resolveEngineConfig({ sessionMemoryBytes: 512 * MIB, tmpfsBytes: 64 * MIB }).sessionMemoryBytes,
    ).toBe(512 * MIB);
    expect(() => resolveEngineConfig({ rows: 600, cols: 600 })).toThrow(
      /rows: rows × cols: .* a terminal holds at most \d+ \(maxScreenCells/,
    );
    expect(() => resolveEngineConfig({ sessionPids: 4 })).toThrow(/sessionPids/);
    expect(() => resolveEngineConfig({ maxSessions: 0 })).toThrow(/maxSessions/);
  });

  it('detachedTtlMs (SPEC §12): a day by default, 0 = never, a whole number of ms else refused naming it', () => {
    expect(resolveEngineConfig({}).detachedTtlMs).toBe(86_400_000);
    expect(resolveEngineConfig({ detachedTtlMs: 0 }).detachedTtlMs).toBe(0);
    expect(() => resolveEngineConfig({ detachedTtlMs: -1 })).toThrow(/detachedTtlMs/);
    expect(() => resolveEngineConfig({ detachedTtlMs: 1.5 })).toThrow(/detachedTtlMs/);
  });
});

/** This machine's mountinfo (a hybrid host: v1 controllers, an empty v2 tree at /sys/fs/cgroup/unified). */
const HYBRID_MOUNTINFO = [
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
  '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids',
  '40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd',
  '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n');
const HYBRID_CGROUP = ['9:name=systemd:/', '8:pids:/', '4:memory:/svc/abc', '1:cpu:/', '0::/'].join('\n');

describe('where this process sits in each cgroup hierarchy (detected, never assumed)', () => {
  it('hybrid host: v2 for containment, v1 directories for memory, pids and cpu', () => {
    expect(cgroupLayoutOf(HYBRID_MOUNTINFO, HYBRID_CGROUP)).toEqual({
      v2: '/sys/fs/cgroup/unified/',
      v1: {
        memory: '/sys/fs/cgroup/memory/svc/abc',
        pids: '/sys/fs/cgroup/pids/',
        cpu: '/sys/fs/cgroup/cpu/',
      },
    });
    expect(
      parseCgroupMounts(HYBRID_MOUNTINFO).find((mount) => mount.point.endsWith('systemd'))?.controllers,
    ).toEqual([]);
  });

  it('pure v2 host: one tree, no v1 directories', () => {
    const mountinfo =
      '25 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate';
    const own = '0::/user.slice/user-1000.slice/user@1000.service/app.slice/agent.service';
    expect(cgroupLayoutOf(mountinfo, own)).toEqual({
      v2: '/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/agent.service',
      v1: {},
    });
  });

  it('a combined cpu,cpuacct mount serves cpu; a mount cut by a cgroup namespace maps the path below its root', () => {
    const mountinfo = [
      '30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct',
      '31 25 0:27 /docker/abc /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids',
    ].join('\n');
    const own = ['5:cpu,cpuacct:/x', '4:pids:/docker/abc/inner', '0::/'].join('\n');
    expect(cgroupLayoutOf(mountinfo, own).v1).toEqual({
      cpu: '/sys/fs/cgroup/cpu,cpuacct/x',
      pids: '/sys/fs/cgroup/pids/inner',
    });
  });

  it('a path outside the cgroup namespace (`/..`) is no directory', () => {
    expect(cgroupLayoutOf(HYBRID_MOUNTINFO, '0::/../outside').v2).toBeUndefined();
  });
});
