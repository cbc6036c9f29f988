/**
 * Validation of a caller's send (SPEC §4.2, §5): everything is checked before a byte is written, and
 * bad input is refused with `INVALID_ARGUMENT` naming the field.
 */
import type { EngineConfig } from '../shared/config.js';
import { TerminalError } from '../shared/errors.js';
import type { SendSpec } from '../shared/protocol.js';
import { compileWaitPattern, type WaitPattern } from './wait-pattern.js';

/** A validated send, ready for `SendOperation`. */
export interface SendPlan {
  /** Input to type; empty for a wait-only send. */
  text: string;
  /** Press Enter after the text (never for a wait-only send). */
  submit: boolean;
  /** This send's wait bound in ms. */
  timeoutMs: number;
  /** The compiled `waitFor`, when given. */
  waitFor: WaitPattern | undefined;
}

/** Validates `request` against `config`; throws `INVALID_ARGUMENT` on the first bad field. */
export function planSend(request: SendSpec, config: EngineConfig): SendPlan {
  if (typeof request !== 'object' || request === null) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      'a send takes an object: { text?, submit?, timeoutMs?, waitFor? }',
    );
  }
  const { text, submit, timeoutMs, waitFor } = request;
  if (text !== undefined && typeof text !== 'string') {
    throw new TerminalError('INVALID_ARGUMENT', `text must be a string, got ${typeof text}`);
  }
  if (submit !== undefined && typeof submit !== 'boolean') {
    throw new TerminalError('INVALID_ARGUMENT', `submit must be a boolean, got ${typeof submit}`);
  }
  if (timeoutMs !== undefined) {
    if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs <= 0) {
      throw new TerminalError(
        'INVALID_ARGUMENT',
        `timeoutMs must be a positive integer (milliseconds), got ${String(timeoutMs)}`,
      );
    }
    if (timeoutMs > config.maxTimeoutMs) {
      throw new TerminalError(
        'INVALID_ARGUMENT',
        `timeoutMs ${timeoutMs} is above maxTimeoutMs (${config.maxTimeoutMs}); wait again with a send without text instead`,
      );
    }
  }
  if (waitFor !== undefined && typeof waitFor !== 'string') {
    throw new TerminalError('INVALID_ARGUMENT', `waitFor must be a string, got ${typeof waitFor}`);
  }
  const input = text ?? '';
  return {
    text: input,
    // Without text there is nothing to submit: a send without input only waits (SPEC §4.2).
    submit: input !== '' && (submit ?? true),
    timeoutMs: timeoutMs ?? config.timeoutMs,
    waitFor: waitFor === undefined ? undefined : compileWaitPattern(waitFor),
  };
}
