// The check of a send that waits for a person's hand-back (SPEC §13) refuses exactly what the engine
// thread's own validation refuses, in its words (planSend runs precheckSend, then compiles waitFor).
import { describe, expect, it } from 'vitest';
import { resolveEngineConfig } from '../../../src/shared/config.js';
import type { SendSpec } from '../../../src/shared/protocol.js';
import { precheckSend } from '../../../src/shared/send-precheck.js';
import { planSend } from '../../../src/worker/readiness/send-request.js';

const config = resolveEngineConfig({}, 'test');
const limits = {
  timeoutMs: config.timeoutMs,
  maxTimeoutMs: config.maxTimeoutMs,
  maxInputBytes: config.maxInputBytes,
};

function refusalOf(check: () => unknown): { code: string; message: string } | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    const { code, message } = error as { code: string; message: string };
    return { code, message };
  }
}

describe('precheckSend against the engine thread’s planSend', () => {
  const specs: unknown[] = [
    null,
    { text: 5 },
    { text: 'ls', submit: 'yes' },
    { text: 'ls', keys: ['Enter'] },
    { text: '', submit: false },
    { keys: [] },
    { text: 'ls', timeoutMs: 0 },
    { text: 'ls', timeoutMs: 1.5 },
    { text: 'ls', maxWaitMs: -1 },
    { text: 'ls', waitFor: 3 },
    { text: 'ls', waitFor: '' },
    { text: 'ls', waitFor: 'a'.repeat(5000) },
    { text: 'ls', timeoutMs: config.maxTimeoutMs + 1 },
    { text: 'ls', timeoutMs: config.maxTimeoutMs + 1, maxWaitMs: 1000 },
    { text: 'ls', waitFor: 'ready|listening' },
  ];
  for (const spec of specs) {
    it(`agrees on ${JSON.stringify(spec)?.slice(0, 60)}`, () => {
      expect(refusalOf(() => precheckSend(spec as SendSpec, limits))).toEqual(
        refusalOf(() => planSend(spec as SendSpec, config)),
      );
    });
  }
});
