/**
 * The words of SPEC §13 in tool results: `[input: hidden — …]` naming what works in this configuration
 * (the running watch page without its token, or how to start one), `'likely'` said as such, and the
 * `human` wait reason; the JSON `hint` carries the same words.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Host } from '../../../../src/main/harness/host.js';
import { runTerminalTool, TERMINAL_TOOLS } from '../../../../src/main/tools/catalog.js';
import type { TerminalToolContext } from '../../../../src/main/tools/tool.js';
import { createFakeHost, type FakeHost } from '../../../support/fake-host.js';
import type { FakeEngine, FakeSession } from '../../../support/fake-pty-engine.js';

let fixture: FakeHost;
let host: Host;
let engine: FakeEngine;
let ctx: TerminalToolContext;

beforeEach(async () => {
  fixture = await createFakeHost('hidden-input-');
  ({ host, engine } = fixture);
  ctx = { pty: host.service('pty'), owner: 'model' };
});
afterEach(async () => {
  await fixture.dispose();
});

async function send(id: string, context: TerminalToolContext) {
  const outcome = await runTerminalTool('terminal_send', { sessionId: id, text: 'sudo true' }, context);
  if (outcome.isError) throw new Error(outcome.text);
  const tool = TERMINAL_TOOLS.find((candidate) => candidate.name === 'terminal_send')!;
  expect(tool.output.safeParse(outcome.json).error).toBeUndefined();
  return outcome;
}

async function open(): Promise<{ id: string; session: FakeSession }> {
  const outcome = await runTerminalTool('terminal_open', {}, ctx);
  if (outcome.isError) throw new Error(outcome.text);
  return { id: outcome.json.sessionId as string, session: engine.spawned.at(-1)! };
}

it('names the running watch page (no token) for a proven hidden prompt, in the text and the hint', async () => {
  const { id, session } = await open();
  session.script = () => ({
    viewport: '[sudo] password for x: ',
    waitReason: 'stdin_read',
    inputHidden: true,
  });
  const watchPage = { url: 'http://127.0.0.1:41234/', urlFile: '/run/user/0/agent-pty/watch-7.url' };
  const outcome = await send(id, { ...ctx, watchPage });
  const line =
    '[input: hidden — a password or passphrase prompt; ask the user to type it in the watch page ' +
    '(http://127.0.0.1:41234/, its link with the token is in /run/user/0/agent-pty/watch-7.url), or send ' +
    'it only if the user gave it to you]';
  expect(outcome.text).toBe(`[sudo] password for x: \n[wait: stdin_read]\n${line}\n[session: running]`);
  expect(outcome.json).toMatchObject({ inputHidden: true, hint: line });
});

it("says how to start a watch page when none runs, and 'likely' when only the words suggest it", async () => {
  const { id, session } = await open();
  session.script = () => ({
    viewport: "x@host's password: ",
    waitReason: 'inferred_idle',
    inputHidden: 'likely',
  });
  const outcome = await send(id, ctx);
  expect(outcome.text).toContain(
    '[input: likely hidden — this looks like a password or passphrase prompt; ask the user to type it in a watch page (none is running: the user starts one with `agent-pty mcp --watch`',
  );
  expect(outcome.json.inputHidden).toBe('likely');
  expect(outcome.json.hint).toContain('[input: likely hidden');
});

async function sendRaw(id: string, args: Record<string, unknown>) {
  const outcome = await runTerminalTool('terminal_send', { sessionId: id, ...args }, ctx);
  if (outcome.isError) throw new Error(outcome.text);
  const tool = TERMINAL_TOOLS.find((candidate) => candidate.name === 'terminal_send')!;
  expect(tool.output.safeParse(outcome.json).error).toBeUndefined();
  return outcome;
}

it('explains `human` by which send it is: typed and maybe running, nothing typed, or a wait', async () => {
  const { id, session } = await open();
  const waitAgain = `terminal_send {"sessionId":"${id}"} (no text)`;
  const cases = [
    [
      'taken_over',
      { text: 'sleep 3; echo slept' },
      "A person took this terminal's keyboard (the watch page) while this command ran: it was typed and " +
        `may still be running. Do not send it again; wait with ${waitAgain} after they hand the keyboard back.`,
    ],
    [
      'not_typed',
      { text: 'echo hi' },
      "A person holds this terminal's keyboard (the watch page): nothing of this send was typed. Let them " +
        `finish; wait with ${waitAgain}, and send your input again once they hand the keyboard back.`,
    ],
    [
      'wait_only',
      {},
      "A person holds this terminal's keyboard (the watch page): this wait's bound ended while they held it " +
        `(it typed nothing). Keep waiting with ${waitAgain}; it settles when they hand the keyboard back, or ask the user.`,
    ],
  ] as const;
  for (const [humanHold, args, note] of cases) {
    session.script = () => ({ viewport: '', waitReason: 'human', humanHold });
    const outcome = await sendRaw(id, args);
    expect(outcome.text).toBe(`[wait: human] ${note}\n[session: running]`);
    expect(outcome.json).toMatchObject({ waitReason: 'human', humanHold, hint: note });
  }
});
