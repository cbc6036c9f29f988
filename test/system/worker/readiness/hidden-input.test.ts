/**
 * Hidden input (SPEC §13): a send that settles at a prompt whose input the terminal does not echo
 * says `inputHidden: true` (the master's termios: canonical mode, echo off), `'likely'` where only the
 * prompt's words say it (a raw-mode prompt), and never at a shell's or a REPL's own prompt. Real
 * programs on real ptys: python's getpass, bash's `read -s`, ssh-keygen, a sudo-like prompt.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type TerminalSession, testEngine } from '../../../support/engine.js';
import { startTestSshd } from '../../../support/sshd.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'hidden-input-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function bash(): Promise<TerminalSession> {
  const engine = await testEngine({ disposeGraceMs: 300 });
  return engine.spawn({ cwd: dir });
}

/** Sends `text` and expects proven readiness; returns the result. */
async function prompt(session: TerminalSession, text: string) {
  const result = await session.startSend({ text, timeoutMs: 10_000 }).done;
  expect(result.waitReason, result.viewport).toBe('stdin_read');
  return result;
}

it("flags python's getpass and gives the answer to the program, not the output", async () => {
  const session = await bash();
  const asked = await prompt(
    session,
    `python3 -c 'import getpass; s = getpass.getpass("Secret: "); print("len", len(s))'`,
  );
  expect(asked.inputHidden).toBe(true);
  const answered = await prompt(session, 'hunter2');
  expect(answered.viewport).toMatch(/^len 7\s*$/m);
  expect(answered.viewport).not.toContain('hunter2');
  expect(answered.inputHidden).toBeUndefined();
});

it('flags `read -s` and a sudo-like getpass prompt, not `read x`', async () => {
  const session = await bash();
  expect((await prompt(session, 'read -s -p "Password: " pw')).inputHidden).toBe(true);
  expect((await prompt(session, 'x')).inputHidden).toBeUndefined();
  const sudo = await prompt(
    session,
    `python3 -c 'import getpass; getpass.getpass("[sudo] password for x: ")'`,
  );
  expect(sudo.inputHidden).toBe(true);
  expect((await prompt(session, 'y')).inputHidden).toBeUndefined();
  // A visible canonical read is no secret, whatever its prompt says.
  expect((await prompt(session, 'read -p "Password hint: " hint')).inputHidden).toBeUndefined();
  await prompt(session, 'z');
});

it("flags ssh-keygen's passphrase prompt", async () => {
  const session = await bash();
  const key = path.join(dir, 'key');
  const asked = await prompt(session, `ssh-keygen -q -t ed25519 -f ${key}`);
  expect(asked.viewport).toMatch(/passphrase/i);
  expect(asked.inputHidden).toBe(true);
  await session.signal('SIGINT');
});

it("says 'likely' for a password prompt read in raw mode, where the flags cannot prove it", async () => {
  const session = await bash();
  const script =
    'import sys, tty, termios, os\n' +
    'old = termios.tcgetattr(0)\n' +
    'tty.setraw(0)\n' +
    'sys.stdout.write("Password: "); sys.stdout.flush()\n' +
    'os.read(0, 1)\n' +
    'termios.tcsetattr(0, termios.TCSADRAIN, old)\n';
  const file = path.join(dir, 'raw.py');
  await import('node:fs').then((fs) => fs.writeFileSync(file, script));
  const asked = await prompt(session, `python3 ${file}`);
  expect(asked.inputHidden).toBe('likely');
  expect((await prompt(session, 'x')).inputHidden).toBeUndefined();
});

it("never flags bash's prompt, zsh's prompt or the python REPL, even after output that mentions a password", async () => {
  const session = await bash();
  const atBash = await prompt(session, 'printf "Password:\\n"; echo done-$((6*7))');
  expect(atBash.inputHidden).toBeUndefined();
  const repl = await prompt(session, 'python3 -q');
  expect(repl.foreground?.command).toBe('python3');
  expect(repl.inputHidden).toBeUndefined();
  expect((await prompt(session, 'print("Password:", 6*7)')).inputHidden).toBeUndefined();
  await prompt(session, 'exit()');
  const zsh = await (await testEngine({ disposeGraceMs: 300 })).spawn({ cwd: dir, dialect: 'zsh' });
  expect((await prompt(zsh, 'echo Password: $((6*7))')).inputHidden).toBeUndefined();
  const zle = await zsh.startSend({ text: 'echo "unfinished', timeoutMs: 10_000 }).done;
  expect(zle.inputHidden).toBeUndefined();
});

it("says 'likely' for a password prompt behind ssh, where the local flags show only ssh's raw mode", async () => {
  const sshd = await startTestSshd();
  try {
    const session = await bash();
    const [ssh, ...rest] = sshd.ssh(`read -s -p "Password: " pw; echo; echo got-\${#pw}`);
    const quoted = [ssh!, '-tt', ...rest].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ');
    // The relay's silence tier settles it: the remote reader is out of sight.
    const asked = await session.startSend({ text: quoted, timeoutMs: 15_000 }).done;
    expect(asked.viewport).toMatch(/Password: $/);
    expect(asked.waitReason).toBe('inferred_idle');
    expect(asked.inputHidden).toBe('likely');
    const answered = await session.startSend({ text: 'abc', timeoutMs: 15_000 }).done;
    expect(answered.viewport).toMatch(/got-3/);
    expect(answered.inputHidden).toBeUndefined();
  } finally {
    await sshd.stop();
  }
});
