/**
 * What a send is refused for whatever the terminal is doing (SPEC §4.2, §4.7, §7), checked where the
 * send has to wait before it reaches the engine thread: a send held for a person's hand-back (SPEC §13)
 * must fail at once with the code it would get without a hold, not minutes later when it starts.
 *
 * The engine thread runs the same checks on every send when it starts (`planSend` in
 * src/worker/readiness/send-request.ts calls `precheckSend`, then compiles `waitFor`): it alone knows
 * the terminal's state (whether `C-c` may be sent).
 */
import { TerminalError } from './errors.js';
import { assertInputWithinLimit } from './input-limit.js';
import { validateKeys } from './keys.js';
import type { SendSpec } from './protocol.js';
import { assertWaitExpressionLength, compileWaitExpression } from './wait-expression.js';

/** The engine's bounds a send is checked against. */
export interface SendPrecheckLimits {
  /** Default wait bound (config `timeoutMs`). */
  timeoutMs: number;
  /** Largest wait bound (config `maxTimeoutMs`). */
  maxTimeoutMs: number;
  /** Largest input per send (config `maxInputBytes`). */
  maxInputBytes: number;
}

/** Why a send that gives input but would write none is refused (SPEC §7). */
export const NOTHING_TO_WRITE = 'nothing to write: omit text and keys to wait';

/**
 * Throws what the engine would throw for `spec` in any terminal state: `INVALID_ARGUMENT` naming the
 * field, `INPUT_TOO_LARGE`, `UNKNOWN_KEY`.
 */
export function precheckSend(spec: SendSpec, limits: SendPrecheckLimits): void {
  if (typeof spec !== 'object' || spec === null) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      'a send takes an object: { text?, submit?, keys?, timeoutMs?, maxWaitMs?, waitFor? }',
    );
  }
  const { text, submit, keys, timeoutMs, maxWaitMs, waitFor } = spec;
  if (text !== undefined && typeof text !== 'string') {
    throw new TerminalError('INVALID_ARGUMENT', `text must be a string, got ${typeof text}`);
  }
  if (submit !== undefined && typeof submit !== 'boolean') {
    throw new TerminalError('INVALID_ARGUMENT', `submit must be a boolean, got ${typeof submit}`);
  }
  if (keys !== undefined && text !== undefined) {
    throw new TerminalError('INVALID_ARGUMENT', 'a send carries either text or keys, not both');
  }
  if (text === '' && submit === false) throw new TerminalError('INVALID_ARGUMENT', NOTHING_TO_WRITE);
  if (Array.isArray(keys) && keys.length === 0) throw new TerminalError('INVALID_ARGUMENT', NOTHING_TO_WRITE);
  assertMilliseconds('timeoutMs', timeoutMs);
  assertMilliseconds('maxWaitMs', maxWaitMs);
  if (waitFor !== undefined) {
    if (typeof waitFor !== 'string') {
      throw new TerminalError('INVALID_ARGUMENT', `waitFor must be a string, got ${typeof waitFor}`);
    }
    assertWaitExpressionLength(waitFor);
  }
  const asked = timeoutMs ?? limits.timeoutMs;
  const capped = maxWaitMs !== undefined && maxWaitMs < asked && maxWaitMs <= limits.maxTimeoutMs;
  if (!capped && asked > limits.maxTimeoutMs) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      `timeoutMs ${asked} is above maxTimeoutMs (${limits.maxTimeoutMs}); wait again with a send without text instead`,
    );
  }
  if (typeof text === 'string') assertInputWithinLimit(text, limits.maxInputBytes);
  // Names only: whether C-c may be sent depends on the terminal when the send starts.
  if (keys !== undefined) validateKeys(keys, true);
}

/**
 * {@link precheckSend}, and `waitFor` compiled as the engine thread will compile it (RE2 syntax, program
 * size): for a send that waits for a person's hand-back, whose compile on the thread comes only then.
 */
export function precheckHeldSend(spec: SendSpec, limits: SendPrecheckLimits): void {
  precheckSend(spec, limits);
  if (spec.waitFor !== undefined) compileWaitExpression(spec.waitFor);
}

/** Refuses a wait-bound field that is given but not a positive integer of milliseconds. */
function assertMilliseconds(field: 'timeoutMs' | 'maxWaitMs', value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      `${field} must be a positive integer (milliseconds), got ${String(value)}`,
    );
  }
}
