/**
 * What only the zsh dialect does (SPEC §3 `shellPath`, §8): a private ZDOTDIR holding the engine's rc
 * files — so the user's are never read and the engine's always are — removed at close; its line
 * editor recognized by the descriptor it reads. The shared behaviour runs in dialect-behaviour.test.ts.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ThreadWait } from '../../../../dist/worker/proc/stdin-wait.js';
import { zshDialect } from '../../../../dist/worker/shell/zsh.js';
import { type TerminalSendResult, type TerminalSession, testEngine } from '../../../support/engine.js';

const lines = (text: string) => text.split('\n');

/** Sends `text` and expects proven readiness. */
async function run(session: TerminalSession, text: string): Promise<TerminalSendResult> {
  const result = await session.startSend({ text }).done;
  expect(result.waitReason, result.viewport).toBe('stdin_read');
  return result;
}

/** The ZDOTDIR the shell was started with (its initial environment; the rc unsets the variable). */
function startupZdotdir(pid: number): string | undefined {
  const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  return environ.find((entry) => entry.startsWith('ZDOTDIR='))?.slice('ZDOTDIR='.length);
}

describe('zsh dialect: startup files', () => {
  let home: string;
  let userZdotdir: string;
  beforeEach(() => {
    home = mkdtempSync(path.join(tmpdir(), 'zsh-home-'));
    userZdotdir = path.join(home, 'zdotdir');
    mkdirSync(userZdotdir);
    // Every file zsh could read for an interactive shell, in $HOME and in the user's own ZDOTDIR.
    for (const dir of [home, userZdotdir]) {
      for (const file of ['.zshenv', '.zprofile', '.zshrc', '.zlogin']) {
        writeFileSync(path.join(dir, file), `print user-rc-$((40+2)); USER_RC=${file}\n`);
      }
    }
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("reads the engine's rc, none of the user's, and removes its ZDOTDIR at close", async () => {
    process.env.ZDOTDIR = userZdotdir;
    try {
      const engine = await testEngine({ dialect: 'zsh' });
      const session = await engine.spawn({ env: { HOME: home } });
      expect(session.motd).not.toContain('user-rc-42');
      const probe = await run(session, 'echo user-rc-set=$+USER_RC'); // zsh: 1 when set, else 0
      expect(lines(probe.viewport)).toContain('user-rc-set=0');
      expect(probe.exitCode).toBe(0); // the marker from the engine's precmd
      const zdotdir = startupZdotdir(session.pid);
      expect(zdotdir).toBeDefined();
      expect(zdotdir).not.toBe(userZdotdir);
      expect(existsSync(path.join(zdotdir!, '.zshrc'))).toBe(true);
      await session.close();
      expect(existsSync(zdotdir!), 'the per-session ZDOTDIR is removed at close').toBe(false);
    } finally {
      delete process.env.ZDOTDIR;
    }
  });

  it("a zsh the user starts reads the user's files, not the engine's", async () => {
    const engine = await testEngine({ dialect: 'zsh', idleSilenceMs: 5_000 });
    const session = await engine.spawn({ env: { HOME: home } });
    expect(lines((await run(session, 'echo zdotdir-set=$+ZDOTDIR')).viewport)).toContain('zdotdir-set=0');
    const nested = await run(session, 'zsh -i');
    expect(lines(nested.viewport)).toContain('user-rc-42');
    expect(nested.exitCode).toBeUndefined(); // no marker of ours: a stdin wait of its line editor
    expect((await run(session, 'exit')).exitCode).toBe(0);
  });

  it('a command that changes PS1 cannot break later sends: precmd re-asserts the prompt', async () => {
    const engine = await testEngine({ dialect: 'zsh', idleSilenceMs: 5_000 });
    const session = await engine.spawn();
    await run(session, "PS1='custom> '; setopt PROMPT_SUBST");
    const after = await run(session, '(exit 3)');
    expect(after.exitCode).toBe(3);
    expect(after.elapsedMs).toBeLessThan(1_000);
  });

  it('a job notice redrawn at the prompt keeps the prompt proven', async () => {
    const engine = await testEngine({ dialect: 'zsh', idleSilenceMs: 5_000 });
    const session = await engine.spawn();
    await run(session, 'sleep 0.2 &');
    await new Promise((resolve) => setTimeout(resolve, 500)); // the notice arrives between sends
    const waited = await session.startSend({}).done;
    expect(waited.waitReason).toBe('stdin_read');
    expect(waited.viewport).toMatch(/done\s+sleep 0\.2/);
    // ZLE reprinted the marker with its prompt, so the prompt is proven; it is the same prompt (same
    // number) whose status `sleep 0.2 &` already reported, so no exit code is given twice.
    expect(waited.exitCode).toBeUndefined();
    expect((await run(session, 'echo ok-$((6*7))')).exitCode).toBe(0);
  });
});

describe('zsh dialect: line editor', () => {
  const wait = (fd: number, syscall = 'read'): ThreadWait => ({
    pid: 1,
    tid: 1,
    verdict: 'waiting',
    syscall,
    fd,
  });

  it("ZLE reads the shell's own terminal descriptor; the read builtin reads fd 0", () => {
    expect(zshDialect.isLineEditorWait(wait(10))).toBe(true); // at a prompt, `vared`, a continuation
    expect(zshDialect.isLineEditorWait(wait(11, 'poll'))).toBe(true); // a key sequence's KEYTIMEOUT
    expect(zshDialect.isLineEditorWait(wait(0))).toBe(false); // `read x`
    expect(zshDialect.isLineEditorWait(wait(3))).toBe(false); // `read -u 3` on a terminal the user opened
  });
});
