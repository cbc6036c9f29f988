/**
 * `/proc/<pid>/stat` parsing (pure, property-tested) and the `/proc` readers against real processes:
 * identity, liveness (alive / zombie / gone), threads, children (both the children file and the scan
 * fallback), descendants, sessions, the run counter and pids of nested PID namespaces.
 */
import { type ChildProcess, spawn as spawnChild } from 'node:child_process';
import fs from 'node:fs';
import fc from 'fast-check';
import { type IPty, spawn } from 'node-pty';
import { afterEach, describe, expect, it } from 'vitest';
import { parseProcStat } from '../../../../dist/shared/proc-stat.js';
import {
  childrenByScan,
  childrenOf,
  descendantsOf,
  fdDevice,
  findByNamespacePid,
  identityOf,
  ignoredSignals,
  isAlive,
  namespacePid,
  processesInSession,
  readProcessMemory,
  readProcStat,
  schedSwitches,
  threadIds,
} from '../../../../dist/worker/proc/proc-probe.js';
import { HAS_BWRAP } from '../../../support/bwrap.js';
import { until } from '../../../support/until.js';

/** A stat line as the kernel prints it: 52 fields, comm in parentheses. */
function statLine(pid: number, comm: string, fields: Partial<Record<number, string | number>> = {}): string {
  const values: (string | number)[] = [pid, `(${comm})`, 'S', 1, 2, 3, 34816, 4, 4194560];
  while (values.length < 52) values.push(0);
  for (const [field, value] of Object.entries(fields)) values[Number(field) - 1] = value ?? 0;
  return `${values.join(' ')}\n`;
}

describe('parseProcStat', () => {
  it('reads the fields the engine uses', () => {
    expect(parseProcStat(statLine(42, 'bash', { 3: 'T', 8: -1, 20: 3, 22: 123456 }))).toEqual({
      pid: 42,
      comm: 'bash',
      state: 'T',
      ppid: 1,
      pgrp: 2,
      session: 3,
      ttyNr: 34816,
      tpgid: -1,
      flags: 4194560,
      threads: 3,
      startTime: 123456,
    });
  });

  it('takes comm up to the LAST parenthesis, whatever it contains', () => {
    const parsed = parseProcStat(statLine(7, 'a) S 1 2 (b) c', { 22: 99 }));
    expect(parsed?.comm).toBe('a) S 1 2 (b) c');
    expect(parsed?.startTime).toBe(99);
    fc.assert(
      fc.property(fc.string({ maxLength: 64 }), fc.nat(), fc.nat(), (comm, pid, start) => {
        const stat = parseProcStat(statLine(pid, comm, { 22: start }));
        expect(stat).toMatchObject({ pid, comm, startTime: start, ppid: 1 });
      }),
    );
  });

  it('rejects what is not a stat line', () => {
    for (const text of [
      '',
      'running',
      '12 bash S 1',
      '12 (bash) S 1 2 3',
      'x (bash) S 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0',
    ]) {
      expect(parseProcStat(text)).toBeUndefined();
    }
    expect(parseProcStat(statLine(1, 'x', { 22: 'abc' }))).toBeUndefined();
    expect(parseProcStat(statLine(1, 'x', { 3: '?' }))).toBeUndefined();
  });
});

const ptys: { term: IPty; exited: Promise<unknown> }[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
  }
  for (const { term, exited } of ptys.splice(0)) {
    const sid = term.pid;
    for (const stat of processesInSession(sid)) killQuietly(stat.pid);
    await exited;
    expect(processesInSession(sid).filter((stat) => isAlive(stat) === 'alive')).toEqual([]);
  }
});

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (_alreadyGone) {
    // ESRCH: it exited between the scan and the kill.
  }
}

/** Runs a bash script as a child (same session as the test) and returns it. */
function bashChild(script: string): ChildProcess {
  const child = spawnChild('/bin/bash', ['-c', script], { stdio: 'ignore' });
  children.push(child);
  return child;
}

describe.runIf(process.platform === 'linux')('proc probes', () => {
  it('reads its own stat, identity and threads', () => {
    const self = readProcStat(process.pid)!;
    expect(self.pid).toBe(process.pid);
    expect(self.ppid).toBe(process.ppid);
    expect(self.state).toMatch(/^[RS]$/);
    const identity = identityOf(process.pid)!;
    expect(identity).toEqual({ pid: process.pid, startTime: self.startTime });
    expect(isAlive(identity)).toBe('alive');
    expect(isAlive({ pid: process.pid, startTime: identity.startTime + 1 })).toBe('gone');
    const tids = threadIds(process.pid);
    expect(tids).toContain(process.pid);
    expect(tids.length).toBeGreaterThan(1); // libuv's thread pool and V8's platform threads
  });

  it('tells alive, zombie and gone apart', async () => {
    // The child forks a subshell, then execs into sleep, which never reaps: a zombie. The subshell
    // exits only once its parent runs sleep (`$$` is the parent's pid in a subshell): one that ended
    // before the exec was reaped by bash, and no zombie came (the wait timed out under load).
    const parent = bashChild(
      '( until read -r comm < /proc/$$/comm && [ "$comm" = sleep ]; do :; done ) & exec sleep 30',
    );
    const zombie = await until('a zombie child', () =>
      descendantsOf(parent.pid!).find((stat) => stat.state === 'Z'),
    );
    expect(isAlive(zombie)).toBe('zombie');
    expect(isAlive(identityOf(parent.pid!)!)).toBe('alive');
    const parentIdentity = identityOf(parent.pid!)!;
    const exited = new Promise((resolve) => parent.once('exit', resolve));
    parent.kill('SIGKILL');
    await exited; // node reaped it
    expect(isAlive(parentIdentity)).toBe('gone');
    expect(readProcStat(parentIdentity.pid)).toBeUndefined();
    expect(identityOf(parentIdentity.pid)).toBeUndefined();
  });

  it('lists children (children file and scan agree), descendants parents-first, and sessions', async () => {
    const term = spawn('/bin/bash', ['--norc', '--noprofile', '-i'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'dumb', PS1: '$ ' },
    });
    ptys.push({ term, exited: new Promise((resolve) => term.onExit(resolve)) });
    let output = '';
    term.onData((data) => {
      output += data;
    });
    term.write('sleep 1001 & bash -c "sleep 1002 & sleep 1003" & (sleep 1004 &)\r');
    // The shell prints its next prompt once it reaped the `( … & )` subshell, whose sleep is then an
    // orphan; before that, the subshell (or the sleep under it) is still a child or descendant.
    const tree = await until('the tree', () => {
      if (output.split('$ ').length < 3) return undefined;
      const found = descendantsOf(term.pid);
      return found.filter((stat) => stat.comm === 'sleep').length === 3 ? found : undefined;
    });
    const direct = childrenOf(term.pid).sort();
    expect(direct).toEqual(childrenByScan(term.pid).sort());
    expect(direct).toHaveLength(2); // sleep 1001 and the inner bash; the subshell's sleep was orphaned
    const depth = new Map<number, number>([[term.pid, 0]]);
    for (const stat of tree) {
      expect(depth.has(stat.ppid)).toBe(true); // its parent came first
      depth.set(stat.pid, depth.get(stat.ppid)! + 1);
    }
    expect(Math.max(...depth.values())).toBe(2);
    // The orphan of `( … & )` left the tree but not the session (forkpty made bash its leader).
    const session = processesInSession(term.pid);
    expect(session.map((stat) => stat.pid)).toContain(term.pid);
    expect(session.filter((stat) => stat.comm === 'sleep' && stat.state !== 'Z')).toHaveLength(4);
    expect(session.every((stat) => stat.session === term.pid)).toBe(true);
    term.kill('SIGKILL');
  });

  it('counts runs, reads signal masks, fds and memory', async () => {
    const before = schedSwitches(process.pid, process.pid)!;
    await new Promise((resolve) => setTimeout(resolve, 5)); // sleeping and waking is a reschedule
    expect(schedSwitches(process.pid, process.pid)!).toBeGreaterThan(before);

    const ignoring = bashChild(`trap '' TERM; exec sleep 30`);
    await until('sleep exec', () => readProcStat(ignoring.pid!)?.comm === 'sleep');
    expect((ignoredSignals(ignoring.pid!)! >> 14n) & 1n).toBe(1n);
    expect((ignoredSignals(process.pid)! >> 14n) & 1n).toBe(0n);

    const devNull = fs.openSync('/dev/null', 'r');
    try {
      expect(fdDevice(process.pid, devNull)).toEqual({
        charDevice: true,
        socket: false,
        rdev: fs.statSync('/dev/null').rdev,
      });
    } finally {
      fs.closeSync(devNull);
    }
    expect(fdDevice(process.pid, 1_000_000)).toBeUndefined();
    // Our own memory, at an address we cannot know from JS: the unmapped page 0 is unreadable.
    expect(readProcessMemory(process.pid, 0n, 8)).toBeUndefined();
    expect(readProcessMemory(process.pid, 1n << 62n, 8)).toBeUndefined();
  });

  it.runIf(HAS_BWRAP)('maps the pids of a nested PID namespace to host processes (NSpid)', async () => {
    expect(namespacePid(process.pid)).toBe(process.pid); // no nested namespace: the pid itself
    // bwrap (host) → bwrap, the namespace's init (pid 1) → sh execs sleep 31 (pid 2), its child sleep 30 (pid 3).
    const launcher = spawnChild(
      'bwrap',
      [
        ...['--unshare-user', '--unshare-pid', '--die-with-parent', '--dev-bind', '/', '/', '--'],
        ...['/bin/sh', '-c', 'sleep 30 & exec sleep 31'],
      ],
      { stdio: 'ignore' },
    );
    children.push(launcher);
    const sleeps = await until('both sleeps', () => {
      const found = descendantsOf(launcher.pid!).filter((stat) => stat.comm === 'sleep');
      return found.length === 2 ? found : undefined;
    });
    const init = descendantsOf(launcher.pid!).find((stat) => stat.comm === 'bwrap')!;
    expect(namespacePid(launcher.pid!)).toBe(launcher.pid);
    expect(namespacePid(init.pid)).toBe(1);
    expect(sleeps.map((stat) => namespacePid(stat.pid)).sort()).toEqual([2, 3]);
    const shell = findByNamespacePid(launcher.pid!, 2)!;
    expect(shell.comm).toBe('sleep');
    expect(shell.ppid).toBe(init.pid);
    expect(findByNamespacePid(launcher.pid!, 1)?.pid).toBe(init.pid);
    // The root is searched first: an unconfined shell is found by its own (host) pid.
    expect(findByNamespacePid(launcher.pid!, launcher.pid!)?.pid).toBe(launcher.pid);
    expect(findByNamespacePid(launcher.pid!, 99)).toBeUndefined();
    // The kernel drops signals without a handler sent to a namespace's init, SIGKILL and SIGSTOP aside.
    const bit = (pid: number, signal: bigint): bigint => (ignoredSignals(pid)! >> (signal - 1n)) & 1n;
    expect([bit(init.pid, 15n), bit(init.pid, 1n), bit(init.pid, 9n), bit(init.pid, 19n)]).toEqual([
      1n,
      1n,
      0n,
      0n,
    ]);
    expect(bit(shell.pid, 15n)).toBe(0n);
  });

  it('returns empty results for vanished pids, never throws', () => {
    const missing = 0x3fffffff; // above pid_max
    expect(readProcStat(missing)).toBeUndefined();
    expect(threadIds(missing)).toEqual([]);
    expect(childrenOf(missing)).toEqual([]);
    expect(descendantsOf(missing)).toEqual([]);
    expect(processesInSession(missing)).toEqual([]);
    expect(schedSwitches(missing, missing)).toBeUndefined();
    expect(ignoredSignals(missing)).toBeUndefined();
    expect(namespacePid(missing)).toBeUndefined();
    expect(findByNamespacePid(missing, 2)).toBeUndefined();
  });
});
