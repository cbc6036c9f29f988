/**
 * The keyboard hold's timing (SPEC §13), on fake timers: a hold without a heartbeat for 30 s ends
 * (`heartbeat-lost`), a heartbeat keeps it; a send waiting for hand-back starts with what is left of
 * its bound and keeps its `cappedWait` report; a held send's bad request fails at once, with the code it
 * gets without a hold. The port stands in for the engine thread; real sessions are in the system tests.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import {
  type HeldSessionPort,
  HOLD_HEARTBEAT_TIMEOUT_MS,
  SessionKeyboard,
} from '../../../../src/main/engine/keyboard-hold.js';
import { WaitEnd } from '../../../../src/main/engine/wait-end.js';
import type { SendSpec } from '../../../../src/shared/protocol.js';
import { unenforcedLimits } from '../../../../src/shared/session-limits.js';
import type { SendOperation, TerminalSendResult } from '../../../../src/shared/types.js';

const BOUNDS = { timeoutMs: 1000, maxTimeoutMs: 10_000, maxInputBytes: 64 };
const STATUS = { kind: 'running', containment: 'process-tree', limits: unenforcedLimits('test') } as const;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

function port(): HeldSessionPort & { written: string[] } {
  const written: string[] = [];
  return {
    written,
    writePersonInput: async (data) => {
      written.push(data);
    },
    endWait: async () => undefined,
    status: async () => STATUS,
  };
}

it('ends a hold 30 s after its last heartbeat, and not before', async () => {
  const keyboard = new SessionKeyboard(port(), BOUNDS);
  const hold = keyboard.take({ holder: 'page' });
  let ended: string | undefined;
  void hold.ended.then((reason) => {
    ended = reason;
  });
  await vi.advanceTimersByTimeAsync(HOLD_HEARTBEAT_TIMEOUT_MS - 1000);
  hold.heartbeat();
  await vi.advanceTimersByTimeAsync(HOLD_HEARTBEAT_TIMEOUT_MS - 1000);
  expect(ended).toBeUndefined();
  expect(keyboard.heldSince).toBe(hold.since);
  await vi.advanceTimersByTimeAsync(1000);
  expect(ended).toBe('heartbeat-lost');
  expect(keyboard.heldSince).toBeUndefined();
  keyboard.dispose();
});

it("starts a send that waited for hand-back with what is left of its bound, never the person's input", async () => {
  const session = port();
  const keyboard = new SessionKeyboard(session, BOUNDS);
  const hold = keyboard.take({ holder: 'page' });
  const started: SendSpec[] = [];
  const result: TerminalSendResult = {
    viewport: 'ok',
    waitReason: 'stdin_read',
    sessionStatus: STATUS,
    truncated: false,
    elapsedMs: 1,
  };
  const op: SendOperation = {
    done: Promise.resolve(result),
    readOutput: async () => ({ delta: '', truncated: false }),
    cancel: async () => undefined,
  };
  const send = keyboard.guardSend({ text: 'ls', timeoutMs: 5000, maxWaitMs: 4000 }, undefined, (spec) => {
    started.push(spec);
    return { sendId: 1, op };
  });
  await hold.write('secret\r');
  await vi.advanceTimersByTimeAsync(1500);
  expect(started).toEqual([]);
  await hold.release();
  // The thread is not told the cap (it gets what is left of the bound): the report is kept here. The
  // call's time counts from the send: the 1500 ms waited for the keyboard and the 1 ms the thread took.
  await expect(send.done).resolves.toEqual({
    ...result,
    elapsedMs: 1501,
    cappedWait: { boundMs: 4000, askedMs: 5000 },
  });
  expect(started).toEqual([{ text: 'ls', timeoutMs: 2500 }]); // 4000 (the cap) less the 1500 waited
  expect(session.written).toEqual(['secret\r']);
  keyboard.dispose();
});

it('keeps a waiting send waiting when another viewer forces the hold, then settles it `human` at its bound', async () => {
  const keyboard = new SessionKeyboard(port(), BOUNDS);
  keyboard.take({ holder: 'tab-1' });
  const start = vi.fn();
  const send = keyboard.guardSend({ text: 'ls' }, undefined, start);
  keyboard.take({ holder: 'tab-2', force: true });
  await vi.advanceTimersByTimeAsync(1000);
  await expect(send.done).resolves.toMatchObject({ waitReason: 'human', viewport: '' });
  expect(start).not.toHaveBeenCalled();
  keyboard.dispose();
});

it('reports `cappedWait` on the `human` result of a capped send whose bound ended while held', async () => {
  const keyboard = new SessionKeyboard(port(), BOUNDS);
  keyboard.take({ holder: 'page' });
  const start = vi.fn();
  const send = keyboard.guardSend({ text: 'ls', timeoutMs: 5000, maxWaitMs: 300 }, undefined, start);
  await vi.advanceTimersByTimeAsync(300);
  await expect(send.done).resolves.toMatchObject({
    waitReason: 'human',
    cappedWait: { boundMs: 300, askedMs: 5000 },
  });
  // An uncapped one says nothing of a cap.
  const plain = keyboard.guardSend({ text: 'ls', timeoutMs: 300 }, undefined, start);
  await vi.advanceTimersByTimeAsync(300);
  expect((await plain.done).cappedWait).toBeUndefined();
  expect(start).not.toHaveBeenCalled();
  keyboard.dispose();
});

it("refuses a held send's bad request at once, with the code it gets without a hold, writing nothing", async () => {
  const keyboard = new SessionKeyboard(port(), BOUNDS);
  keyboard.take({ holder: 'page' });
  const start = vi.fn();
  const cases: Array<[SendSpec, string, RegExp]> = [
    [{ text: 'ls', waitFor: '' }, 'INVALID_ARGUMENT', /waitFor is empty/],
    [{ text: 'ls', waitFor: 7 as never }, 'INVALID_ARGUMENT', /waitFor must be a string/],
    // Only the linear-time engine's compile finds these: refused now too, not when the hand-back comes.
    [{ text: 'ls', waitFor: '(?<=a)b' }, 'INVALID_ARGUMENT', /not an expression the linear-time engine/],
    [{ text: 'ls', waitFor: '\\pL{300}' }, 'INVALID_ARGUMENT', /instructions; at most 256/],
    [{ text: 'x'.repeat(65) }, 'INPUT_TOO_LARGE', /larger than the limit of 64 bytes/],
    [{ keys: ['Enter', 'NoSuchKey'] }, 'UNKNOWN_KEY', /unknown key "NoSuchKey" at keys\[1\]/],
    [{ text: 'ls', timeoutMs: -5 }, 'INVALID_ARGUMENT', /timeoutMs must be a positive integer/],
    [{ text: 'ls', timeoutMs: 20_000 }, 'INVALID_ARGUMENT', /above maxTimeoutMs \(10000\)/],
    [{ text: '', submit: false }, 'INVALID_ARGUMENT', /nothing to write/],
  ];
  for (const [spec, code, message] of cases) {
    const send = keyboard.guardSend(spec, undefined, start);
    let settled: unknown;
    send.done.catch((error: unknown) => {
      settled = error;
    });
    await vi.advanceTimersByTimeAsync(0); // no time passes: refused, not waiting for hand-back
    expect(settled, JSON.stringify(spec)).toMatchObject({ code, message: expect.stringMatching(message) });
  }
  // Valid keys are still refused while held, and a capped bound above maxTimeoutMs is no mistake.
  await expect(keyboard.guardSend({ keys: ['Enter'] }, undefined, start).done).rejects.toMatchObject({
    code: 'HUMAN_HOLDS',
    // Refused, not queued: the message must not say it waits.
    message: expect.stringMatching(
      /: these keys were refused, nothing was sent\. Send it again once they hand/,
    ),
  });
  expect(() => keyboard.assertModelMayDrive('signal')).toThrow(/this signal was refused.*ask the user/);
  const capped = keyboard.guardSend({ text: 'ls', timeoutMs: 20_000, maxWaitMs: 100 }, undefined, start);
  await vi.advanceTimersByTimeAsync(100);
  await expect(capped.done).resolves.toMatchObject({ waitReason: 'human' });
  expect(start).not.toHaveBeenCalled();
  keyboard.dispose();
});

it('says which send a hold settled `human`: taken over in flight, not typed, or a wait without input', async () => {
  const keyboard = new SessionKeyboard(port(), BOUNDS);
  const running: TerminalSendResult = {
    viewport: '',
    waitReason: 'running',
    sessionStatus: STATUS,
    truncated: false,
    elapsedMs: 1,
  };
  /** A send the fake thread settles `running` when `finish` is called (its ended wait, or its bound). */
  function pending(): { start: () => { sendId: number; op: SendOperation }; finish: () => void } {
    let finish!: () => void;
    const done = new Promise<TerminalSendResult>((resolve) => {
      finish = () => resolve(running);
    });
    const op: SendOperation = {
      done,
      readOutput: async () => ({ delta: '', truncated: false }),
      cancel: async () => undefined,
    };
    return { start: () => ({ sendId: 1, op }), finish: () => finish() };
  }
  const inFlight = pending();
  const typed = keyboard.guardSend({ text: 'sleep 3' }, undefined, inFlight.start);
  keyboard.take({ holder: 'page' });
  inFlight.finish();
  await expect(typed.done).resolves.toMatchObject({ waitReason: 'human', humanHold: 'taken_over' });
  const waitOnly = pending();
  const waited = keyboard.guardSend({ timeoutMs: 300 }, undefined, waitOnly.start);
  waitOnly.finish();
  await expect(waited.done).resolves.toMatchObject({ waitReason: 'human', humanHold: 'wait_only' });
  const notTyped = keyboard.guardSend({ text: 'ls', timeoutMs: 300 }, undefined, vi.fn());
  await vi.advanceTimersByTimeAsync(300);
  await expect(notTyped.done).resolves.toMatchObject({ waitReason: 'human', humanHold: 'not_typed' });
  keyboard.dispose();
});

it('ends the wait of a send waiting for hand-back when its wait is ended: `human`, nothing typed, even after hand-back', async () => {
  const keyboard = new SessionKeyboard(port(), BOUNDS);
  const hold = keyboard.take({ holder: 'page' });
  const start = vi.fn();
  const waitEnd = new WaitEnd();
  const send = keyboard.guardSend({ text: 'ls', timeoutMs: 5000 }, waitEnd, start);
  await vi.advanceTimersByTimeAsync(100);
  waitEnd.end();
  await expect(send.done).resolves.toMatchObject({ waitReason: 'human', humanHold: 'not_typed' });
  await hold.release();
  await vi.advanceTimersByTimeAsync(100);
  expect(start).not.toHaveBeenCalled();
  expect(keyboard.busy).toBe(false);
  keyboard.dispose();
});
