/**
 * The keyboard hold's timing (SPEC §13), on fake timers: a hold without a heartbeat for 30 s ends
 * (`heartbeat-lost`), a heartbeat keeps it; a send waiting for hand-back starts with what is left of
 * its bound. The port stands in for the engine thread; real sessions are in the system tests.
 */
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import {
  type HeldSessionPort,
  HOLD_HEARTBEAT_TIMEOUT_MS,
  SessionKeyboard,
} from '../../../../src/main/engine/keyboard-hold.js';
import type { SendSpec } from '../../../../src/shared/protocol.js';
import { unenforcedLimits } from '../../../../src/shared/session-limits.js';
import type { SendOperation, TerminalSendResult } from '../../../../src/shared/types.js';

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
  const keyboard = new SessionKeyboard(port(), { timeoutMs: 1000, maxTimeoutMs: 10_000 });
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
  const keyboard = new SessionKeyboard(session, { timeoutMs: 1000, maxTimeoutMs: 10_000 });
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
  await expect(send.done).resolves.toBe(result);
  expect(started).toEqual([{ text: 'ls', timeoutMs: 2500 }]); // 4000 (the cap) less the 1500 waited
  expect(session.written).toEqual(['secret\r']);
  keyboard.dispose();
});

it('keeps a waiting send waiting when another viewer forces the hold, then settles it `human` at its bound', async () => {
  const keyboard = new SessionKeyboard(port(), { timeoutMs: 1000, maxTimeoutMs: 10_000 });
  keyboard.take({ holder: 'tab-1' });
  const start = vi.fn();
  const send = keyboard.guardSend({ text: 'ls' }, undefined, start);
  keyboard.take({ holder: 'tab-2', force: true });
  await vi.advanceTimersByTimeAsync(1000);
  await expect(send.done).resolves.toMatchObject({ waitReason: 'human', viewport: '' });
  expect(start).not.toHaveBeenCalled();
  keyboard.dispose();
});
