/**
 * A spawn's own limits and the counts of SPEC §4.8 through the engine: limits below the rules and
 * oversized terminals refused with INVALID_ARGUMENT naming the field, a spawn's limits reported by its
 * status, and `maxSessions` refusing one session more with SESSION_LIMIT.
 */
import { describe, expect, it } from 'vitest';
import { testEngine } from '../../../support/engine.js';

const MIB = 1024 * 1024;

describe('spawn limits and terminal size', () => {
  it('refuses limits below the rules and oversized terminals with INVALID_ARGUMENT, naming the field', async () => {
    const engine = await testEngine();
    await expect(engine.spawn({ limits: { memoryBytes: 100 * MIB } })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringMatching(/limits\.memoryBytes: must be an integer >= 3 × tmpfsBytes/),
    });
    await expect(engine.spawn({ limits: { pids: 2 } })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringMatching(/limits\.pids/),
    });
    await expect(engine.spawn({ rows: 1000, cols: 1000 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringMatching(/1000000 cells; a terminal holds at most 250000/),
    });
    // 250 × 1 000 is exactly the bound: accepted, and a resize beyond it is refused.
    const session = await engine.spawn({ rows: 250, cols: 1000 });
    await expect(session.resize({ rows: 251, cols: 1000 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    const after = await session.startSend({ text: 'echo size-$(stty size | tr " " x)' }).done;
    expect(after.viewport.split('\n')).toContain('size-250x1000');
  });

  it('a spawn’s own limits are what its status reports', async () => {
    const engine = await testEngine({ tmpfsBytes: 16 * MIB });
    const session = await engine.spawn({ limits: { memoryBytes: 400 * MIB, pids: 300 } });
    const { limits } = await session.status();
    if (limits.memory.enforcedBy !== 'none') expect(limits.memory.bytes).toBe(400 * MIB);
    if (limits.pids.enforcedBy !== 'none') expect(limits.pids.max).toBe(300);
    for (const limit of [limits.memory, limits.pids, limits.cpu]) {
      if (limit.enforcedBy === 'none') expect(limit.reason).toMatch(/\S/);
    }
  });
});

describe('session counts (maxSessions)', () => {
  it('refuses one session more than maxSessions with SESSION_LIMIT, counting spawns in progress; a close frees a slot', async () => {
    const engine = await testEngine({ maxSessions: 2 });
    // Both spawns are still starting when the third arrives.
    const first = engine.spawn();
    const second = engine.spawn();
    await expect(engine.spawn()).rejects.toMatchObject({
      code: 'SESSION_LIMIT',
      message: expect.stringMatching(/2 sessions open or starting \(maxSessions\)/),
    });
    const [a] = await Promise.all([first, second]);
    await expect(engine.spawn()).rejects.toMatchObject({ code: 'SESSION_LIMIT' });
    await a.close();
    const c = await engine.spawn();
    const result = await c.startSend({ text: 'echo slot-$((6*7))' }).done;
    expect(result.viewport.split('\n')).toContain('slot-42');
  });
});
