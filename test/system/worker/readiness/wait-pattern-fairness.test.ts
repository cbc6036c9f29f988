/**
 * `waitFor` cannot take its engine thread down (SPEC §4.8, issue 22 observation 2), with real
 * sessions: the attack pattern of issue 22 is refused at validation instead of killing the thread and
 * every session on it, and a costly but allowed pattern over a flood of long lines leaves its
 * neighbour on the same thread answering. (The bounds themselves: test/unit/worker/readiness.)
 */
import { describe, expect, it } from 'vitest';
import { testEngine } from '../../../support/engine.js';

/** The attack of issue 22: a valid RE2 pattern of 3 600 characters compiling to 400 002 instructions. */
const ATTACK = '\\pL{1000}'.repeat(400);

describe('waitFor cannot take its thread down (issue 22, observation 2)', () => {
  it('the attack pattern is refused with INVALID_ARGUMENT; both sessions on the thread keep answering', async () => {
    const engine = await testEngine({ threads: 1 });
    const [attacker, neighbour] = await Promise.all([engine.spawn(), engine.spawn()]);
    await attacker.startSend({ text: `python3 -c "print('a' * 4800); print('b' * 4800)"` }).done;
    await expect(attacker.startSend({ text: 'echo never', waitFor: ATTACK }).done).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    for (const session of [attacker, neighbour]) {
      const result = await session.startSend({ text: 'echo ok-$((6*7))' }).done;
      expect(result.viewport.split('\n')).toContain('ok-42');
    }
  });

  it('a costly allowed pattern over long lines of a flood leaves the neighbour answering; nothing dies', async () => {
    const engine = await testEngine({ threads: 1 });
    const [flooder, neighbour] = await Promise.all([engine.spawn(), engine.spawn()]);
    // Within the size bound, but its lazy DFA meets a new state at almost every character of random
    // a/b text, and no line can match: every line costs its full test.
    const costly = 'a[ab]{200}[^ab]';
    const lines =
      'import random, sys; [sys.stdout.write("".join(random.choice("ab") for _ in range(8000)) + "\\n") for i in range(12)]';
    const flood = flooder.startSend({
      text: `python3 -c '${lines}'; echo flood-$((6*7))`,
      waitFor: costly,
      timeoutMs: 60_000,
    }).done;
    for (let i = 0; i < 5; i++) {
      const result = await neighbour.startSend({ text: 'echo ok-$((6*7))' }).done;
      expect(result.waitReason).toBe('stdin_read');
      expect(result.viewport.split('\n')).toContain('ok-42');
    }
    const flooded = await flood;
    expect(flooded.waitReason).toBe('stdin_read');
    expect(flooded.viewport.split('\n')).toContain('flood-42');
  });
});
