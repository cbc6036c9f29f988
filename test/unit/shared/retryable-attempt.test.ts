import { describe, expect, it } from 'vitest';
import { RetryableAttempt } from '../../../src/shared/retryable-attempt.js';

describe('RetryableAttempt', () => {
  it('concurrent callers share one attempt, and a success is remembered', async () => {
    const attempt = new RetryableAttempt<number>();
    let starts = 0;
    const start = async () => ++starts;
    const [a, b] = await Promise.all([attempt.run(start), attempt.run(start)]);
    expect([a, b, await attempt.run(start)]).toEqual([1, 1, 1]);
    expect(starts).toBe(1);
  });

  it('a failed attempt is forgotten: the next call tries again', async () => {
    const attempt = new RetryableAttempt<string>();
    let starts = 0;
    const start = async () => {
      starts += 1;
      if (starts === 1) throw new Error('teardown not verified');
      return 'closed';
    };
    await expect(attempt.run(start)).rejects.toThrow('teardown not verified');
    expect(attempt.started).toBe(false);
    await expect(attempt.run(start)).resolves.toBe('closed');
    expect(starts).toBe(2);
  });

  it('keeps a failure when told retrying cannot help', async () => {
    const attempt = new RetryableAttempt<string>();
    let starts = 0;
    const start = async () => {
      starts += 1;
      throw new Error(`gone ${starts}`);
    };
    await expect(attempt.run(start, () => true)).rejects.toThrow('gone 1');
    await expect(attempt.run(start)).rejects.toThrow('gone 1');
    expect(starts).toBe(1);
  });
});
