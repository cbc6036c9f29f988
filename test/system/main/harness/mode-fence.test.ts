/**
 * The mode fence (SPEC §4.5) on the real engine under bubblewrap, for what the FakeEngine tests in
 * sandbox-policy.test.ts cannot show and harness-e2e.test.ts does not: a real spawn in
 * progress (bwrap probe and shell startup are truly asynchronous) holds the fence until the terminal
 * it publishes is closed, one hold per terminal; a real spawn that fails releases it; and the mode
 * fixed at spawn is the one the kernel enforces, before and after an accepted change.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Host } from '../../../../dist/main/harness/host.js';
import { createLocalHost } from '../../../../dist/main/harness/local-host.js';
import { createBubblewrapSandbox } from '../../../../dist/main/sandbox/bubblewrap.js';
import { bwrapIt } from '../../../support/bwrap.js';

const itBwrap = bwrapIt('mode fence');

/** Fast fallbacks and grace: these tests never rely on them, but a hang should fail quickly. */
const ENGINE = { idleSilenceMs: 1_000, handoffGraceMs: 100, timeoutMs: 10_000, disposeGraceMs: 300 };
const FENCED = { code: 'MODE_CHANGE_FENCED' };

let workspace: string;
let host: Host | undefined;

beforeEach(() => {
  workspace = mkdtempSync(path.join(tmpdir(), 'mode-fence-'));
});

afterEach(async () => {
  await host?.dispose();
  host = undefined;
  rmSync(workspace, { recursive: true, force: true });
});

describe('mode fence on the real engine', () => {
  itBwrap('a spawn in progress fences the owner until every terminal it opened is closed', async () => {
    host = await createLocalHost({ mode: 'read-only', workspaceRoot: workspace, ptyLocal: ENGINE });
    const pty = host.service('pty');
    const policy = host.service('sandboxPolicy');

    const first = pty.spawn('alice', { type: 'shell' });
    // Nothing has resolved yet (bwrap is still starting): the change is refused and nothing commits.
    expect(() => policy.setMode({ session: 'alice', mode: 'workspace-write' })).toThrow(
      expect.objectContaining(FENCED) as unknown as Error,
    );
    expect(() => policy.setMode({ mode: 'workspace-write' })).toThrow(
      expect.objectContaining(FENCED) as unknown as Error,
    );
    expect(policy.resolve({ session: 'alice' }).mode).toBe('read-only');
    const a = await first;
    expect(a.sandbox?.mode).toBe('read-only');
    const b = await pty.spawn('alice', { type: 'shell' });

    // Published terminals keep the fence, one hold each.
    expect(() => policy.setMode({ session: 'alice', mode: 'workspace-write' })).toThrow(
      expect.objectContaining(FENCED) as unknown as Error,
    );
    await pty.kill('alice', a.sessionId, 'done');
    expect(() => policy.setMode({ session: 'alice', mode: 'workspace-write' })).toThrow(
      expect.objectContaining(FENCED) as unknown as Error,
    );
    // The remaining terminal still runs under the mode it was opened with.
    const denied = await pty.startSend('alice', b.sessionId, { text: 'touch f; echo "rc=$?"' }).done;
    expect(denied.viewport).toMatch(/^rc=1\s*$/m);

    await pty.disposeOwned('alice');
    policy.setMode({ session: 'alice', mode: 'workspace-write' });
    const c = await pty.spawn('alice', { type: 'shell' });
    expect(c.sandbox?.mode).toBe('workspace-write');
    const allowed = await pty.startSend('alice', c.sessionId, { text: 'touch f; echo "rc=$?"' }).done;
    expect(allowed.viewport).toMatch(/^rc=0\s*$/m);
    expect(existsSync(path.join(workspace, 'f'))).toBe(true);
  });

  it.runIf(process.platform === 'linux')(
    'a spawn that fails for real (no bubblewrap) fences while in progress and releases afterwards',
    async () => {
      host = await createLocalHost({
        mode: 'workspace-write',
        workspaceRoot: workspace,
        ptyLocal: ENGINE,
        sandbox: createBubblewrapSandbox({ bwrapPath: '/nonexistent/bwrap' }),
      });
      const pty = host.service('pty');
      const policy = host.service('sandboxPolicy');
      const failing = pty.spawn('alice', { type: 'shell' });
      expect(() => policy.setMode({ session: 'alice', mode: 'danger-full-access' })).toThrow(
        expect.objectContaining(FENCED) as unknown as Error,
      );
      await expect(failing).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
      expect(policy.isFenced('alice')).toBe(false);
      policy.setMode({ session: 'alice', mode: 'danger-full-access' });
      const opened = await pty.spawn('alice', { type: 'shell' });
      expect(opened.sandbox?.mode).toBe('danger-full-access');
    },
  );
});
