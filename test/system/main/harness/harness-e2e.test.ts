// The harness on the real engine (from dist/, built with `npx tsc -p .`): pty-local spawning real bash
// under bubblewrap with the resolved policy, owner isolation, the mode fence across a reload, and
// disposal leaving no process behind.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Host } from '../../../../dist/main/harness/host.js';
import { createLocalHost } from '../../../../dist/main/harness/local-host.js';

/** Fast fallbacks: these tests never rely on them, but a hang should fail quickly. */
const ENGINE = { idleSilenceMs: 1_000, handoffGraceMs: 100, timeoutMs: 10_000 };

let workspace: string;
let host: Host | undefined;

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), 'harness-e2e-'));
});

afterEach(async () => {
  await host?.dispose();
  host = undefined;
  rmSync(workspace, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('harness on the real engine', () => {
  it('spawns bash confined by the resolved policy, in the workspace root, isolated per owner', async () => {
    host = await createLocalHost({ mode: 'read-only', workspaceRoot: workspace, ptyLocal: ENGINE });
    const pty = host.service('pty');
    const opened = await pty.spawn('alice', { type: 'shell' });
    expect(opened.sandbox).toEqual({ mode: 'read-only', workspaceRoot: workspace });
    const result = await pty.startSend('alice', opened.sessionId, { text: 'pwd; touch x; echo "rc=$?"' })
      .done;
    expect(result.waitReason).toBe('stdin_read');
    expect(result.viewport).toContain(`${workspace}\n`);
    expect(result.viewport).toMatch(/Read-only file system\nrc=1/);
    await expect(pty.read('bob', opened.sessionId)).rejects.toMatchObject({ code: 'UNKNOWN_SESSION' });
    await pty.kill('alice', opened.sessionId, 'done');
    expect(alive(opened.pid)).toBe(false);
  });

  it('fences a mode change while a real session is open, also across a pty-local reload', async () => {
    host = await createLocalHost({ mode: 'workspace-write', workspaceRoot: workspace, ptyLocal: ENGINE });
    const pty = host.service('pty');
    const policy = host.service('sandboxPolicy');
    const opened = await pty.spawn('alice', { type: 'shell' });
    await host.reload('pty-local');
    expect(() => policy.setMode({ session: 'alice', mode: 'danger-full-access' })).toThrow(
      expect.objectContaining({ code: 'MODE_CHANGE_FENCED' }) as unknown as Error,
    );
    const after = await pty.startSend('alice', opened.sessionId, { text: 'echo still-here' }).done;
    expect(after.viewport).toContain('still-here');
    await pty.kill('alice', opened.sessionId, 'done');
    policy.setMode({ session: 'alice', mode: 'danger-full-access' });
    const unconfined = await pty.spawn('alice', { type: 'shell' });
    expect(unconfined.sandbox?.mode).toBe('danger-full-access');
  });

  it('disposeOwned and host dispose close every real shell, including a running command', async () => {
    host = await createLocalHost({ mode: 'workspace-write', workspaceRoot: workspace, ptyLocal: ENGINE });
    const pty = host.service('pty');
    const a = await pty.spawn('alice', { type: 'shell' });
    const b = await pty.spawn('bob', { type: 'shell' });
    const running = pty.startSend('alice', a.sessionId, { text: 'sleep 100' });
    await pty.disposeOwned('alice');
    // The in-flight send settles (it does not hang on the closed session).
    await running.done;
    expect(alive(a.pid)).toBe(false);
    expect(alive(b.pid)).toBe(true);
    await host.dispose();
    host = undefined;
    expect(alive(b.pid)).toBe(false);
  });
});
