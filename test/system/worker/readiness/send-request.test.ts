/**
 * The send request (SPEC §4.2, §5): a per-send wait bound within `maxTimeoutMs`, `waitFor` compiled by
 * a linear-time engine, bad input refused before anything is written, an AbortSignal that ends only the
 * wait, and the foreground named in every result. Real bash and python3.
 */
import { describe, expect, it } from 'vitest';
import { compileWaitPattern } from '../../../../dist/worker/readiness/wait-pattern.js';
import { testEngine } from '../../../support/engine.js';

const lines = (text: string) => text.split('\n');

describe('send request validation', () => {
  it('refuses timeoutMs above maxTimeoutMs, or not a positive integer, before anything is written', async () => {
    const engine = await testEngine({ maxTimeoutMs: 40_000 });
    const session = await engine.spawn();
    for (const timeoutMs of [40_001, 0, -5, 1.5, Number.NaN]) {
      const refused = session.startSend({ text: 'echo written-$((6*7))', timeoutMs });
      await expect(refused.done).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    const page = await session.read();
    expect(page.text).not.toContain('written-42');
    const allowed = await session.startSend({ text: 'echo ok-$((6*7))', timeoutMs: 40_000 }).done;
    expect(lines(allowed.viewport)).toContain('ok-42');
  });

  it('refuses a waitFor the linear-time engine cannot run (backreference, lookahead, invalid, empty)', async () => {
    const engine = await testEngine();
    const session = await engine.spawn();
    for (const waitFor of ['(a)\\1', '(?=x)y', '(unclosed', '']) {
      const refused = session.startSend({ text: 'echo written-$((6*7))', waitFor });
      await expect(refused.done).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining('waitFor'),
      });
    }
    expect((await session.read()).text).not.toContain('written-42');
  });

  it('an exponential-backtracking expression runs in linear time', () => {
    const pattern = compileWaitPattern('^(a+)+$');
    const started = performance.now();
    expect(pattern.test(`${'a'.repeat(5_000)}b`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(500); // JavaScript's engine: 171 ms at 24 chars, doubling
  });

  it('rejects maxTimeoutMs below timeoutMs at engine creation', async () => {
    await expect(testEngine({ timeoutMs: 5_000, maxTimeoutMs: 1_000 })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('maxTimeoutMs'),
    });
  });
});

describe('ending a wait', () => {
  it('an AbortSignal ends only the wait: `running`, and the command is not signalled', async () => {
    const engine = await testEngine();
    const session = await engine.spawn();
    const controller = new AbortController();
    const op = session.startSend({ text: 'sleep 0.6; echo survived-$((6*7))', signal: controller.signal });
    setTimeout(() => controller.abort(), 150);
    const ended = await op.done;
    expect(ended.waitReason).toBe('running');
    expect(ended.exitCode).toBeUndefined();
    expect(ended.elapsedMs).toBeLessThan(550);
    const rest = await session.startSend({}).done;
    expect(rest).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    expect(lines(rest.viewport)).toContain('survived-42');
  });
});

describe('foreground in results', () => {
  it('names bash at its prompt and python3 at >>>', async () => {
    const engine = await testEngine();
    const session = await engine.spawn();
    const shell = await session.startSend({ text: 'true' }).done;
    expect(shell.foreground?.command).toBe('bash');
    const repl = await session.startSend({ text: 'python3 -q' }).done;
    expect(repl.waitReason).toBe('stdin_read');
    expect(repl.foreground?.command).toMatch(/^python3/);
    expect(repl.foreground?.pid).not.toBe(shell.foreground?.pid);
    const back = await session.startSend({ text: 'exit()' }).done;
    expect(back).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, foreground: shell.foreground });
  });
});
