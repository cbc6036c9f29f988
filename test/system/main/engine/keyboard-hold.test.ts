/**
 * The keyboard hold (SPEC §13) on a real engine and a real bash: one holder; a second take refused
 * unless forced (the first is told); the person's keys reach the program past the send slot; while
 * held the model's sends with input wait for hand-back (or settle `human`), wait-only sends follow the
 * normal rules, a send in flight settles `human` at once, and keys, signals and resizes are refused.
 */
import { expect, it } from 'vitest';
import { commandRunning, type TerminalSession, testEngine } from '../../../support/engine.js';
import { until } from '../../../support/until.js';

async function bash(): Promise<TerminalSession> {
  const engine = await testEngine({ disposeGraceMs: 300 });
  return engine.spawn();
}

/** Output since the subscription, as one string (live output). */
function collect(session: TerminalSession): { text: () => string; dispose: () => void } {
  let text = '';
  const sub = session.onOutput((chunk) => {
    text += chunk.text;
  });
  return { text: () => text, dispose: () => sub.dispose() };
}

it('gives one holder the keyboard; a second take is refused unless forced, which tells the first', async () => {
  const session = await bash();
  const first = await session.takeKeyboard({ holder: 'tab-1' });
  await expect(session.takeKeyboard({ holder: 'tab-2' })).rejects.toMatchObject({
    code: 'HUMAN_HOLDS',
    message: expect.stringMatching(/held by another viewer since \d{4}-/),
  });
  const second = await session.takeKeyboard({ holder: 'tab-2', force: true });
  await expect(first.ended).resolves.toBe('forced');
  await expect(first.write('x')).rejects.toMatchObject({ code: 'HUMAN_HOLDS' });
  await second.release();
  await expect(second.ended).resolves.toBe('handed-back');
  // Free again: anyone may take it.
  const third = await session.takeKeyboard({ holder: 'tab-1' });
  await session.close();
  await expect(third.ended).resolves.toBe('closed');
});

it("types the person's answer into a getpass prompt; the model's send waits and is written after hand-back", async () => {
  const session = await bash();
  const asked = await session.startSend({
    text: `python3 -c 'import getpass; s = getpass.getpass("Secret: "); print("len", len(s))'`,
  }).done;
  expect(asked.inputHidden).toBe(true);
  const hold = await session.takeKeyboard({ holder: 'page' });
  const model = session.startSend({ text: 'echo model-$((6*7))', timeoutMs: 20_000 });
  await expect(session.signal('SIGINT')).rejects.toMatchObject({ code: 'HUMAN_HOLDS' });
  await expect(session.resize({ rows: 30, cols: 100 })).rejects.toMatchObject({ code: 'HUMAN_HOLDS' });
  await expect(session.startSend({ keys: ['Enter'] }).done).rejects.toMatchObject({ code: 'HUMAN_HOLDS' });
  const live = collect(session);
  await hold.write('hunter2\r');
  await until('the program read the secret', () => /len 7/.test(live.text()));
  await hold.release();
  const result = await model.done;
  live.dispose();
  expect(result.waitReason).toBe('stdin_read');
  // The person's output leads the model's next result (continuity); the secret is in neither.
  expect(result.viewport).toMatch(/^len 7\s*$/m);
  expect(result.viewport).toMatch(/^model-42\s*$/m);
  expect(result.viewport).not.toContain('hunter2');
  expect(live.text()).not.toContain('hunter2');
});

it('settles a held send with input `human` when its bound ends first, writing nothing', async () => {
  const session = await bash();
  const hold = await session.takeKeyboard({ holder: 'page' });
  const result = await session.startSend({ text: 'echo never-$((6*7))', timeoutMs: 300 }).done;
  expect(result.waitReason).toBe('human');
  expect(result.viewport).toBe('');
  await hold.release();
  const next = await session.startSend({ text: 'echo after-$((6*7))' }).done;
  expect(next.viewport).not.toMatch(/never-42/);
  expect(next.viewport).toMatch(/^after-42\s*$/m);
});

it('settles a send in flight at take-over `human` at once; a wait-only send whose bound ends while held too', async () => {
  const session = await bash();
  const running = session.startSend({ text: 'sleep 30', timeoutMs: 60_000 });
  await commandRunning(session.pid, 'sleep');
  const hold = await session.takeKeyboard({ holder: 'page' });
  const taken = await running.done;
  expect(taken.waitReason).toBe('human');
  // A wait-only send follows the normal rules: its bound ends while held, so it is `human`.
  const waited = await session.startSend({ timeoutMs: 300 }).done;
  expect(waited.waitReason).toBe('human');
  await hold.write('\x03'); // the person's ^C reaches the foreground: the sleep ends
  const back = await session.startSend({ timeoutMs: 10_000 }).done;
  expect(back.waitReason).toBe('stdin_read');
  await hold.release();
});

it('says a send taken over in flight was typed: its command keeps running and finishes once, not sent again', async () => {
  const session = await bash();
  const running = session.startSend({ text: 'sleep 3; echo slept-$((6*7))', timeoutMs: 60_000 });
  await commandRunning(session.pid, 'sleep');
  const hold = await session.takeKeyboard({ holder: 'page' });
  const taken = await running.done;
  expect(taken).toMatchObject({
    waitReason: 'human',
    humanHold: 'taken_over',
    foreground: { command: 'sleep' },
  });
  await hold.release();
  // Waiting (no input) is all it takes: the typed command finishes by itself, once.
  const back = await session.startSend({ timeoutMs: 20_000 }).done;
  expect(back.waitReason).toBe('stdin_read');
  expect(back.viewport.match(/^slept-42\s*$/gm)).toHaveLength(1);
});

it("refuses a held send's bad request at once as without a hold, and keeps a waited send's cappedWait", async () => {
  const session = await bash();
  const bad = [
    { text: 'echo x', waitFor: '' },
    { text: 'x'.repeat(2 * 1024 * 1024) },
    { keys: ['NoSuchKey'] },
  ] as const;
  // Without a hold: the codes to expect.
  const codes: string[] = [];
  for (const spec of bad) {
    const error = await session
      .startSend({ ...spec } as never)
      .done.catch((thrown: { code: string }) => thrown);
    codes.push((error as { code: string }).code);
  }
  expect(codes).toEqual(['INVALID_ARGUMENT', 'INPUT_TOO_LARGE', 'UNKNOWN_KEY']);
  const hold = await session.takeKeyboard({ holder: 'page' });
  for (const [index, spec] of bad.entries()) {
    // Well before the bound (the default 30 s): refused now, not at hand-back.
    await expect(session.startSend({ ...spec, timeoutMs: 60_000 } as never).done).rejects.toMatchObject({
      code: codes[index],
    });
  }
  const capped = session.startSend({
    text: 'echo capped-$((6*7))',
    timeoutMs: 20_000,
    maxWaitMs: 10_000,
  }).done;
  await hold.release();
  const result = await capped;
  expect(result.viewport).toMatch(/^capped-42\s*$/m);
  expect(result.cappedWait).toEqual({ boundMs: 10_000, askedMs: 20_000 });
});
