// `pid` is always the shell's, as the host sees it (SPEC §5, §7): in a confined mode bubblewrap is the
// pty child and the shell runs below it in the sandbox's PID namespace, yet `session.pid`,
// `terminal_open`'s and `terminal_list`'s `pid` name the shell — here and in a world. Checked from the
// host's /proc: the process is `bash`, and the last field of its `NSpid:` is the `$$` the shell prints.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect } from 'vitest';
import type { Host } from '../../../../dist/main/harness/host.js';
import { createLocalHost } from '../../../../dist/main/harness/local-host.js';
import { createBubblewrapSandbox } from '../../../../dist/main/sandbox/bubblewrap.js';
import { runTerminalTool } from '../../../../dist/main/tools/catalog.js';
import type { TerminalToolContext } from '../../../../dist/main/tools/tool.js';
import { bwrapIt } from '../../../support/bwrap.js';
import { testEngine } from '../../../support/engine.js';

const itBwrap = bwrapIt('shell pid');
const BIN = new URL('../../../../dist/main/cli/bin.js', import.meta.url).pathname;
const SERVE = [process.execPath, BIN, 'serve', '--stdio'];

let workspace: string;

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), 'shell-pid-'));
});

afterEach(() => {
  rmSync(workspace, { recursive: true, force: true });
});

/** The `pid=<n>` line the shell printed for `echo pid=$$` (its pid in its own namespace). */
function printedPid(output: string): number {
  const match = /^pid=(\d+)$/m.exec(output);
  if (match === null) throw new Error(`no pid line in ${JSON.stringify(output)}`);
  return Number(match[1]);
}

/** What the host's /proc says about `pid`: its command, its parent's, and its pids in each namespace. */
function hostView(pid: number): { comm: string; parentComm: string; nsPids: number[] } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const ppid = Number(/^PPid:\s*(\d+)$/m.exec(status)![1]);
  return {
    comm: readFileSync(`/proc/${pid}/comm`, 'utf8').trim(),
    parentComm: readFileSync(`/proc/${ppid}/comm`, 'utf8').trim(),
    nsPids: /^NSpid:\s*(.*)$/m.exec(status)![1]!.trim().split(/\s+/).map(Number),
  };
}

/** The reported pid is the confined shell: bash below bwrap, `$$` its namespace pid. */
function expectConfinedShell(pid: number, output: string): void {
  const view = hostView(pid);
  expect(view).toMatchObject({ comm: 'bash', parentComm: 'bwrap' });
  expect(view.nsPids.length).toBeGreaterThan(1); // in a PID namespace of its own
  expect(view.nsPids[0]).toBe(pid);
  expect(view.nsPids.at(-1)).toBe(printedPid(output));
}

describe('pid is the shell’s', () => {
  itBwrap('session.pid of a read-only session is the shell below bwrap', async () => {
    const engine = await testEngine({ sandbox: createBubblewrapSandbox(), disposeGraceMs: 300 });
    const session = await engine.spawn({ sandbox: { mode: 'read-only', workspaceRoot: workspace } });
    const result = await session.startSend({ text: 'echo pid=$$' }).done;
    expectConfinedShell(session.pid, result.viewport);
    expect(result.foreground?.pid).toBe(session.pid);
  });

  describe('through the tools', () => {
    let host: Host;

    afterEach(async () => {
      await host.dispose();
    });

    async function tool(ctx: TerminalToolContext, name: string, args: Record<string, unknown>) {
      const outcome = await runTerminalTool(name, args, ctx);
      if (outcome.isError) throw new Error(`${name}: ${outcome.text}`);
      return outcome;
    }

    itBwrap('terminal_open and terminal_list report the shell, here and in a world', async () => {
      host = await createLocalHost({
        mode: 'read-only',
        workspaceRoot: workspace,
        ptyLocal: { disposeGraceMs: 300, worlds: { far: SERVE } },
      });
      const ctx: TerminalToolContext = { pty: host.service('pty'), owner: 'model' };
      const listed: number[] = [];
      for (const world of [undefined, 'far']) {
        const opened = await tool(ctx, 'terminal_open', world === undefined ? {} : { world });
        const pid = opened.json.pid as number;
        expect(opened.text).toContain(`pid ${pid}`);
        const sent = await tool(ctx, 'terminal_send', {
          sessionId: opened.json.sessionId,
          text: 'echo pid=$$',
        });
        expectConfinedShell(pid, sent.json.output as string);
        listed.push(pid);
      }
      const list = await tool(ctx, 'terminal_list', {});
      expect((list.json.sessions as Array<{ pid: number }>).map((session) => session.pid)).toEqual(listed);
    });
  });
});
