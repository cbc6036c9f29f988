// A client that hands its model only `structuredContent` (as Claude Code does) must still learn
// everything the text says: the SDK's own Client over stdio against the built `agent-pty mcp` (needs
// a build), real bash, vim and seq under bubblewrap. Nothing here reads the text content.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const BIN = new URL('../../../../dist/main/cli/bin.js', import.meta.url).pathname;

let workspace: string;
let client: Client;

beforeEach(async () => {
  workspace = mkdtempSync(join(tmpdir(), 'mcp-structured-'));
  client = new Client({ name: 'structured-only', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--workspace', workspace],
      stderr: 'ignore',
    }),
  );
  // The client validates structuredContent against the output schemas of the tools it listed.
  await client.listTools();
});

afterEach(async () => {
  await client.close();
  rmSync(workspace, { recursive: true, force: true });
});

/** Calls a tool that must succeed and returns only its JSON result, the way such a client does. */
async function json(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name} failed`).toBeFalsy();
  expect(result.structuredContent).toBeDefined();
  return result.structuredContent as Record<string, unknown>;
}

describe('a client that reads only structuredContent', () => {
  it('gets short instructions and learns from hint that a command still runs, how to keep waiting and how to stop it', async () => {
    // Claude Code cuts instructions after 2 048 characters; the server keeps under 2 000.
    expect(client.getInstructions()!.length).toBeLessThan(2_000);
    expect(client.getInstructions()).toMatch(/waits at most 50000 ms[\s\S]*sandbox mode workspace-write/);
    const opened = await json('terminal_open', {});
    const sessionId = opened.sessionId as string;
    expect(opened.hint).toContain(`sandbox workspace-write, workspace ${workspace}`);
    const running = await json('terminal_send', { sessionId, text: 'sleep 5', timeoutMs: 500 });
    expect(running).toMatchObject({ waitReason: 'running', foreground: { command: 'sleep' } });
    expect(running.hint).toMatch(/^The command is still running/);
    expect(running.hint).toContain(`Keep waiting with terminal_send {"sessionId":"${sessionId}"} (no text)`);
    expect(running.hint).toContain('stop it with terminal_signal SIGINT');
    // Following the hint: stop it, then wait without text for the prompt.
    const signalled = await json('terminal_signal', { sessionId, signal: 'SIGINT' });
    expect(signalled.hint).toContain(`terminal_send {"sessionId":"${sessionId}"} (no text`);
    const back = await json('terminal_send', { sessionId });
    expect(back).toMatchObject({ waitReason: 'stdin_read', exitCode: 130 });
    // Proven readiness needs no explanation.
    expect(back).not.toHaveProperty('hint');
  });

  it("learns from a truncated result's hint which terminal_read call shows the lines before the kept tail", async () => {
    const { sessionId } = await json('terminal_open', {});
    // 3 000 lines of 70 bytes: about 210 KB, past the 64 KiB result cap, within the scrollback.
    const sent = await json('terminal_send', {
      sessionId,
      text: "seq -f 'row-%05g-%%0000000000000000000000000000000000000000000000000000000000' 1 3000",
    });
    expect(sent).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, truncated: true });
    const output = (sent.output as string).trimEnd().split('\n');
    expect(output.at(-1)).toBe(`row-03000-%${'0'.repeat(58)}`);
    const firstKept = Number(/^row-(\d+)-/.exec(output[0]!)![1]);
    expect(firstKept).toBeGreaterThan(1);
    const call = /page back with terminal_read (\{[^}]*\})\.$/.exec(sent.hint as string);
    expect(call, String(sent.hint)).not.toBeNull();
    const page = await json('terminal_read', { ...JSON.parse(call![1]!), count: 2 });
    // The page ends right before the first line the result kept.
    expect((page.text as string).split('\n').map((line) => line.slice(0, 9))).toEqual([
      `row-${String(firstKept - 2).padStart(5, '0')}`,
      `row-${String(firstKept - 1).padStart(5, '0')}`,
    ]);
    expect(page.hint).toMatch(/older lines; the previous page is terminal_read \{/);
  });

  it("learns from a full-screen program's hint to drive it with keys, and leaves vim that way", async () => {
    const { sessionId } = await json('terminal_open', {});
    const vim = await json('terminal_send', { sessionId, text: 'vim -u NONE -i NONE notes.txt' });
    expect(vim).toMatchObject({ waitReason: 'stdin_read', foreground: { command: 'vim' } });
    expect((vim.screen as { lines: string[] }).lines.at(-1)).toMatch(/"notes\.txt" \[New/);
    expect(vim.hint).toMatch(/^A full-screen program owns the terminal/);
    expect(vim.hint).toContain('Drive it with keys, not text');
    expect(vim.hint).toContain('["Escape", {"text": ":q!"}, "Enter"] leaves vim');
    const left = await json('terminal_send', { sessionId, keys: ['Escape', { text: ':q!' }, 'Enter'] });
    expect(left).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    expect(left).not.toHaveProperty('screen');
  });
});
