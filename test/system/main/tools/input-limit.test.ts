// SPEC §4.7: a send's input over `maxInputBytes` is refused with INPUT_TOO_LARGE before anything is
// written — through the engine API and through the terminal_send tool — and the session keeps working.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLocalHost } from '../../../../dist/main/harness/local-host.js';
import { runTerminalTool } from '../../../../dist/main/tools/catalog.js';
import { resolveEngineConfig } from '../../../../dist/shared/config.js';
import { testEngine } from '../../../support/engine.js';

/** A small cap, so the test types little; the rule does not depend on the size. */
const CAP = 1024;

describe('input cap (maxInputBytes)', () => {
  it('defaults to 1 MiB and rejects a non-positive value naming the field', () => {
    expect(resolveEngineConfig({}).maxInputBytes).toBe(1024 * 1024);
    expect(() => resolveEngineConfig({ maxInputBytes: 0 })).toThrow(/maxInputBytes/);
  });

  it('refuses a send over the cap with INPUT_TOO_LARGE, writes nothing of it, and accepts one at the cap', async () => {
    const engine = await testEngine({ maxInputBytes: CAP });
    const session = await engine.spawn();
    const over = session.startSend({ text: `: ${'y'.repeat(CAP - 1)}` });
    await expect(over.done).rejects.toMatchObject({ code: 'INPUT_TOO_LARGE' });
    // Bytes, not characters: 600 two-byte characters are 1 200 bytes.
    const wide = session.startSend({ text: 'é'.repeat(600) });
    await expect(wide.done).rejects.toMatchObject({ code: 'INPUT_TOO_LARGE' });
    // Nothing was typed: the terminal shows no trace of either input, and the slot is free.
    const after = await session.startSend({ text: 'echo ok-$((6*7))' }).done;
    expect(after.viewport.split('\n')).toContain('ok-42');
    const page = await session.read({ count: 1000 });
    expect(page.text).not.toMatch(/yyyy|éé/);
    // Exactly at the cap is allowed: `: ` plus CAP - 2 characters.
    const atCap = await session.startSend({ text: `: ${'z'.repeat(CAP - 2)}` }).done;
    expect(atCap.exitCode).toBe(0);
    await session.close();
  });

  it('terminal_send answers an oversized input with an error result the model can act on', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'input-limit-'));
    const host = await createLocalHost({
      mode: 'danger-full-access',
      workspaceRoot: workspace,
      ptyLocal: { maxInputBytes: CAP },
    });
    try {
      const ctx = { pty: host.service('pty'), owner: 'model' };
      const opened = await runTerminalTool('terminal_open', {}, ctx);
      if (opened.isError) throw new Error(opened.text);
      const sessionId = opened.json.sessionId as string;
      const refused = await runTerminalTool('terminal_send', { sessionId, text: 'x'.repeat(CAP + 1) }, ctx);
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(
        /larger than the limit of 1024 bytes.*Nothing was typed\. Split the input/,
      );
      const next = await runTerminalTool('terminal_send', { sessionId, text: 'echo ok-$((6*7))' }, ctx);
      expect(next.isError).toBeFalsy();
      expect(next.text.split('\n')).toContain('ok-42');
    } finally {
      await host.dispose();
      rmSync(workspace, { recursive: true, force: true });
    }
  });
});
