/**
 * The pty input writer on a real pty master (non-blocking, as node-pty opens it): a small write reaches
 * the kernel before `write()` returns (no thread-pool round trip before a send may look for readiness),
 * and a write larger than the tty input queue still arrives whole once its reader starts reading.
 */
import { type IPty, spawn } from 'node-pty';
import { afterEach, describe, expect, it } from 'vitest';
import { PtyInputWriter } from '../../../../dist/worker/pty/pty-input-writer.js';
import { until } from '../../../support/until.js';

interface Program {
  term: IPty;
  received: string[];
  exited: Promise<void>;
}

const programs: Program[] = [];

/** Runs `script` under bash in a pty (raw, no echo) and waits until it printed `ready`. */
async function start(script: string): Promise<Program> {
  const term = spawn(
    '/bin/bash',
    ['--norc', '--noprofile', '-c', `stty raw -echo; printf 'ready\\n'; ${script}`],
    {
      cols: 120,
      rows: 30,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'dumb' },
    },
  );
  const received: string[] = [];
  term.onData((data) => received.push(data));
  const exited = new Promise<void>((resolve) => term.onExit(() => resolve()));
  const program = { term, received, exited };
  programs.push(program);
  await until('the program printed ready', () => received.join('').includes('ready'));
  return program;
}

function masterFd(program: Program): number {
  return (program.term as IPty & { fd: number }).fd;
}

afterEach(async () => {
  for (const program of programs.splice(0)) {
    program.term.kill('SIGKILL');
    await program.exited;
  }
});

describe.runIf(process.platform === 'linux')('pty input writer (real pty)', () => {
  it('on a non-blocking master a small write is in the kernel before write() returns', async () => {
    const program = await start(`head -c 3 | tr a-z A-Z; read -r _`);
    const writer = new PtyInputWriter(masterFd(program), undefined, true);
    let outcome: string | undefined;
    void writer
      .write('abc', () => false)
      .then((result) => {
        outcome = result;
      });
    // Resolved within this turn's microtasks: no callback from libuv's thread pool was needed.
    await Promise.resolve();
    expect(outcome).toBe('written');
    await until('the program read it', () => program.received.join('').includes('ABC'));
    writer.close();
  });

  it('a write larger than the tty input queue arrives whole once the reader reads', async () => {
    const program = await start(`sleep 0.3; head -c 20000 | wc -c; read -r _`);
    const writer = new PtyInputWriter(masterFd(program), undefined, true);
    // The reader sleeps: the queue fills (EAGAIN) and the writer retries until it drains.
    expect(await writer.write('a'.repeat(20_000), () => false)).toBe('written');
    await until('the program counted the input', () => /\b20000\b/.test(program.received.join('')));
    writer.close();
  });
});
