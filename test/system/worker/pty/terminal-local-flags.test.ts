/**
 * The termios reader of agent-pty's pty addon (SPEC §11, for §13): what a real bash on a real pty sets
 * is read back from the master. readline's prompt turns canonical mode and echo off (it edits the line
 * itself), `read -s` keeps lines canonical without echo (a password prompt), `read x` has both on.
 */
import { closeSync, openSync } from 'node:fs';
import type { IPty } from 'node-pty';
import { afterEach, expect, it } from 'vitest';
import { ptyBinding } from '../../../../dist/worker/pty/pty-binding.js';
import { readTerminalLocalFlags } from '../../../../dist/worker/pty/terminal-local-flags.js';
import { until } from '../../../support/until.js';

let shell: { term: IPty; exited: Promise<void> } | undefined;

afterEach(async () => {
  if (shell === undefined) return;
  shell.term.kill('SIGKILL');
  await shell.exited;
  shell = undefined;
});

/** A bash on a fresh pty, with the prompt `$ ` and the master's fd. */
function startBash(): { term: IPty; fd: number; output: () => string } {
  const term = ptyBinding().nodePty.spawn('/bin/bash', ['--noprofile', '--norc', '-i'], {
    name: 'xterm',
    cols: 80,
    rows: 24,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PS1: '$ ', TERM: 'xterm', HOME: '/tmp' },
  });
  let text = '';
  term.onData((chunk) => {
    text += chunk;
  });
  shell = { term, exited: new Promise((resolve) => term.onExit(() => resolve())) };
  return { term, fd: (term as unknown as { fd: number }).fd, output: () => text };
}

/** Waits until the terminal's local flags are `expected` (the program sets them when it starts reading). */
async function flagsBecome(fd: number, expected: { canonical: boolean; echo: boolean }): Promise<void> {
  await until(`local flags ${JSON.stringify(expected)}`, () => {
    const flags = readTerminalLocalFlags(fd);
    return flags.canonical === expected.canonical && flags.echo === expected.echo;
  });
  expect(readTerminalLocalFlags(fd)).toEqual(expected);
}

it("reads back what bash's line editor, `read -s` and `read x` set on the terminal", async () => {
  const { term, fd, output } = startBash();
  await until('the first prompt', () => output().endsWith('$ '));
  await flagsBecome(fd, { canonical: false, echo: false });

  term.write('read -s secret; echo "got-$secret"\r');
  await flagsBecome(fd, { canonical: true, echo: false });
  term.write('hunter2\r');
  // bash expands `$secret`: the typed command line holds `got-$secret`, never `got-hunter2`.
  await until('the hidden answer', () => /^got-hunter2\r?$/m.test(output()));
  await flagsBecome(fd, { canonical: false, echo: false });

  term.write('read line; echo "got-$line"\r');
  await flagsBecome(fd, { canonical: true, echo: true });
  term.write('abc\r');
  await until('the echoed answer', () => /^got-abc\r?$/m.test(output()));
  await flagsBecome(fd, { canonical: false, echo: false });
});

it('names the errno of a descriptor that is no terminal, or not open', () => {
  expect(() => readTerminalLocalFlags(0x7fff_fff0)).toThrow(expect.objectContaining({ code: 'EBADF' }));
  const file = openSync('/dev/null', 'r');
  try {
    expect(() => readTerminalLocalFlags(file)).toThrow(expect.objectContaining({ code: 'ENOTTY' }));
  } finally {
    closeSync(file);
  }
});
