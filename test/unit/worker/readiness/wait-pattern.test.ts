/**
 * `waitFor` bounded (SPEC §4.8 "Fair share on a thread"): an expression whose compiled program is too
 * large is refused at validation; a line is tested on its last 8 KiB; the partial line at most once
 * per 10 ms of new output (and once more when output stopped); completed lines in turns of a few
 * milliseconds (the same with real sessions: test/system/worker/readiness/wait-pattern-fairness.test.ts).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  compileWaitPattern,
  estimateProgramSize,
  MAX_MATCH_CHARS,
  MAX_WAIT_PROGRAM_SIZE,
  PARTIAL_TEST_INTERVAL_MS,
  PatternWatch,
  type WaitPattern,
} from '../../../../src/worker/readiness/wait-pattern.js';

/** The attack of issue 22: a valid RE2 pattern of 3 600 characters compiling to 400 002 instructions. */
const ATTACK = '\\pL{1000}'.repeat(400);

/** A pattern that counts its tests (and can be made slow): pins the scheduling, not the matching. */
function countingPattern(source: string, costMs = 0): WaitPattern & { tests: string[] } {
  const real = compileWaitPattern(source);
  const tests: string[] = [];
  return {
    source,
    tests,
    test(line) {
      tests.push(line);
      const until = performance.now() + costMs;
      while (performance.now() < until) {
        // stands for a slow match
      }
      return real.test(line);
    },
  };
}

describe('waitFor validation', () => {
  it('refuses a program over the documented size, naming it, before or after compiling', () => {
    expect(() => compileWaitPattern(ATTACK)).toThrow(
      new RegExp(`compiles to about \\d+ instructions; at most ${MAX_WAIT_PROGRAM_SIZE}`),
    );
    expect(() => compileWaitPattern('\\pL{300}')).toThrow(/instructions; at most 256/);
    for (const source of ['\\pL{300}', '(a{30}){10}']) {
      expect(() => compileWaitPattern(source)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    }
  });

  it('accepts ordinary patterns, a dozen alternatives included', () => {
    for (const source of [
      '(?i)error|failed|listening on port \\d+',
      'Serving HTTP on|Listening on|ready in',
      '(?i)(error|warn(ing)?|fatal|failed|exception|traceback|listening on|ready in|compiled|started|server running|localhost:\\d+)',
      '^\\s*\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}',
      '[0-9a-f]{40}',
    ]) {
      expect(compileWaitPattern(source).test('x')).toBe(false);
    }
  });

  it('estimates programs from the text close to the compiler, repetitions expanded', () => {
    expect(estimateProgramSize('\\pL{1000}')).toBe(1000);
    expect(estimateProgramSize('(?:abc){10}')).toBe(30);
    expect(estimateProgramSize('(?i)error|failed')).toBe(11);
    expect(estimateProgramSize(ATTACK)).toBe(400_000);
  });
});

describe('PatternWatch bounds', () => {
  it('tests the last 8 KiB of a completed line: a match further back is not looked for', () => {
    const pattern = countingPattern('MARK');
    const near = new PatternWatch(pattern, '');
    near.textBlock(`${'x'.repeat(20_000)}MARK${'y'.repeat(MAX_MATCH_CHARS - 10)}\n`);
    expect(near.testPartial()).toBe(true);
    const far = new PatternWatch(pattern, '');
    far.textBlock(`MARK${'y'.repeat(MAX_MATCH_CHARS)}\n`);
    expect(far.testPartial()).toBe(false);
    expect(Math.max(...pattern.tests.map((line) => line.length))).toBeLessThanOrEqual(MAX_MATCH_CHARS);
    near.dispose();
    far.dispose();
  });

  it('tests the partial line at most once per interval while output keeps coming, and once after it stops', async () => {
    const pattern = countingPattern('ready>');
    let matchedLater = 0;
    const watch = new PatternWatch(pattern, '', () => matchedLater++);
    for (let i = 0; i < 200; i++) {
      watch.text('.');
      expect(watch.testPartial()).toBe(false);
    }
    const early = pattern.tests.length;
    // 200 chunks arrived within (much) less than the 200 intervals they would need one test each.
    expect(early).toBeLessThan(200);
    watch.text(' ready>');
    // Almost always within the interval of the last test: deferred, and tested once it ends.
    const now = watch.testPartial();
    await delay(PARTIAL_TEST_INTERVAL_MS * 3);
    expect(watch.matched).toBe(true);
    expect(matchedLater).toBe(now ? 0 : 1);
    watch.dispose();
  });

  it('tests completed lines in turns of a few milliseconds, finding a match on a later turn', async () => {
    const pattern = countingPattern('^line-999$', 1);
    let matchedLater = 0;
    const watch = new PatternWatch(pattern, '', () => matchedLater++);
    watch.textBlock(Array.from({ length: 1000 }, (_, i) => `line-${i}\n`).join(''));
    expect(watch.testPartial()).toBe(false);
    const firstTurn = pattern.tests.length;
    // A 1 ms test: the first turn stops after its few-millisecond budget, far before 1000 tests.
    expect(firstTurn).toBeLessThan(100);
    const deadline = Date.now() + 20_000;
    while (matchedLater === 0 && Date.now() < deadline) await delay(5);
    expect(matchedLater).toBe(1);
    expect(pattern.tests.length).toBe(1000);
    watch.dispose();
  });

  it('a flood faster than its pattern keeps about 1 MiB of waiting lines: the oldest are dropped untested and let go', async () => {
    const pattern = countingPattern('^never$');
    const watch = new PatternWatch(pattern, '');
    const line = (i: number) => `${String(i).padStart(6, '0')}-${'x'.repeat(993)}`;
    // 5 000 lines of 1 000 characters arrive before any turn runs: 5 MB for a 1 MiB queue.
    watch.textBlock(Array.from({ length: 5000 }, (_, i) => `${line(i)}\n`).join(''));
    // The waiting lines are held in an array whose passed-over head is let go (internal, but it is
    // what bounds the memory): without that it held all 5 000.
    expect((watch as unknown as { queue: string[] }).queue.length).toBeLessThan(2500);
    const deadline = Date.now() + 20_000;
    while (!pattern.tests.includes(line(4999)) && Date.now() < deadline) await delay(5);
    expect(pattern.tests).not.toContain(line(0));
    expect(pattern.tests).toContain(line(4999));
    expect(pattern.tests.length).toBeLessThanOrEqual(1100);
    watch.dispose();
  });
});
