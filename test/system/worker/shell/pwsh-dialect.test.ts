/**
 * The pwsh dialect (SPEC §8). PowerShell cannot be installed on our CI machines, so these tests run
 * against a PSReadLine-like test double (test/fixtures/fake-pwsh.py: raw mode, a cursor-position request
 * before every prompt that blocks until answered, echo of the setup line) — and against a real `pwsh`
 * too when one is on PATH.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { testEngine } from '../../../support/engine.js';

const DOUBLE = fileURLToPath(new URL('../../../fixtures/fake-pwsh.py', import.meta.url));
const doubleShell = { dialect: 'pwsh' as const, shellPath: 'python3', shellArgs: [DOUBLE] };

function realPwsh(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v pwsh'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

const lines = (text: string) => text.split('\n');

describe('pwsh dialect against a PSReadLine-like double', () => {
  it('publishes after a proven stdin wait, installs the marker prompt, and settles sends on it', async () => {
    const engine = await testEngine(doubleShell);
    const session = await engine.spawn();
    expect(session.motd).toContain('PowerShell 7.9 (test double)');
    const hi = await session.startSend({ text: 'echo hi' }).done;
    expect(hi).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, cwd: process.cwd() });
    expect(lines(hi.viewport)).toContain('hi');
    const bad = await session.startSend({ text: 'Get-Nothing' }).done;
    expect(bad).toMatchObject({ waitReason: 'stdin_read', exitCode: 1 });
  });

  it('answers the cursor-position requests (the double would block forever otherwise)', async () => {
    const engine = await testEngine(doubleShell);
    const session = await engine.spawn();
    const count = await session.startSend({ text: 'cpr-count' }).done;
    expect(Number(lines(count.viewport)[1])).toBeGreaterThanOrEqual(2); // at start and after setup
  });

  it('pins UTF-8 before the prompt, drops the bash marker variables and sets NO_COLOR', async () => {
    process.env.PROMPT_COMMAND = 'echo leaked';
    try {
      const engine = await testEngine(doubleShell);
      const session = await engine.spawn();
      expect(lines((await session.startSend({ text: 'utf8-pinned' }).done).viewport)[1]).toBe('True');
      expect(lines((await session.startSend({ text: '$env:NO_COLOR' }).done).viewport)[1]).toBe('1');
      expect(lines((await session.startSend({ text: '$env:PROMPT_COMMAND' }).done).viewport)[1]).toBe('');
      expect(lines((await session.startSend({ text: '$env:PS1' }).done).viewport)[1]).toBe('');
    } finally {
      delete process.env.PROMPT_COMMAND;
    }
  });

  it('cancel interrupts a running command and the prompt comes back', async () => {
    const engine = await testEngine(doubleShell);
    const session = await engine.spawn();
    const op = session.startSend({ text: 'Start-Sleep 100' });
    await new Promise((resolve) => setTimeout(resolve, 150));
    await op.cancel();
    expect(await op.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 1 });
  });

  it('echoed setup text never publishes: without the installed prompt, one deadline rejects the spawn', async () => {
    process.env.FAKE_PWSH_MODE = 'ignore-setup';
    try {
      const timeoutMs = 800;
      const engine = await testEngine({ ...doubleShell, timeoutMs, idleSilenceMs: 100, handoffGraceMs: 50 });
      const started = performance.now();
      await expect(engine.spawn()).rejects.toMatchObject({ code: 'SPAWN_TIMEOUT' });
      const elapsed = performance.now() - started;
      // One deadline for the whole startup loop: not restarted by the setup phase.
      expect(elapsed).toBeGreaterThanOrEqual(timeoutMs - 20);
      expect(elapsed).toBeLessThan(timeoutMs + 600);
    } finally {
      delete process.env.FAKE_PWSH_MODE;
    }
  });
});

const pwsh = realPwsh();
if (pwsh === undefined) {
  console.warn('[pwsh-dialect] real PowerShell not on PATH: only the test double ran');
}

describe.skipIf(pwsh === undefined)('pwsh dialect against a real pwsh', () => {
  it('publishes and settles `Write-Output hi` with exit code 0', async () => {
    const engine = await testEngine({ dialect: 'pwsh', timeoutMs: 60_000 });
    const session = await engine.spawn();
    const hi = await session.startSend({ text: 'Write-Output hi' }).done;
    expect(hi).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    expect(lines(hi.viewport)).toContain('hi');
  });
});
