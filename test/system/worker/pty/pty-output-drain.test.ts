/**
 * The pty output drain against a real pty (node-pty, bash): output a program wrote before it blocked
 * reading the terminal is handed over by the drain without a turn of the event loop, in order and
 * decoded as the session decodes node-pty's bytes (a UTF-8 character split across the drain stays whole), and
 * the drain proves nothing while the stream is paused.
 */
import fs from 'node:fs';
import { type IPty, spawn } from 'node-pty';
import { afterEach, describe, expect, it } from 'vitest';
import { descendantsOf, isAlive, processesInSession } from '../../../../dist/worker/proc/proc-probe.js';
import { inspectThreadStdinWait } from '../../../../dist/worker/proc/stdin-wait.js';
import { nodePtyReadStream, PtyOutputDrain } from '../../../../dist/worker/pty/pty-output-drain.js';
import { PtyTextDecoder } from '../../../../dist/worker/pty/pty-text-decoder.js';
import { until } from '../../../support/until.js';

/** How long a synchronous wait for the program to block may take before the test fails. */
const BLOCK_WAIT_MS = 5_000;

interface Program {
  term: IPty;
  rdev: number;
  /** Everything node-pty delivered through `onData`, in order. */
  received: string[];
  exited: Promise<void>;
}

const programs: Program[] = [];

/** Runs `script` under bash in a pty; it should print `ready` and then block reading the terminal. */
async function start(script: string): Promise<Program> {
  const term = spawn('/bin/bash', ['--norc', '--noprofile', '-c', script], {
    cols: 120,
    rows: 30,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'dumb', LC_ALL: 'C.UTF-8' },
    encoding: null, // bytes, decoded as a session does
  });
  const received: string[] = [];
  const decoder = new PtyTextDecoder();
  term.onData((data) => received.push(decoder.decode(data as unknown as Buffer)));
  const exited = new Promise<void>((resolve) => term.onExit(() => resolve()));
  const rdev = fs.statSync((term as IPty & { ptsName: string }).ptsName).rdev;
  const program = { term, rdev, received, exited };
  programs.push(program);
  await until('the program printed ready', () => received.join('').includes('ready'));
  await until('the program blocked reading the terminal', () => blocked(program) !== undefined);
  return program;
}

/** The run counter of the program's main thread while it is blocked reading the terminal. */
function blocked(program: Program): number | undefined {
  const wait = inspectThreadStdinWait(program.term.pid, program.term.pid, program.rdev);
  return wait.verdict === 'waiting' ? wait.switches : undefined;
}

/**
 * Types `input` and waits, without yielding to the event loop, until the program has run and blocked
 * again: whatever it printed meanwhile is still in the kernel (libuv cannot read it during this turn).
 */
function typeAndWaitBlockedAgain(program: Program, input: string): void {
  const before = blocked(program);
  fs.writeSync(masterFd(program), input);
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const deadline = performance.now() + BLOCK_WAIT_MS;
  for (;;) {
    const now = blocked(program);
    if (now !== undefined && now !== before) return;
    if (performance.now() > deadline) throw new Error('the program did not block again');
    Atomics.wait(sleeper, 0, 0, 1);
  }
}

/** Drains until the kernel holds nothing more, in this same turn; returns the outcomes. */
function drainAll(drain: PtyOutputDrain): string[] {
  const outcomes: string[] = [];
  for (let i = 0; i < 64; i++) {
    const outcome = drain.drain();
    outcomes.push(outcome);
    if (outcome !== 'read') break;
  }
  return outcomes;
}

afterEach(async () => {
  for (const program of programs.splice(0)) {
    const sid = program.term.pid;
    for (const stat of descendantsOf(sid)) killQuietly(stat.pid);
    program.term.kill('SIGKILL');
    await program.exited;
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

/** The pty master node-pty reads (non-blocking). */
function masterFd(program: Program): number {
  return (program.term as IPty & { fd: number }).fd;
}

function drainOf(program: Program): PtyOutputDrain {
  const stream = nodePtyReadStream(program.term);
  expect(stream).toBeDefined();
  return new PtyOutputDrain(masterFd(program), stream);
}

describe.runIf(process.platform === 'linux')('pty output drain (real pty)', () => {
  it('hands over what a program printed before it blocked, in this turn, then proves nothing is left', async () => {
    const program = await start(`printf 'ready\\n'; read a; printf 'got-%s\\n' $((6*7)); read b`);
    const drain = drainOf(program);
    const before = program.received.length;
    typeAndWaitBlockedAgain(program, 'x\r');
    expect(program.received.length).toBe(before); // nothing delivered without the drain
    const outcomes = drainAll(drain);
    expect(outcomes.at(-1)).toBe('empty');
    expect(outcomes).toContain('read');
    const delivered = program.received.slice(before).join('');
    expect(delivered.split('\r\n')).toEqual(['x', 'got-42', '']);
    // Nothing was left behind for libuv: a later turn delivers no more.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(program.received.slice(before).join('')).toBe(delivered);
  });

  it('a UTF-8 character split by the drain is decoded whole', async () => {
    // No echo, so that nothing comes between the two bytes of the character.
    const program = await start(
      `stty -echo; printf 'ready\\n'; read a; printf '\\xc3'; read b; printf '\\xa9-ok\\n'; read c`,
    );
    const drain = drainOf(program);
    const before = program.received.length;
    typeAndWaitBlockedAgain(program, 'x\r'); // prints the lead byte only, then blocks
    expect(drainAll(drain)).toEqual(['read', 'empty']); // the drain took the lone lead byte
    typeAndWaitBlockedAgain(program, 'y\r'); // the continuation byte, through the drain or libuv
    drainAll(drain);
    await until('the rest arrived', () => program.received.slice(before).join('').includes('-ok'));
    const text = program.received.slice(before).join('');
    expect(text).toContain('\u00e9-ok');
    expect(text).not.toContain('\ufffd');
  });

  it('proves nothing while the stream is paused or after close, and reads nothing then', async () => {
    const program = await start(`printf 'ready\\n'; read a; printf 'late-%s\\n' $((6*7)); read b`);
    const drain = drainOf(program);
    const before = program.received.length;
    program.term.pause();
    typeAndWaitBlockedAgain(program, 'x\r');
    expect(drain.drain()).toBe('unavailable');
    program.term.resume();
    drain.close();
    expect(drain.drain()).toBe('unavailable');
    await until('libuv delivered the output', () =>
      program.received.slice(before).join('').includes('late-42'),
    );
  });
});
