/**
 * Validation of a caller's send (SPEC §4.2, §5): everything is checked before a byte is written, and
 * bad input is refused with `INVALID_ARGUMENT` naming the field.
 */
import type { EngineConfig } from '../../shared/config.js';
import type { SendSpec } from '../../shared/protocol.js';
import { precheckSend } from '../../shared/send-precheck.js';
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
export { NOTHING_TO_WRITE } from '../../shared/send-precheck.js';

/**
 * Validates `request` against `config`; throws on the first bad field (`INVALID_ARGUMENT` naming it,
 * `INPUT_TOO_LARGE`, `UNKNOWN_KEY`) with the checks a held send already passed on the host
 * (`precheckSend`, one copy), then compiles `waitFor`, which only this thread can. `keys` are encoded
 * by the session (they depend on the terminal's modes); here only their names are checked.
 */
export function planSend(request: SendSpec, config: EngineConfig): SendPlan {
  precheckSend(request, config);
  const { text, submit, timeoutMs, maxWaitMs, waitFor } = request;
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

/**
 * The send's wait bound: `min(timeoutMs ?? config timeoutMs, maxWaitMs, maxTimeoutMs)` (SPEC §7). A
 * `timeoutMs` above `maxTimeoutMs` was refused by `precheckSend` — unless the cap cuts it to an allowed
 * bound anyway: the cap belongs to whoever serves the send, and a model that asked for an hour is then
 * simply told the bound it got.
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
  return { timeoutMs: asked, cappedWait: undefined };
}
