import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Host } from '../../../../src/main/harness/host.js';
import {
  runTerminalTool,
  TERMINAL_TOOLS,
  type TerminalToolOutcome,
} from '../../../../src/main/tools/catalog.js';
import {
  TERMINAL_TOOLS_GUIDANCE,
  TERMINAL_TOOLS_GUIDANCE_MAX_CHARS,
} from '../../../../src/main/tools/guidance.js';
import type { LiveLinesBatch } from '../../../../src/main/tools/live-lines.js';
import type { TerminalToolContext } from '../../../../src/main/tools/tool.js';
import { TerminalError } from '../../../../src/shared/errors.js';
import { createFakeHost, type FakeHost } from '../../../support/fake-host.js';
import { FAKE_LIMITS, type FakeEngine, type FakeSession, gate } from '../../../support/fake-pty-engine.js';

let fixture: FakeHost;
let workspace: string;
let host: Host;
let engine: FakeEngine;
let ctx: TerminalToolContext;

beforeEach(async () => {
  fixture = await createFakeHost('tools-');
  ({ host, engine, workspace } = fixture);
  ctx = { pty: host.service('pty'), owner: 'model' };
});

afterEach(async () => {
  await fixture.dispose();
});

/** Runs a tool that must succeed and checks its JSON against the tool's strict output schema. */
async function ok(name: string, args: unknown, context = ctx) {
  const outcome = await runTerminalTool(name, args, context);
  if (outcome.isError) throw new Error(`${name} failed: ${outcome.text}`);
  const tool = TERMINAL_TOOLS.find((candidate) => candidate.name === name)!;
  expect(tool.output.safeParse(outcome.json).error).toBeUndefined();
  return outcome;
}

async function failing(
  name: string,
  args: unknown,
): Promise<Extract<TerminalToolOutcome, { isError: true }>> {
  const outcome = await runTerminalTool(name, args, ctx);
  if (!outcome.isError) throw new Error(`${name} unexpectedly succeeded: ${outcome.text}`);
  return outcome;
}

async function open(): Promise<{ id: string; session: FakeSession }> {
  const outcome = await ok('terminal_open', {});
  return { id: outcome.json.sessionId as string, session: engine.spawned.at(-1)! };
}

describe('tool definitions', () => {
  it('exposes six tools with object schemas that reject unknown keys, and model-facing descriptions', () => {
    expect(TERMINAL_TOOLS.map((tool) => tool.name)).toEqual([
      'terminal_open',
      'terminal_send',
      'terminal_read',
      'terminal_signal',
      'terminal_close',
      'terminal_list',
    ]);
    for (const tool of TERMINAL_TOOLS) {
      expect(tool.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
      expect(tool.inputSchema).not.toHaveProperty('$schema');
      expect(tool.outputSchema).toMatchObject({ type: 'object' });
      expect(tool.description.length).toBeGreaterThan(80);
    }
    const send = TERMINAL_TOOLS[1]!.inputSchema as {
      required: string[];
      properties: Record<string, unknown>;
    };
    expect(send.required).toEqual(['sessionId']); // text, keys or neither (a wait)
    expect(send.properties.submit).toMatchObject({ type: 'boolean', default: true });
    expect(send.properties.timeoutMs).toMatchObject({ type: 'integer', exclusiveMinimum: 0 });
    expect(send.properties.waitFor).toMatchObject({ type: 'string', minLength: 1 });
    expect(TERMINAL_TOOLS[1]!.description).toMatch(
      /Without text \(and keys\), nothing is typed and the call only waits/,
    );
    expect(TERMINAL_TOOLS[1]!.description).toMatch(/To press Enter alone .* send text ""/);
    expect(TERMINAL_TOOLS[1]!.description).toMatch(/waitFor \(e\.g\. "Serving HTTP on/);
    const signal = TERMINAL_TOOLS[3]!.inputSchema as { properties: { signal: { enum: string[] } } };
    expect(signal.properties.signal.enum).toEqual(['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGTSTP', 'SIGHUP']);
  });

  it('guidance explains every wait reason, that inferred_idle and timeout prove nothing, how to wait, keys; it stays short', () => {
    for (const reason of ['stdin_read', 'running', 'pattern', 'inferred_idle', 'timeout', 'session_exit']) {
      expect(TERMINAL_TOOLS_GUIDANCE).toMatch(new RegExp(`\n- (\`\\w+\`, )?\`${reason}\`(, \`\\w+\`)?:`));
    }
    expect(TERMINAL_TOOLS_GUIDANCE).toMatch(/`inferred_idle`, `timeout`: NOT proven finished/);
    expect(TERMINAL_TOOLS_GUIDANCE).toMatch(
      /`running`: the wait bound passed and the command is still running/,
    );
    expect(TERMINAL_TOOLS_GUIDANCE).toMatch(
      /Keep waiting with `terminal_send` with the sessionId and no text/,
    );
    expect(TERMINAL_TOOLS_GUIDANCE).toMatch(/"waitFor": "Listening on\|ready in"/);
    expect(TERMINAL_TOOLS_GUIDANCE).toMatch(/drive it with `keys`/);
    expect(TERMINAL_TOOLS_GUIDANCE).toMatch(/JSON `hint`/);
    // Sent as the MCP server's instructions, which Claude Code cuts after 2 048 characters; the
    // server's own sentences must still fit under 2 000 (terminal-mcp-server.ts).
    expect(TERMINAL_TOOLS_GUIDANCE.length).toBeLessThanOrEqual(TERMINAL_TOOLS_GUIDANCE_MAX_CHARS);
  });

  it('keeps every tool description under 2 000 characters (Claude Code cuts them after 2 048)', () => {
    for (const tool of TERMINAL_TOOLS) expect(tool.description.length, tool.name).toBeLessThan(2_000);
  });
});

describe('terminal_open', () => {
  it('renders the session, sandbox, motd and status; JSON has exactly the SPEC fields', async () => {
    const outcome = await ok('terminal_open', { name: 'build', cwd: '.' });
    const pid = engine.spawned[0]!.pid;
    const header =
      `Opened terminal session shell-1 (shell, bash, pid ${pid}, sandbox workspace-write, workspace ${workspace}, containment process-tree). ` +
      'Use terminal_send with sessionId "shell-1" to run commands.';
    expect(outcome.text).toBe(`${header}\nfake motd\n[session: running]`);
    expect(outcome.json).toEqual({
      sessionId: 'shell-1',
      name: 'build',
      type: 'shell',
      shell: 'bash',
      pid,
      status: { kind: 'running' },
      containment: 'process-tree',
      limits: FAKE_LIMITS,
      motd: 'fake motd',
      // The sandbox is not a field of the result: the hint carries it, in the words of the text.
      hint: header,
    });
  });

  it('passes the shell choice to the engine and reports it; refuses a shell it does not know', async () => {
    const outcome = await ok('terminal_open', { shell: 'pwsh' });
    expect(engine.spawned[0]!.dialect).toBe('pwsh');
    expect(outcome.json).toMatchObject({ shell: 'pwsh' });
    expect(outcome.text).toContain('(shell, pwsh, pid');
    const refused = await failing('terminal_open', { shell: 'fish' });
    expect(refused).toMatchObject({ isError: true, code: 'INVALID_ARGUMENT' });
    expect(refused.text).toMatch(/"shell" must be one of bash, .*pwsh/);
  });
});

describe('terminal_send', () => {
  it('renders the delta, then wait reason, exit code and session status', async () => {
    const { id, session } = await open();
    session.script = () => ({ viewport: 'hello\nworld\n', exitCode: 0, cwd: '/tmp', elapsedMs: 7 });
    const outcome = await ok('terminal_send', { sessionId: id, text: 'echo hi' });
    expect(outcome.text).toBe('hello\nworld\n[wait: stdin_read]\n[exit: 0]\n[session: running]');
    expect(outcome.json).toEqual({
      output: 'hello\nworld\n',
      waitReason: 'stdin_read',
      exitCode: 0,
      cwd: '/tmp',
      sessionStatus: { kind: 'running' },
      truncated: false,
      elapsedMs: 7,
    });
    expect(session.sends[0]).toMatchObject({ text: 'echo hi', submit: true });
  });

  it('without text types nothing and only waits; passes timeoutMs and waitFor through', async () => {
    const { id, session } = await open();
    session.script = () => ({ viewport: 'late line\n', exitCode: 0 });
    const waited = await ok('terminal_send', { sessionId: id });
    expect(waited.text).toBe('late line\n[wait: stdin_read]\n[exit: 0]\n[session: running]');
    expect(session.sends[0]).toEqual({});
    await ok('terminal_send', { sessionId: id, text: 'make', timeoutMs: 120_000, waitFor: 'ready in' });
    expect(session.sends[1]).toEqual({ text: 'make', submit: true, timeoutMs: 120_000, waitFor: 'ready in' });
  });

  it('says in words that a running command goes on, and names the call that keeps waiting', async () => {
    const { id, session } = await open();
    session.script = () => ({
      viewport: 'step 1 of 3\n',
      waitReason: 'running',
      foreground: { pid: 77, command: 'make' },
    });
    const outcome = await ok('terminal_send', { sessionId: id, text: 'make', timeoutMs: 1000 });
    const note =
      'The command is still running: this send stopped waiting before it finished (it is not done, and ' +
      'not waiting for input). Keep waiting with terminal_send {"sessionId":"shell-1"} (no text), or stop ' +
      'it with terminal_signal SIGINT.';
    expect(outcome.text).toBe(`step 1 of 3\n[wait: running] ${note}\n[foreground: make]\n[session: running]`);
    expect(outcome.json).toEqual({
      output: 'step 1 of 3\n',
      foreground: { pid: 77, command: 'make' },
      waitReason: 'running',
      sessionStatus: { kind: 'running' },
      truncated: false,
      elapsedMs: 1,
      hint: note,
    });
  });

  it('renders a waitFor match and names a foreground program that is not the shell', async () => {
    const { id, session } = await open();
    session.script = () => ({
      viewport: 'Serving HTTP on 0.0.0.0 port 8000 (http://0.0.0.0:8000/) ...\n',
      waitReason: 'pattern',
      foreground: { pid: 90, command: 'python3' },
    });
    const served = await ok('terminal_send', {
      sessionId: id,
      text: 'python3 -m http.server',
      waitFor: 'Serving',
    });
    expect(served.text).toMatch(
      /\.\.\.\n\[wait: pattern\] The waitFor pattern matched; the command may still be running.*\n\[foreground: python3\]\n\[session: running\]$/,
    );
    expect(served.json.foreground).toEqual({ pid: 90, command: 'python3' });
    expect(served.json.hint).toMatch(
      /^The waitFor pattern matched; .*stop it with terminal_signal SIGINT\.$/,
    );
    expect(served.text).toContain(served.json.hint);
    session.script = () => ({ viewport: '', exitCode: 0, foreground: { pid: 80, command: 'bash' } });
    const atPrompt = await ok('terminal_send', { sessionId: id, text: 'true' });
    expect(atPrompt.text).toBe('[wait: stdin_read]\n[exit: 0]\n[session: running]');
    expect(atPrompt.json.foreground).toEqual({ pid: 80, command: 'bash' });
    // Proven readiness needs no explanation.
    expect(atPrompt.json).not.toHaveProperty('hint');
  });

  it('passes timeoutMs as asked and maxWaitMs as the cap; notes a cut only when the engine reports one', async () => {
    const { id, session } = await open();
    const capped = { ...ctx, maxWaitMs: 1_000 };
    session.script = () => ({
      viewport: '',
      waitReason: 'running',
      cappedWait: { boundMs: 1_000, askedMs: 600_000 },
    });
    const cut = await ok('terminal_send', { sessionId: id, text: 'make', timeoutMs: 600_000 }, capped);
    expect(session.sends[0]).toMatchObject({ timeoutMs: 600_000, maxWaitMs: 1_000 });
    expect(cut.text).toMatch(
      /\n\[wait bound: 1000 ms, the most this server waits per call, instead of 600000 ms\]$/,
    );
    expect(cut.json.hint).toMatch(
      / \[wait bound: 1000 ms, the most this server waits per call, instead of 600000 ms\]$/,
    );
    session.script = () => ({ viewport: '', waitReason: 'running' });
    const uncut = await ok('terminal_send', { sessionId: id }, capped);
    expect(session.sends[1]).not.toHaveProperty('timeoutMs'); // the engine's own default, never guessed
    expect(session.sends[1]).toMatchObject({ maxWaitMs: 1_000 });
    expect(uncut.text).not.toContain('[wait bound:');
    await ok('terminal_send', { sessionId: id, timeoutMs: 600_000 });
    expect(session.sends[2]).toMatchObject({ timeoutMs: 600_000 });
    expect(session.sends[2]).not.toHaveProperty('maxWaitMs');
  });

  it('hands live output to onLiveLines as line batches while the send runs, and unsubscribes when it settles', async () => {
    const { id, session } = await open();
    session.holdSends = gate();
    const batches: LiveLinesBatch[] = [];
    let firstBatch!: () => void;
    const batched = new Promise<void>((resolve) => {
      firstBatch = resolve;
    });
    const running = ok(
      'terminal_send',
      { sessionId: id, text: 'build' },
      {
        ...ctx,
        onLiveLines: (batch) => {
          batches.push(batch);
          firstBatch();
        },
      },
    );
    // Subscribed before the send started, so the first output of the command is included.
    expect(session.outputListeners.size).toBe(1);
    session.emitOutput('compiling a\ncompiling b\r');
    session.emitOutput('\rcompiled b\npartial');
    await batched;
    expect(batches).toEqual([{ text: 'compiling a\ncompiled b', linesSoFar: 2 }]);
    session.holdSends.open();
    await running;
    expect(session.outputListeners.size).toBe(0);
  });

  it("passes keys through and renders a full-screen program's screen with its cursor", async () => {
    const { id, session } = await open();
    const screen = { lines: ['hello', '~', '~', '', ''], cursor: { row: 0, col: 4 } };
    session.script = () => ({ viewport: '', exitCode: undefined, screen, elapsedMs: 3 });
    const outcome = await ok('terminal_send', { sessionId: id, keys: ['Escape', { text: ':w' }, 'Enter'] });
    const note =
      'A full-screen program owns the terminal; this is its screen (the JSON field screen). Drive it with ' +
      'keys, not text: e.g. ["Escape", {"text": ":q!"}, "Enter"] leaves vim, ["C-x"] leaves nano, ["q"] quits less.';
    expect(outcome.text).toBe(
      `[screen: cursor at row 1, column 5] ${note}\nhello\n~\n~\n[wait: stdin_read]\n[session: running]`,
    );
    expect(outcome.json).toMatchObject({ screen, hint: note });
    expect(session.sends[0]).toMatchObject({ keys: ['Escape', { text: ':w' }, 'Enter'] });
    expect(session.sends[0]?.text).toBeUndefined();
  });

  it('says that inferred_idle and timeout do not prove the command finished, and omits an unknown exit', async () => {
    const { id, session } = await open();
    session.script = () => ({ viewport: 'building...', waitReason: 'inferred_idle', exitCode: undefined });
    const idle = await ok('terminal_send', { sessionId: id, text: 'make', submit: false });
    expect(idle.text).toMatch(/^building\.\.\.\n\[wait: inferred_idle\] Not proven finished/);
    expect(idle.json.hint).toMatch(
      /^Not proven finished: .*keep waiting with terminal_send \{"sessionId":"shell-1"\} \(no text\)/,
    );
    expect(idle.text).toContain(idle.json.hint);
    expect(idle.text).not.toContain('[exit:');
    expect(idle.json).not.toHaveProperty('exitCode');
    expect(session.sends[0]?.submit).toBe(false);
    session.script = () => ({ viewport: '', waitReason: 'timeout', exitCode: undefined });
    const timeout = await ok('terminal_send', { sessionId: id, text: '' });
    expect(timeout.text).toMatch(/^\[wait: timeout\] .*probably still running.*terminal_signal SIGINT/);
    expect(timeout.json.hint).toMatch(/^Not proven finished: .*probably still running/);
  });

  it('renders an exited shell with code and signal', async () => {
    const { id, session } = await open();
    session.script = () => ({
      viewport: 'logout\n',
      waitReason: 'session_exit',
      exitCode: undefined,
      sessionStatus: {
        kind: 'exited',
        exitCode: 3,
        signal: null,
        containment: 'process-tree',
        limits: FAKE_LIMITS,
      },
    });
    const outcome = await ok('terminal_send', { sessionId: id, text: 'exit 3' });
    expect(outcome.text).toMatch(
      /\n\[wait: session_exit\] .*terminal_open\.\n\[session: exited code=3 signal=none\]$/,
    );
  });

  it('adds a truncation note with the terminal_read call that pages back when the engine dropped output', async () => {
    const { id, session } = await open();
    session.script = () => ({
      viewport: 'l1\nl2\nl3\n',
      truncated: true,
      exitCode: undefined,
      waitReason: 'timeout',
    });
    const outcome = await ok('terminal_send', { sessionId: id, text: 'seq 1000000' });
    const paging = `Older output of this send was dropped, the last 3 lines are shown; page back with terminal_read {"sessionId":"${id}","offset":3}.`;
    expect(outcome.text.split('\n').at(-1)).toBe(`[truncated] ${paging}`);
    expect(outcome.json.truncated).toBe(true);
    // Both notes, in the order of the text.
    expect(outcome.json.hint).toMatch(
      new RegExp(`^Not proven finished: .* ${paging.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
    );
  });

  it('caps the result at maxResultBytes keeping the tail, whole lines first', async () => {
    const { id, session } = await open();
    const lines = Array.from({ length: 2000 }, (_, index) => `line ${index} ${'é'.repeat(20)}`);
    session.script = () => ({ viewport: `${lines.join('\n')}\n`, exitCode: 0 });
    const maxResultBytes = 4096;
    const outcome = await ok('terminal_send', { sessionId: id, text: 'cat big' }, { ...ctx, maxResultBytes });
    expect(Buffer.byteLength(outcome.text)).toBeLessThanOrEqual(maxResultBytes);
    const output = outcome.json.output as string;
    expect(output.endsWith(`${lines.at(-1)}\n`)).toBe(true);
    expect(lines).toContain(output.split('\n')[0]);
    expect(outcome.json.truncated).toBe(true);
    const kept = output.split('\n').length - 1;
    // Settled by the prompt (exit code known): the prompt line is the newest scrollback line.
    expect(outcome.text).toContain(
      `the last ${kept} lines are shown; page back with terminal_read {"sessionId":"${id}","offset":${kept + 1}}`,
    );
    expect(outcome.text).toMatch(/\[wait: stdin_read\]\n\[exit: 0\]\n\[session: running\]\n\[truncated\] /);
    expect(outcome.json.hint).toBe(outcome.text.split('\n').at(-1)!.slice('[truncated] '.length));
  });

  it('passes the call’s cancellation to the send (it ends the wait) and never signals the command', async () => {
    const { id, session } = await open();
    const controller = new AbortController();
    await ok('terminal_send', { sessionId: id, text: 'sleep 1' }, { ...ctx, signal: controller.signal });
    expect(session.sends[0]?.signal).toBe(controller.signal);
    controller.abort();
    expect(session.signals).toEqual([]);
  });
});

describe('terminal_read', () => {
  it('renders the page, its position and the call for the previous page', async () => {
    const { id, session } = await open();
    session.lines = Array.from({ length: 10 }, (_, index) => `row ${index}`);
    const outcome = await ok('terminal_read', { sessionId: id, offset: 2, count: 3 });
    const more = `5 older lines; the previous page is terminal_read {"sessionId":"${id}","offset":5}.`;
    expect(outcome.text).toBe(`row 5\nrow 6\nrow 7\n[lines 6-8 of 10]\n[more] ${more}`);
    expect(outcome.json).toEqual({
      text: 'row 5\nrow 6\nrow 7',
      totalLines: 10,
      lineBegin: 5,
      lineEnd: 8,
      truncated: false,
      hint: more,
    });
    const oldest = await ok('terminal_read', { sessionId: id, offset: 8 });
    expect(oldest.text).toBe('row 0\nrow 1\n[lines 1-2 of 10]');
    expect(oldest.json).not.toHaveProperty('hint');
    const none = await ok('terminal_read', { sessionId: id, offset: 50 });
    expect(none.text).toBe('[lines: none in this range; the scrollback holds 10 lines]');
  });

  it('caps a page keeping its newest lines and moves lineBegin past the dropped ones', async () => {
    const { id, session } = await open();
    session.lines = Array.from({ length: 300 }, (_, index) => `row ${index} ${'x'.repeat(40)}`);
    const outcome = await ok('terminal_read', { sessionId: id }, { ...ctx, maxResultBytes: 2048 });
    const json = outcome.json as { text: string; lineBegin: number; lineEnd: number; truncated: boolean };
    expect(json.truncated).toBe(true);
    expect(json.lineEnd).toBe(300);
    expect(json.text.split('\n')[0]).toBe(session.lines[json.lineBegin]);
    expect(outcome.text).toContain(
      `page back with terminal_read {"sessionId":"${id}","offset":${300 - json.lineBegin}}`,
    );
    expect(outcome.json.hint).toBe(
      `Older lines of this page were dropped to fit; page back with terminal_read {"sessionId":"${id}","offset":${300 - json.lineBegin}}.`,
    );
    expect(Buffer.byteLength(outcome.text)).toBeLessThanOrEqual(2048);
  });
});

describe('terminal_signal, terminal_close, terminal_list', () => {
  it('signals the foreground group', async () => {
    const { id, session } = await open();
    const outcome = await ok('terminal_signal', { sessionId: id, signal: 'SIGINT' });
    const next = `See its effect with terminal_send {"sessionId":"${id}"} (no text: it waits until the terminal is ready and returns what was printed), or with terminal_read.`;
    expect(outcome.json).toEqual({ delivered: true, targetPgid: session.pid, hint: next });
    expect(outcome.text).toBe(
      `Delivered SIGINT to the foreground process group ${session.pid} of ${id}. ${next}`,
    );
  });

  it('closes once, reports already-closing for a concurrent close, then the id is unknown', async () => {
    const { id } = await open();
    const [first, second] = await Promise.all([
      ok('terminal_close', { sessionId: id }),
      ok('terminal_close', { sessionId: id }),
    ]);
    expect(first.json).toEqual({ sessionId: id, outcome: 'closed' });
    expect(first.text).toBe(`Closed terminal session ${id}; its processes are gone.`);
    expect(second.json).toEqual({ sessionId: id, outcome: 'already-closing' });
    expect((await failing('terminal_close', { sessionId: id })).code).toBe('UNKNOWN_SESSION');
  });

  it('lists the caller’s sessions only', async () => {
    const empty = await ok('terminal_list', {});
    expect(empty.text).toBe('No open terminal sessions. Start one with terminal_open.');
    expect(empty.json).toEqual({ sessions: [], hint: empty.text });
    await ok('terminal_open', { name: 'web' });
    await ctx.pty.spawn('someone-else', { type: 'shell' });
    const outcome = await ok('terminal_list', {});
    const pid = engine.spawned[0]!.pid;
    expect(outcome.text).toBe(
      `shell-1  "web"  shell  bash  pid ${pid}  workspace-write, workspace ${workspace}  containment process-tree  [session: running]`,
    );
    expect(outcome.json).toEqual({
      sessions: [
        {
          sessionId: 'shell-1',
          name: 'web',
          type: 'shell',
          shell: 'bash',
          pid,
          status: { kind: 'running' },
          containment: 'process-tree',
          sandbox: { mode: 'workspace-write', workspaceRoot: workspace },
          closing: false,
        },
      ],
    });
  });
});

describe('invalid calls give errors that say what to do instead', () => {
  it('unknown session id', async () => {
    const outcome = await failing('terminal_send', { sessionId: 'shell-9', text: 'ls' });
    expect(outcome).toEqual({
      isError: true,
      code: 'UNKNOWN_SESSION',
      text: 'unknown PTY session: shell-9. Call terminal_list to see your open sessions, or terminal_open to start a new one.',
    });
  });

  it('missing session, bad timeoutMs and waitFor, bad signal name, negative offset, unknown key, wrong types', async () => {
    const { id } = await open();
    expect((await failing('terminal_send', { text: 'ls' })).text).toBe(
      'invalid arguments for terminal_send: "sessionId" is required. Call it as terminal_send ' +
        '{"sessionId": string, "text"?: string, "submit"?: boolean, "timeoutMs"?: integer, "waitFor"?: string, "keys"?: array}.',
    );
    expect((await failing('terminal_send', { sessionId: id, timeoutMs: -5 })).text).toMatch(
      /"timeoutMs" must be 1 or more milliseconds, e\.g\. 60000/,
    );
    expect((await failing('terminal_send', { sessionId: id, timeoutMs: '10s' })).text).toMatch(
      /"timeoutMs" must be a number of milliseconds, e\.g\. 60000/,
    );
    expect((await failing('terminal_send', { sessionId: id, timeoutMs: 1.5 })).text).toMatch(
      /"timeoutMs" must be a whole number of milliseconds/,
    );
    expect((await failing('terminal_send', { sessionId: id, waitFor: '' })).text).toMatch(
      /"waitFor" must not be empty; pass a regular expression such as "Serving HTTP on", or omit it/,
    );
    expect((await failing('terminal_send', { sessionId: id, waitFor: 5 })).text).toMatch(
      /"waitFor" must be a regular expression as a string/,
    );
    expect((await failing('terminal_send', { sessionId: id, keys: 'Enter' })).text).toMatch(
      /"keys" must be a list of key names/,
    );
    expect((await failing('terminal_signal', { sessionId: id, signal: 'SIGSTOP' })).text).toMatch(
      /"signal" must be one of SIGINT, SIGTERM, SIGKILL, SIGTSTP, SIGHUP \(SIGINT to interrupt, like Ctrl-C\)/,
    );
    expect((await failing('terminal_read', { sessionId: id, offset: -1 })).text).toMatch(
      /"offset" must be 0 or more: it counts lines back from the newest line/,
    );
    expect((await failing('terminal_read', { sessionId: id, count: 2.5 })).text).toMatch(
      /"count" must be a whole number/,
    );
    expect((await failing('terminal_close', { session_id: id })).text).toMatch(
      /"sessionId" is required; unknown argument "session_id" \(accepted: sessionId\)/,
    );
    expect((await failing('terminal_send', { sessionId: 7, text: 'x' })).text).toMatch(
      /"sessionId" must be a session id string such as "shell-1"/,
    );
    expect((await failing('terminal_list', 'nope')).text).toMatch(/arguments must be a JSON object/);
    expect((await failing('terminal_open', { type: 'ssh' })).text).toBe(
      'unknown PTY backend type "ssh"; registered types: shell.',
    );
    expect((await failing('terminal_nope', {})).text).toMatch(
      /^Unknown tool "terminal_nope". Available tools: terminal_open, /,
    );
  });

  it('maps engine errors by code to the next step', async () => {
    const { id, session } = await open();
    session.signal = async () => {
      throw new TerminalError('SIGNAL_REFUSED', "SIGKILL aimed at the shell's own process group is refused");
    };
    expect((await failing('terminal_signal', { sessionId: id, signal: 'SIGKILL' })).text).toMatch(
      /is refused\. To end the shell itself, call terminal_close\.$/,
    );
    session.startSend = () => {
      throw new TerminalError('SEND_ACTIVE', 'a send is already active');
    };
    expect((await failing('terminal_send', { sessionId: id, text: 'x' })).text).toMatch(
      /wait for it to return \(or stop it with terminal_signal SIGINT\)/,
    );
    engine.spawn = async () => {
      throw new TerminalError('SANDBOX_UNAVAILABLE', 'bwrap not found');
    };
    expect((await failing('terminal_open', {})).text).toMatch(
      /^bwrap not found\. The sandbox mode this server runs in/,
    );
    session.read = async () => {
      throw new Error('boom');
    };
    expect(await failing('terminal_read', { sessionId: id })).toMatchObject({
      code: 'INTERNAL',
      text: expect.stringMatching(/^Internal error: boom/),
    });
  });
});
