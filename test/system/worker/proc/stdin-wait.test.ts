/**
 * Exact stdin-wait detection against real programs in a real pty (node-pty): bash at its prompt,
 * `read`, `cat`, python3 (REPL, read, select, poll, epoll, /dev/tty) and node, plus the negatives
 * that must never count (a pipe on fd 0, input events not requested, other fds, sleep).
 */
import fs from 'node:fs';
import { type IPty, spawn } from 'node-pty';
import { afterEach, describe, expect, it } from 'vitest';
import { HeldProcFiles } from '../../../../dist/worker/proc/proc-files.js';
import {
  descendantsOf,
  isAlive,
  processesInSession,
  readProcStat,
} from '../../../../dist/worker/proc/proc-probe.js';
import {
  type ForegroundSample,
  inspectThreadStdinWait,
  sampleForeground,
  type ThreadWait,
} from '../../../../dist/worker/proc/stdin-wait.js';
import { until } from '../../../support/until.js';

/** Samples taken to show a negative verdict is stable, not a lucky instant. */
const STABLE_SAMPLES = 5;

interface Shell {
  term: IPty;
  rdev: number;
  exited: Promise<void>;
  /**
   * Descriptors held across every sample of this shell's life, as a session holds them: each scenario
   * also shows that a held descriptor reads the present (prompt → job → its exit), never a past reading.
   */
  files: HeldProcFiles;
}

const shells: Shell[] = [];

/** Spawns an interactive bash in a pty and waits until it blocks at its prompt. */
async function spawnShell(): Promise<Shell> {
  const term = spawn('/bin/bash', ['--norc', '--noprofile', '-i'], {
    cols: 120,
    rows: 30,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      TERM: 'dumb',
      PS1: '$ ',
    },
  });
  term.onData(() => undefined); // keep the pty drained
  const exited = new Promise<void>((resolve) => term.onExit(() => resolve()));
  const rdev = fs.statSync((term as IPty & { ptsName: string }).ptsName).rdev;
  const shell = { term, rdev, exited, files: new HeldProcFiles() };
  shells.push(shell);
  await until('bash at its prompt', () => shellWaiting(shell));
  return shell;
}

function sample(shell: Shell): ForegroundSample | undefined {
  return sampleForeground(shell.term.pid, shell.term.pid, shell.rdev, process.arch, shell.files);
}

/** A sample opening every file afresh (no descriptor kept from one sample to the next). */
function freshSample(shell: Shell): ForegroundSample | undefined {
  return sampleForeground(shell.term.pid, shell.term.pid, shell.rdev);
}

function shellWaiting(shell: Shell): ThreadWait | undefined {
  return sample(shell)?.members.find((m) => m.pid === shell.term.pid && m.verdict === 'waiting');
}

/** Foreground members other than the shell itself, once the shell has handed the terminal over. */
function jobMembers(shell: Shell): ThreadWait[] {
  const current = sample(shell);
  if (current === undefined || current.tpgid === current.shellPgrp) return [];
  return current.members.filter((m) => m.pid !== shell.term.pid);
}

/** Runs `command` in the shell and waits until a foreground job member shows `syscalls`. */
async function runUntilBlocked(shell: Shell, command: string, syscalls: string[]): Promise<ThreadWait> {
  shell.term.write(`${command}\r`);
  return until(`${command} blocked in ${syscalls.join('/')}`, () =>
    jobMembers(shell).find((m) => m.syscall !== undefined && syscalls.includes(m.syscall)),
  );
}

/** Waits until a job member is waiting on the terminal. */
async function runUntilWaiting(shell: Shell, command: string): Promise<ThreadWait> {
  shell.term.write(`${command}\r`);
  return until(`${command} waiting on the terminal`, () =>
    jobMembers(shell).find((m) => m.verdict === 'waiting'),
  );
}

/** Asserts that, over several samples, nothing in the foreground group waits on the terminal. */
function expectNotWaiting(shell: Shell): void {
  for (let i = 0; i < STABLE_SAMPLES; i++) {
    expect(sample(shell)!.anyWaiting).toBe(false);
    expect(freshSample(shell)!.anyWaiting).toBe(false);
  }
}

afterEach(async () => {
  for (const shell of shells.splice(0)) {
    const sid = shell.term.pid;
    shell.files.close();
    for (const stat of descendantsOf(sid)) killQuietly(stat.pid);
    shell.term.kill('SIGKILL');
    await shell.exited;
    for (const stat of processesInSession(sid)) killQuietly(stat.pid);
    // No process of the test's session may outlive it (zombies awaiting init's reaping are dead).
    await until('session processes gone', () =>
      processesInSession(sid).every((stat) => isAlive(stat) !== 'alive'),
    );
  }
});

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (_alreadyGone) {
    // ESRCH: it exited between the scan and the kill.
  }
}

const SELECT_CALLS = ['select', 'pselect6'];
const POLL_CALLS = ['poll', 'ppoll'];
const EPOLL_CALLS = ['epoll_wait', 'epoll_pwait', 'epoll_pwait2'];

describe.runIf(process.platform === 'linux')('stdin wait (real programs)', () => {
  it('bash at its prompt waits in pselect6 on fd 0, and only for its own terminal', async () => {
    const shell = await spawnShell();
    const wait = shellWaiting(shell)!;
    expect(SELECT_CALLS).toContain(wait.syscall);
    expect(wait.fd).toBe(0);
    expect(wait.switches).toBeGreaterThan(0);
    const current = sample(shell)!;
    expect(current.tpgid).toBe(current.shellPgrp);
    expect(current.anyWaiting).toBe(true);
    expect(freshSample(shell)!.members).toEqual(current.members);
    // The same wait seen against another device number is not a wait on "our" terminal.
    expect(inspectThreadStdinWait(shell.term.pid, shell.term.pid, shell.rdev + 1).verdict).toBe(
      'not_waiting',
    );
  });

  it('`read x` waits in read(0)', async () => {
    const shell = await spawnShell();
    shell.term.write('read x\r');
    // The builtin runs in the shell itself: same pid, now in read instead of pselect6.
    const wait = await until('read x blocked', () =>
      sample(shell)?.members.find((m) => m.syscall === 'read' && m.verdict === 'waiting'),
    );
    expect(wait.pid).toBe(shell.term.pid);
    expect(wait.fd).toBe(0);
  });

  it('`cat` reading the terminal waits; `sleep 100 | cat` does not', async () => {
    const shell = await spawnShell();
    const cat = await runUntilWaiting(shell, 'cat');
    expect(cat.syscall).toBe('read');

    const piped = await spawnShell();
    const blocked = await runUntilBlocked(piped, 'sleep 100 | cat', ['read']);
    expect(blocked.verdict).toBe('not_waiting'); // cat's fd 0 is the pipe
    await until('both pipeline members in the foreground', () => jobMembers(piped).length === 2);
    expectNotWaiting(piped);
  });

  it('`sleep 100` in the foreground does not wait', async () => {
    const shell = await spawnShell();
    const sleeping = await runUntilBlocked(shell, 'sleep 100', ['#230', 'clock_nanosleep', '#101', '#115']);
    expect(sleeping.verdict).toBe('not_waiting');
    expectNotWaiting(shell);
  });

  it('the python3 REPL waits at >>> (readline pselect6)', async () => {
    const shell = await spawnShell();
    const wait = await runUntilWaiting(shell, 'python3 -q');
    expect(SELECT_CALLS).toContain(wait.syscall);
    expect(wait.fd).toBe(0);
    // The shell is in wait4 in another process group: not a member.
    expect(sample(shell)!.members.some((m) => m.pid === shell.term.pid)).toBe(false);
  });

  it('python3 sys.stdin.read(1) waits in read(0)', async () => {
    const shell = await spawnShell();
    const wait = await runUntilWaiting(shell, `python3 -c 'import sys; sys.stdin.read(1)'`);
    expect(wait.syscall).toBe('read');
  });

  it('a read of /dev/tty on another fd waits, with stdin redirected away', async () => {
    const shell = await spawnShell();
    const wait = await runUntilWaiting(
      shell,
      `python3 -c 'import os; os.read(os.open("/dev/tty", os.O_RDONLY), 1)' < /dev/null`,
    );
    expect(wait.syscall).toBe('read');
    expect(wait.fd).toBeGreaterThan(2);
  });

  it('select: waits on fd 0 in the read set; not on a pipe alone', async () => {
    const positive = await spawnShell();
    const wait = await runUntilWaiting(positive, `python3 -c 'import select; select.select([0], [], [])'`);
    expect(SELECT_CALLS).toContain(wait.syscall);

    const negative = await spawnShell();
    const command = `python3 -c 'import os, select; r, w = os.pipe(); select.select([r], [], [])'`;
    await runUntilBlocked(negative, command, SELECT_CALLS);
    expectNotWaiting(negative);
  });

  it('poll: waits on fd 0 with POLLIN; not with POLLPRI only', async () => {
    const positive = await spawnShell();
    const wait = await runUntilWaiting(
      positive,
      `python3 -c 'import select; p = select.poll(); p.register(0, select.POLLIN); p.poll()'`,
    );
    expect(POLL_CALLS).toContain(wait.syscall);

    const negative = await spawnShell();
    const command = `python3 -c 'import select; p = select.poll(); p.register(0, select.POLLPRI); p.poll()'`;
    await runUntilBlocked(negative, command, POLL_CALLS);
    expectNotWaiting(negative);
  });

  it('epoll: waits on fd 0 with EPOLLIN; not on a pipe', async () => {
    const positive = await spawnShell();
    const wait = await runUntilWaiting(
      positive,
      `python3 -c 'import select; e = select.epoll(); e.register(0, select.EPOLLIN); e.poll()'`,
    );
    expect(EPOLL_CALLS).toContain(wait.syscall);

    const negative = await spawnShell();
    const command = `python3 -c 'import os, select; r, w = os.pipe(); e = select.epoll(); e.register(r, select.EPOLLIN); e.poll()'`;
    await runUntilBlocked(negative, command, EPOLL_CALLS);
    expectNotWaiting(negative);
  });

  it('node reading stdin waits through the tty fd libuv reopened', async () => {
    const shell = await spawnShell();
    const wait = await runUntilWaiting(shell, `${process.execPath} -e 'process.stdin.on("data", () => {})'`);
    expect(EPOLL_CALLS).toContain(wait.syscall);
    expect(wait.fd).not.toBe(0);
  });

  it('unknown architecture, vanished threads and a gone shell are never evidence', async () => {
    const shell = await spawnShell();
    const pid = shell.term.pid;
    expect(inspectThreadStdinWait(pid, pid, shell.rdev, 'riscv64').verdict).toBe('unknown');
    shell.term.kill('SIGKILL');
    await shell.exited;
    expect(readProcStat(pid)).toBeUndefined();
    expect(inspectThreadStdinWait(pid, pid, shell.rdev).verdict).toBe('unknown');
    expect(sample(shell)).toBeUndefined(); // its held descriptors fail: the shell is gone
    expect(shell.files.size).toBe(0);
    expect(freshSample(shell)).toBeUndefined();
  });
});
