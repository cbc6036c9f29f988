/**
 * Validation of a caller's send (SPEC §4.2, §5): everything is checked before a byte is written, and
 * bad input is refused with `INVALID_ARGUMENT` naming the field.
 */
import type { EngineConfig } from '../../shared/config.js';
import { TerminalError } from '../../shared/errors.js';
import type { SendSpec } from '../../shared/protocol.js';
import type { CappedWait } from '../../shared/types.js';
import { compileWaitPattern, type WaitPattern } from './wait-pattern.js';

/** A validated send, ready for `SendOperation`. */
export interface SendPlan {
  /** Input to type; empty for a wait-only send (and for `text: ''`, which only presses Enter). */
  text: string;
  /** Press Enter after the text (never for a wait-only send). */
  submit: boolean;
  /** This send's wait bound in ms. */
  timeoutMs: number;
  /** Set when the send's `maxWaitMs` cut its wait bound (reported in the result). */
  cappedWait: CappedWait | undefined;
  /** The compiled `waitFor`, when given. */
  waitFor: WaitPattern | undefined;
}

/** Why a send that gives input but would write none is refused (SPEC §7). */
export const NOTHING_TO_WRITE = 'nothing to write: omit text and keys to wait';

/**
 * Validates `request` against `config`; throws `INVALID_ARGUMENT` on the first bad field. `keys` are
 * checked and encoded by the session (they depend on the terminal's modes); here only their presence.
 */
export function planSend(request: SendSpec, config: EngineConfig): SendPlan {
  if (typeof request !== 'object' || request === null) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      'a send takes an object: { text?, submit?, keys?, timeoutMs?, maxWaitMs?, waitFor? }',
    );
  }
  const { text, submit, keys, timeoutMs, maxWaitMs, waitFor } = request;
  if (text !== undefined && typeof text !== 'string') {
    throw new TerminalError('INVALID_ARGUMENT', `text must be a string, got ${typeof text}`);
  }
  if (submit !== undefined && typeof submit !== 'boolean') {
    throw new TerminalError('INVALID_ARGUMENT', `submit must be a boolean, got ${typeof submit}`);
  }
  if (keys !== undefined && text !== undefined) {
    throw new TerminalError('INVALID_ARGUMENT', 'a send carries either text or keys, not both');
  }
  // `text: ''` is input when it presses Enter; without Enter (or as an empty key list) it would write
  // nothing, and a send that writes nothing is a wait, asked for by giving neither.
  if (text === '' && submit === false) throw new TerminalError('INVALID_ARGUMENT', NOTHING_TO_WRITE);
  if (Array.isArray(keys) && keys.length === 0) throw new TerminalError('INVALID_ARGUMENT', NOTHING_TO_WRITE);
  assertMilliseconds('timeoutMs', timeoutMs);
  assertMilliseconds('maxWaitMs', maxWaitMs);
  if (waitFor !== undefined && typeof waitFor !== 'string') {
    throw new TerminalError('INVALID_ARGUMENT', `waitFor must be a string, got ${typeof waitFor}`);
  }
  const bound = waitBound(timeoutMs, maxWaitMs, config);
  return {
    text: text ?? '',
    // Only a send without text and keys is wait-only; `text: ''` presses Enter (SPEC §4.2).
    submit: text !== undefined && (submit ?? true),
    timeoutMs: bound.timeoutMs,
    cappedWait: bound.cappedWait,
    waitFor: waitFor === undefined ? undefined : compileWaitPattern(waitFor),
  };
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

/**
 * The send's wait bound: `min(timeoutMs ?? config timeoutMs, maxWaitMs, maxTimeoutMs)` (SPEC §7). A
 * `timeoutMs` above `maxTimeoutMs` is the caller's mistake and refused — unless the cap cuts it to an
 * allowed bound anyway: the cap belongs to whoever serves the send, and a model that asked for an hour
 * is then simply told the bound it got.
 */
function waitBound(
  timeoutMs: number | undefined,
  maxWaitMs: number | undefined,
  config: EngineConfig,
): { timeoutMs: number; cappedWait: CappedWait | undefined } {
  const asked = timeoutMs ?? config.timeoutMs;
  if (maxWaitMs !== undefined && maxWaitMs < asked && maxWaitMs <= config.maxTimeoutMs) {
    return { timeoutMs: maxWaitMs, cappedWait: { boundMs: maxWaitMs, askedMs: asked } };
  }
  if (asked > config.maxTimeoutMs) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      `timeoutMs ${asked} is above maxTimeoutMs (${config.maxTimeoutMs}); wait again with a send without text instead`,
    );
  }
  return { timeoutMs: asked, cappedWait: undefined };
}
