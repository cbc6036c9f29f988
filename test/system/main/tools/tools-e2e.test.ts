// The terminal tools on the real engine (dist/, built with `npx tsc -p .`) and real bash: the
// truncation note's terminal_read call pages to exactly the lines before the shown tail, and the
// unproven wait reasons (inferred_idle behind a relay, running at the wait bound) render as such.
// Fallbacks are shortened so the test stays fast; nothing here depends on their exact values beyond
// their order of magnitude.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Host } from '../../../../dist/main/harness/host.js';
import { createLocalHost } from '../../../../dist/main/harness/local-host.js';
import { runTerminalTool } from '../../../../dist/main/tools/catalog.js';
import type { TerminalToolContext } from '../../../../dist/main/tools/tool.js';

/** Silence bound well above a shell's reaction time, well below the test budget. */
const IDLE_SILENCE_MS = 300;
/** Absolute bound of one send, for the timeout case. */
const TIMEOUT_MS = 1_200;

let workspace: string;
let host: Host;
let ctx: TerminalToolContext;

beforeEach(async () => {
  workspace = mkdtempSync(join(tmpdir(), 'tools-e2e-'));
  host = await createLocalHost({
    mode: 'workspace-write',
    workspaceRoot: workspace,
    ptyLocal: { idleSilenceMs: IDLE_SILENCE_MS, handoffGraceMs: 100, timeoutMs: TIMEOUT_MS },
  });
  ctx = { pty: host.service('pty'), owner: 'model', maxResultBytes: 1024 };
});

afterEach(async () => {
  await host.dispose();
  rmSync(workspace, { recursive: true, force: true });
});

async function run(name: string, args: Record<string, unknown>) {
  const outcome = await runTerminalTool(name, args, ctx);
  if (outcome.isError) throw new Error(`${name}: ${outcome.text}`);
  return outcome;
}

describe('terminal tools on real bash', () => {
  it('caps a flood to its tail and the note’s terminal_read call pages to the lines just before it', async () => {
    const { json } = await run('terminal_open', {});
    const sessionId = json.sessionId as string;
    const sent = await run('terminal_send', { sessionId, text: 'seq 1 3000' });
    expect(Buffer.byteLength(sent.text)).toBeLessThanOrEqual(1024);
    expect(sent.text).toMatch(
      /\n3000\n\[wait: stdin_read\]\n\[exit: 0\]\n\[session: running\]\n\[truncated\] Older output of this send was dropped/,
    );
    const firstShown = Number((sent.json.output as string).split('\n')[0]);
    const call = /page back with terminal_read (\{.*\})\.$/.exec(sent.text)?.[1];
    expect(call).toBeDefined();
    const page = await run('terminal_read', { ...JSON.parse(call!), count: 2 });
    expect(page.json.text).toBe(`${firstShown - 2}\n${firstShown - 1}`);
  });

  it('renders inferred_idle (behind a relay) and running (a busy loop at its bound) as not proven, without an exit code', async () => {
    const { json } = await run('terminal_open', {});
    const sessionId = json.sessionId as string;
    // script(1) relays a pty of its own: the probes cannot see the real reader, silence decides.
    const idle = await run('terminal_send', {
      sessionId,
      text: "script -qc 'echo start-$((6*7)); sleep 1; echo end-$((6*7))' /dev/null",
    });
    expect(idle.json).toMatchObject({ waitReason: 'inferred_idle', foreground: { command: 'script' } });
    expect(idle.json).not.toHaveProperty('exitCode');
    expect(idle.text).toMatch(
      /start-42\n\[wait: inferred_idle\] Not proven finished.*\n\[foreground: script\]\n\[session: running\]$/,
    );
    // Waiting without typing (nothing goes into the relay) until the shell's prompt proves the end.
    const later: string[] = [];
    let rest = await run('terminal_send', { sessionId });
    for (let attempt = 0; rest.json.waitReason !== 'stdin_read' && attempt < 20; attempt++) {
      later.push(rest.json.output as string);
      rest = await run('terminal_send', { sessionId });
    }
    later.push(rest.json.output as string);
    expect(rest.json).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    expect(later.join('\n').split('\n')).toContain('end-42');
    const ticking = await run('terminal_send', {
      sessionId,
      text: 'while :; do echo tick; sleep 0.05; done',
    });
    expect(ticking.json).toMatchObject({ waitReason: 'running' });
    expect(ticking.json).not.toHaveProperty('exitCode');
    expect(ticking.text).toMatch(
      /tick\n\[wait: running\] The command is still running: .*\n(?:\[foreground: sleep\]\n)?\[session: running\]$/,
    );
    await run('terminal_signal', { sessionId, signal: 'SIGINT' });
    const back = await run('terminal_send', { sessionId, text: 'echo done-$((6*7))' });
    expect(back.json).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    expect((back.json.output as string).split('\n')).toContain('done-42');
  });

  it('a quiet step past its bound renders running in words; a send without text then waits for its end', async () => {
    const { json } = await run('terminal_open', {});
    const sessionId = json.sessionId as string;
    const step = await run('terminal_send', {
      sessionId,
      text: 'sleep 2.5; echo late-$((6*7))',
      timeoutMs: 600,
    });
    expect(step.json).toMatchObject({ waitReason: 'running', foreground: { command: 'sleep' } });
    expect(step.json).not.toHaveProperty('exitCode');
    expect(step.text).toMatch(
      /\n\[wait: running\] The command is still running: .*Keep waiting with terminal_send \{"sessionId":"shell-1"\} \(no text\), or stop it with terminal_signal SIGINT\.\n\[foreground: sleep\]\n\[session: running\]$/,
    );
    const rest = await run('terminal_send', { sessionId, timeoutMs: 10_000 });
    expect(rest.json).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    expect((rest.json.output as string).split('\n')).toContain('late-42');
    expect(rest.text).toMatch(/late-42\n\[wait: stdin_read\]\n\[exit: 0\]\n\[session: running\]$/);
  });
});
