// A send's wait bound (SPEC §7): an omitted `timeoutMs` is the engine's own default, never one the
// tools guess; a server's cap (`--max-wait`, the tools' `maxWaitMs`) travels with the send and the
// engine applies `min(timeoutMs ?? config.timeoutMs, cap, maxTimeoutMs)` — on this machine, over
// `serve --stdio`, and through ctx.pty and the tools into a world. A result whose bound the cap cut
// says so, with the bound the engine would otherwise have used. Real bash running `sleep 6`: every
// assertion is that the send came back `running` well before the sleep ended, never an exact time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Host } from '../../../../dist/main/harness/host.js';
import { createLocalHost } from '../../../../dist/main/harness/local-host.js';
import { runTerminalTool } from '../../../../dist/main/tools/catalog.js';
import type { TerminalToolContext } from '../../../../dist/main/tools/tool.js';
import { createRemoteEngine, type PtyEngine, testEngine } from '../../../support/engine.js';

const BIN = new URL('../../../../dist/main/cli/bin.js', import.meta.url).pathname;
const SERVE = [process.execPath, BIN, 'serve', '--stdio'];

/** The engine's configured default bound, far below the library default (30 s) and the sleep. */
const ENGINE_TIMEOUT_MS = 1_500;
/** The MCP server's default cap: far above the engine's bound, so it does not cut it. */
const SERVER_CAP_MS = 50_000;
/** A cap below the engine's bound. */
const NARROW_CAP_MS = 700;
/** The command runs this long; a send that came back well before it did not wait for its end. */
const SLEEP_MS = 6_000;
/** "Well below" the sleep: the bound plus room for a loaded machine, still far from the sleep's end. */
const WELL_BELOW_SLEEP_MS = 4_500;

describe('the tools never guess the engine’s default bound', () => {
  let workspace: string;
  let host: Host;

  beforeEach(() => {
    workspace = mkdtempSync(join(tmpdir(), 'wait-cap-'));
  });

  afterEach(async () => {
    await host.dispose();
    rmSync(workspace, { recursive: true, force: true });
  });

  async function tool(ctx: TerminalToolContext, name: string, args: Record<string, unknown>) {
    const outcome = await runTerminalTool(name, args, ctx);
    if (outcome.isError) throw new Error(`${name}: ${outcome.text}`);
    return outcome;
  }

  it('a host configured with timeoutMs 1500 behind a cap of 50 000 returns `sleep 6` running after its own bound', async () => {
    host = await createLocalHost({
      mode: 'workspace-write',
      workspaceRoot: workspace,
      ptyLocal: { timeoutMs: ENGINE_TIMEOUT_MS },
    });
    const ctx: TerminalToolContext = { pty: host.service('pty'), owner: 'model', maxWaitMs: SERVER_CAP_MS };
    const opened = await tool(ctx, 'terminal_open', {});
    const sessionId = opened.json.sessionId as string;
    const sent = await tool(ctx, 'terminal_send', { sessionId, text: `sleep ${SLEEP_MS / 1000}` });
    expect(sent.json.waitReason).toBe('running');
    expect(sent.json.elapsedMs).toBeGreaterThanOrEqual(ENGINE_TIMEOUT_MS - 50);
    expect(sent.json.elapsedMs).toBeLessThan(WELL_BELOW_SLEEP_MS);
    expect(sent.text).not.toContain('[wait bound:'); // the cap did not cut anything

    // A cap below the engine's bound cuts it, and the note names the engine's real default.
    const narrow: TerminalToolContext = { ...ctx, maxWaitMs: NARROW_CAP_MS };
    const waited = await tool(narrow, 'terminal_send', { sessionId });
    expect(waited.json.waitReason).toBe('running');
    expect(waited.text).toMatch(
      new RegExp(
        `\\[wait bound: ${NARROW_CAP_MS} ms, the most this server waits per call, instead of ${ENGINE_TIMEOUT_MS} ms\\]$`,
      ),
    );
    // An asked bound above the cap: cut to the cap, and the note names what was asked.
    const asked = await tool(narrow, 'terminal_send', { sessionId, timeoutMs: 60_000 });
    expect(asked.json.waitReason).toBe('running');
    expect(asked.text).toMatch(/instead of 60000 ms\]$/);
  });

  it('tools into a world: the far engine’s own default applies, and the cap cuts it there', async () => {
    host = await createLocalHost({
      mode: 'workspace-write',
      workspaceRoot: workspace,
      ptyLocal: { worlds: { far: { command: SERVE, config: { timeoutMs: ENGINE_TIMEOUT_MS } } } },
    });
    const ctx: TerminalToolContext = { pty: host.service('pty'), owner: 'model', maxWaitMs: SERVER_CAP_MS };
    const opened = await tool(ctx, 'terminal_open', { world: 'far' });
    const sessionId = opened.json.sessionId as string;
    const sent = await tool(ctx, 'terminal_send', { sessionId, text: `sleep ${SLEEP_MS / 1000}` });
    expect(sent.json.waitReason).toBe('running');
    expect(sent.json.elapsedMs).toBeLessThan(WELL_BELOW_SLEEP_MS);
    const waited = await tool({ ...ctx, maxWaitMs: NARROW_CAP_MS }, 'terminal_send', { sessionId });
    expect(waited.json.waitReason).toBe('running');
    expect(waited.text).toMatch(new RegExp(`instead of ${ENGINE_TIMEOUT_MS} ms\\]$`));
  });
});

describe('the engine applies a send’s cap', () => {
  let remote: PtyEngine | undefined;

  afterEach(async () => {
    await remote?.close();
    remote = undefined;
  });

  it('a remote engine (serve --stdio) cuts the bound to maxWaitMs and reports the cut', async () => {
    remote = await createRemoteEngine({ command: SERVE });
    const session = await remote.spawn();
    const result = await session.startSend({ text: `sleep ${SLEEP_MS / 1000}`, maxWaitMs: NARROW_CAP_MS })
      .done;
    expect(result.waitReason).toBe('running');
    expect(result.elapsedMs).toBeLessThan(WELL_BELOW_SLEEP_MS);
    expect(result.cappedWait).toEqual({ boundMs: NARROW_CAP_MS, askedMs: 30_000 });
  });

  it('the bound is min(timeoutMs ?? config timeoutMs, maxWaitMs, maxTimeoutMs); a cap that does not cut is not reported', async () => {
    const engine = await testEngine({ timeoutMs: ENGINE_TIMEOUT_MS, maxTimeoutMs: 40_000 });
    const session = await engine.spawn();
    // Above maxTimeoutMs, but the cap cuts it to an allowed bound: the caller is told, not refused.
    const cut = await session.startSend({
      text: `sleep ${SLEEP_MS / 1000}`,
      timeoutMs: 3_600_000,
      maxWaitMs: NARROW_CAP_MS,
    }).done;
    expect(cut).toMatchObject({
      waitReason: 'running',
      cappedWait: { boundMs: NARROW_CAP_MS, askedMs: 3_600_000 },
    });
    const uncut = await session.startSend({ maxWaitMs: SERVER_CAP_MS }).done;
    expect(uncut.waitReason).toBe('running'); // the engine's 1 500 ms, not the cap
    expect(uncut.elapsedMs).toBeLessThan(WELL_BELOW_SLEEP_MS);
    expect(uncut).not.toHaveProperty('cappedWait');
    for (const request of [
      { timeoutMs: 40_001, maxWaitMs: SERVER_CAP_MS }, // the cap does not bring it within maxTimeoutMs
      { maxWaitMs: 0 },
      { maxWaitMs: -5 },
      { maxWaitMs: 1.5 },
      { maxWaitMs: Number.NaN },
    ]) {
      await expect(session.startSend(request).done).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringMatching(/timeoutMs|maxWaitMs/),
      });
    }
  });
});
