/**
 * Process-tree teardown against real shells in real ptys: background children, nohup and orphans,
 * SIGTERM ignored or handled, deep and wide trees, a respawning shell loop, processes exiting
 * mid-teardown, an already-exited shell, failures (no-op kill, EPERM) and their retry, and the
 * boundary: nothing outside the pty child's tree or session is ever signalled.
 */
import { type ChildProcess, spawn as spawnChild } from 'node:child_process';
import fs from 'node:fs';
import { type IPty, spawn } from 'node-pty';
import { afterEach, describe, expect, it } from 'vitest';
import { isTerminalError } from '../../../../dist/shared/errors.js';
import type { ProcessIdentity, ProcStat } from '../../../../dist/shared/proc-stat.js';
import { teardownProcessTree } from '../../../../dist/worker/containment/teardown.js';
import {
  descendantsOf,
  identityOf,
  isAlive,
  processesInSession,
  readProcStat,
} from '../../../../dist/worker/proc/proc-probe.js';
import { until } from '../../../support/until.js';

/** Grace so long that a test finishing well within it proves teardown did not wait it out. */
const LONG_GRACE_MS = 20_000;

interface Shell {
  term: IPty;
  root: ProcessIdentity;
  exited: Promise<void>;
}

const shells: Shell[] = [];
const children: ChildProcess[] = [];

function spawnShell(): Shell {
  const term = spawn('/bin/bash', ['--norc', '--noprofile', '-i'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      TERM: 'dumb',
      PS1: '$ ',
    },
  });
  term.onData(() => undefined); // keep the pty drained
  const exited = new Promise<void>((resolve) => term.onExit(() => resolve()));
  const shell = { term, root: identityOf(term.pid)!, exited };
  shells.push(shell);
  return shell;
}

/** Live (non-zombie) processes of the shell's session other than the shell, by command name. */
function liveInSession(shell: Shell, comm?: string): ProcStat[] {
  return processesInSession(shell.root.pid).filter(
    (stat) =>
      stat.pid !== shell.root.pid && isAlive(stat) === 'alive' && (comm === undefined || stat.comm === comm),
  );
}

/** Types `command` into the shell and waits until `count` live `comm` processes exist in its session. */
async function start(shell: Shell, command: string, comm: string, count: number): Promise<ProcStat[]> {
  shell.term.write(`${command}\r`);
  return until(`${count} × ${comm}`, () => {
    const found = liveInSession(shell, comm);
    return found.length >= count ? found : undefined;
  });
}

/** Asserts that nothing of `identities` (nor root) can execute any more. */
function expectAllDead(shell: Shell, identities: ProcessIdentity[]): void {
  expect(identities.filter((identity) => isAlive(identity) === 'alive')).toEqual([]);
  expect(isAlive(shell.root)).not.toBe('alive');
  expect(liveInSession(shell)).toEqual([]);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (_alreadyGone) {
    // ESRCH: it exited between the scan and the kill.
  }
}

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
  }
  for (const shell of shells.splice(0)) {
    // Clean up first so one failure cannot cascade, then assert nothing had been left behind.
    const leftovers = liveInSession(shell).map((stat) => `${stat.pid} ${stat.comm}`);
    for (const stat of processesInSession(shell.root.pid)) killQuietly(stat.pid);
    await shell.exited;
    expect(leftovers).toEqual([]);
  }
});

describe.runIf(process.platform === 'linux')('teardownProcessTree (real shells)', () => {
  it('closes a shell with background children quickly, root last', async () => {
    const shell = spawnShell();
    const sleeps = await start(shell, 'sleep 1000 & sleep 1001 & sleep 1002 &', 'sleep', 3);
    const report = await teardownProcessTree(shell.root, { graceMs: LONG_GRACE_MS });
    expect(report.captured).toEqual(
      expect.arrayContaining(sleeps.map(({ pid, startTime }) => ({ pid, startTime }))),
    );
    expect(report.captured).not.toContainEqual(shell.root);
    expect(report.terminated).toBe(3);
    expect(report.killed).toBe(1); // only the root: the sleeps died of SIGTERM
    expect(report.elapsedMs).toBeLessThan(LONG_GRACE_MS / 4); // returned as soon as they were gone
    expectAllDead(shell, sleeps);
    await shell.exited;
  });

  it('kills nohup children and orphans that left the tree but not the session', async () => {
    const shell = spawnShell();
    const found = await start(shell, 'nohup sleep 1000 >/dev/null 2>&1 & (sleep 1001 &)', 'sleep', 2);
    const orphan = found.find((stat) => stat.ppid !== shell.root.pid)!;
    expect(descendantsOf(shell.root.pid).map((stat) => stat.pid)).not.toContain(orphan.pid);
    const report = await teardownProcessTree(shell.root, { graceMs: LONG_GRACE_MS });
    expect(report.captured).toContainEqual({ pid: orphan.pid, startTime: orphan.startTime });
    expectAllDead(shell, found);
  });

  it('does not wait out the grace for a child that ignores SIGTERM, and SIGKILLs it', async () => {
    const shell = spawnShell();
    const [ignoring] = await start(shell, `( trap '' TERM; sleep 1000 ) &`, 'sleep', 1);
    const report = await teardownProcessTree(shell.root, { graceMs: LONG_GRACE_MS });
    expect(report.killed).toBe(2); // the sleep and the root
    expect(report.elapsedMs).toBeLessThan(LONG_GRACE_MS / 4);
    expectAllDead(shell, [ignoring!]);
  });

  it('does not wait out the grace for a child that keeps SIGTERM blocked and pending (a fork bomb’s bash)', async () => {
    const shell = spawnShell();
    // What bash does while it sleeps between attempts at a fork its pids limit refused.
    const script =
      'import signal, time; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}); time.sleep(1000)';
    const [blocking] = await start(shell, `python3 -c '${script}' &`, 'python3', 1);
    await until('SIGTERM blocked', () => {
      const status = readProcStatus(blocking!.pid);
      return (
        status !== undefined && ((BigInt(`0x${/^SigBlk:\s*(\w+)/m.exec(status)![1]}`) >> 14n) & 1n) === 1n
      );
    });
    const report = await teardownProcessTree(shell.root, { graceMs: LONG_GRACE_MS });
    expect(report.killed).toBe(2); // the python and the root
    expect(report.elapsedMs).toBeLessThan(LONG_GRACE_MS / 4);
    expectAllDead(shell, [blocking!]);
  });

  it('waits the grace for a child that handles SIGTERM without exiting, then SIGKILLs it', async () => {
    const shell = spawnShell();
    const script = 'import signal, time; signal.signal(signal.SIGTERM, lambda *_: None); time.sleep(1000)';
    const [stubborn] = await start(shell, `python3 -c '${script}' &`, 'python3', 1);
    // Wait until the handler is installed: SIGTERM shows up in the caught-signal mask.
    await until('SIGTERM handler installed', () => {
      const status = readProcStatus(stubborn!.pid);
      return (
        status !== undefined && ((BigInt(`0x${/^SigCgt:\s*(\w+)/m.exec(status)![1]}`) >> 14n) & 1n) === 1n
      );
    });
    const graceMs = 150;
    const report = await teardownProcessTree(shell.root, { graceMs });
    expect(report.elapsedMs).toBeGreaterThanOrEqual(graceMs);
    expect(report.killed).toBe(2);
    expectAllDead(shell, [stubborn!]);
  });

  it('tears down a tree three levels deep', async () => {
    const shell = spawnShell();
    await start(shell, `bash -c 'bash -c "sleep 1000 & wait" & wait' &`, 'sleep', 1);
    const tree = descendantsOf(shell.root.pid);
    expect(tree.map((stat) => stat.comm)).toEqual(['bash', 'bash', 'sleep']);
    await teardownProcessTree(shell.root, { graceMs: LONG_GRACE_MS });
    expectAllDead(shell, tree);
  });

  it('tears down 200 background children', async () => {
    const shell = spawnShell();
    const sleeps = await start(shell, 'for i in $(seq 200); do sleep 1000 & done', 'sleep', 200);
    const report = await teardownProcessTree(shell.root, { graceMs: LONG_GRACE_MS });
    expect(report.terminated).toBeGreaterThanOrEqual(200);
    expectAllDead(shell, sleeps);
  });

  it('stops a shell loop that would replace each killed child (the root is frozen first)', async () => {
    const shell = spawnShell();
    const [first] = await start(shell, 'while :; do sleep 1000; done', 'sleep', 1);
    const report = await teardownProcessTree(shell.root, { graceMs: LONG_GRACE_MS, verifyTimeoutMs: 1_000 });
    expect(report.terminated).toBe(1);
    expect(report.killed).toBe(1); // only the root: no replacement sleep was ever forked
    expectAllDead(shell, [first!]);
  });

  it('copes with processes that exit while it runs', async () => {
    const shell = spawnShell();
    const slowExit =
      'import signal, sys, time; signal.signal(signal.SIGTERM, lambda *_: (time.sleep(0.05), sys.exit(0))); time.sleep(1000)';
    const found = await start(shell, `python3 -c '${slowExit}' & sleep 1000 &`, 'sleep', 1);
    await until('python3 started', () => liveInSession(shell, 'python3').length === 1);
    const [sleeper] = found;
    // Pinned race: the sleep dies (and is reaped) between the identity check and the SIGTERM.
    const report = await teardownProcessTree(shell.root, {
      graceMs: LONG_GRACE_MS,
      kill: (pid, signal) => {
        if (pid === sleeper!.pid && signal === 'SIGTERM') {
          process.kill(pid, 'SIGKILL');
          throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
        }
        process.kill(pid, signal);
      },
    });
    expect(report.elapsedMs).toBeLessThan(LONG_GRACE_MS / 4);
    expectAllDead(shell, [...found, ...liveInSession(shell)]);
  });

  it('resolves for an already-exited shell, and still kills the orphans it left', async () => {
    const quiet = spawnShell();
    quiet.term.write('exit\r');
    await quiet.exited;
    const report = await teardownProcessTree(quiet.root, { graceMs: LONG_GRACE_MS });
    expect(report).toMatchObject({ captured: [], terminated: 0, killed: 0 });

    const leaving = spawnShell();
    const [orphan] = await start(leaving, '(sleep 1000 &); exit', 'sleep', 1);
    await leaving.exited;
    expect(isAlive(orphan!)).toBe('alive');
    const after = await teardownProcessTree(leaving.root, { graceMs: LONG_GRACE_MS });
    expect(after.captured).toEqual([{ pid: orphan!.pid, startTime: orphan!.startTime }]);
    expectAllDead(leaving, [orphan!]);
  });

  it('throws CLEANUP_FAILED naming survivors when kills do nothing; a retry succeeds', async () => {
    const shell = spawnShell();
    const sleeps = await start(shell, 'sleep 1000 & sleep 1001 &', 'sleep', 2);
    // Only the root's signals get through (SIGSTOP, then SIGCONT on failure); the children's vanish.
    const failed = teardownProcessTree(shell.root, {
      graceMs: 20,
      verifyTimeoutMs: 100,
      kill: (pid, signal) => {
        if (pid === shell.root.pid) process.kill(pid, signal);
      },
    });
    await expect(failed).rejects.toSatisfy((error) => isTerminalError(error, 'CLEANUP_FAILED'));
    await expect(failed).rejects.toThrow(/2 process\(es\) alive: \d+ \(sleep\), \d+ \(sleep\)/);
    expect(isAlive(shell.root)).toBe('alive');
    await until('the root continued, not left frozen', () => readProcStat(shell.root.pid)!.state !== 'T');

    const denied = Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
    const eperm = teardownProcessTree(shell.root, {
      graceMs: 20,
      verifyTimeoutMs: 100,
      kill: () => {
        throw denied;
      },
    });
    await expect(eperm).rejects.toSatisfy(
      (error) =>
        isTerminalError(error, 'CLEANUP_FAILED') && (error.cause as AggregateError).errors.includes(denied),
    );

    const report = await teardownProcessTree(shell.root, { graceMs: LONG_GRACE_MS });
    expect(report.terminated).toBe(2);
    expectAllDead(shell, sleeps);
  });

  it('never signals outside the root tree and session', async () => {
    // A bystander in the test runner's own session, and a root that is NOT a session leader.
    const bystander = spawnChild('/bin/sleep', ['1000'], { stdio: 'ignore' });
    const nonLeader = spawnChild('/bin/bash', ['-c', 'sleep 1001 & wait'], { stdio: 'ignore' });
    children.push(bystander, nonLeader);
    const root = identityOf(nonLeader.pid!)!;
    const [child] = await until('the non-leader root has a child', () => {
      const found = descendantsOf(root.pid);
      return found.length === 1 ? found : undefined;
    });
    const signalled: number[] = [];
    const exited = new Promise((resolve) => nonLeader.once('exit', resolve));
    await teardownProcessTree(root, {
      graceMs: LONG_GRACE_MS,
      kill: (pid, signal) => {
        signalled.push(pid);
        process.kill(pid, signal);
      },
    });
    await exited;
    expect(new Set(signalled)).toEqual(new Set([root.pid, child!.pid]));
    expect(isAlive(child!)).not.toBe('alive');
    expect(isAlive(identityOf(bystander.pid!)!)).toBe('alive');
    expect(isAlive(identityOf(process.pid)!)).toBe('alive');
  });
});

/** `/proc/<pid>/status` text, or undefined. */
function readProcStatus(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch (_gone) {
    return undefined;
  }
}
