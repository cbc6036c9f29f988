/**
 * The guard in front of the terminal model's parser, on its own (the replier tests drive it through
 * xterm): queries pass while the reply budget lasts and are neutralized past it, string sequences are
 * bounded, line text at ground passes unchanged.
 */
import { describe, expect, it } from 'vitest';
import { HostileStreamGuard, REPLY_BURST } from '../../../../src/worker/replies/hostile-stream-guard.js';

describe('HostileStreamGuard', () => {
  it('passes queries while the budget lasts, then cancels their parameters and final byte', () => {
    const guard = new HostileStreamGuard();
    const queries = 'a\x1b[6nb\x1b[cc\x1b[?6$pd\x1b[18t\x9b6n';
    expect(guard.admit(queries)).toBe(queries);
    // Far past the burst: the budget refills at its rate, and must not refill within this test.
    for (let i = 0; i < 4 * REPLY_BURST; i++) guard.replied();
    expect(guard.admit(queries)).toBe('a\x1b[\x18b\x1b[\x18c\x1b[\x18d\x1b[\x18\x9b\x18');
    // What is no query passes unchanged while the budget is spent.
    expect(guard.admit('\x1b[1mred\x1b[0m\x1b[2J')).toBe('\x1b[1mred\x1b[0m\x1b[2J');
  });

  it('bounds a string sequence across chunks and knows when the stream is between sequences', () => {
    const guard = new HostileStreamGuard(8);
    expect(guard.atGround).toBe(true);
    expect(guard.admit('x\x1b]0;abc')).toBe('x\x1b]0;abc');
    expect(guard.atGround).toBe(false);
    expect(guard.admit('defghij')).toBe('def\x18');
    expect(guard.admit('klm\x07line\r\n')).toBe('line\r\n');
    expect(guard.atGround).toBe(true);
    expect(guard.discardedSequences).toBe(1);
  });
});
