/**
 * The states of one send (send-operation.ts), each carrying the data that exists only in it: the output
 * evidence while it collects, the write boundary and the write while writing, the confirm, quiet run and
 * probe schedule while waiting, the outcome once settled. Reading a waiting send's confirm in another
 * state does not type-check.
 */
import type { TerminalSendResult } from '../../shared/types.js';
import type { SendWrite } from './send-cancellation.js';
import type { OutputEvidence, PendingConfirm, QuietRun, WriteBoundary } from './send-evidence.js';

/** States of a send; each carries what belongs to it. */
export type SendState =
  /** Terminal replies are drained before the caller's input; only the byte clock runs. */
  | { readonly kind: 'draining'; readonly output: OutputEvidence }
  /** The input is being written; output is collected (its echo). */
  | {
      readonly kind: 'writing';
      readonly output: OutputEvidence;
      readonly boundary: WriteBoundary;
      readonly write: SendWrite;
    }
  | Waiting
  /** The session is closing: no probe, no silence, no output taken; the deadline or the exit settles it. */
  | { readonly kind: 'stopping' }
  | { readonly kind: 'settled'; readonly outcome: SendOutcome };

/** How a settled send ended. */
export type SendOutcome =
  | { readonly kind: 'result'; readonly result: TerminalSendResult }
  | { readonly kind: 'failed'; readonly error: unknown };

/** Gathering readiness evidence after the write (or from the start, without input). */
export interface Waiting {
  readonly kind: 'waiting';
  /** When the write finished (or the send began, without input). */
  readonly since: number;
  readonly output: OutputEvidence;
  readonly boundary: WriteBoundary;
  /** Threads seen leaving the wait they were in at the boundary (rule 4). */
  readonly leftWait: Set<number>;
  /** A prompt or stdin-wait verdict waiting out its confirm window. */
  confirm: PendingConfirm | undefined;
  quietRun: QuietRun;
  /** When the next probe looks, and how probes back off or spin. */
  readonly schedule: ProbeSchedule;
  /**
   * Set while this send processes pending output itself (`processPendingOutput`): what the chunks it
   * processed asked for, applied once the flush returned.
   */
  flushing: OutputReaction | undefined;
}

/** The probes' timing while waiting (the timers themselves are the send's slots). */
export interface ProbeSchedule {
  /** When the armed probe is due (`+Infinity`: none, or one running). */
  dueAt: number;
  /** Position in PROBE_BACKOFF_MS; output starts over. */
  step: number;
  /** Until when probes may run on consecutive event-loop turns (see SPIN_PROBE_MS). */
  spinUntil: number;
  /** Output characters processed since the current spin began (see SPIN_MAX_CHARS). */
  spinChars: number;
}

/**
 * What processed output asks of a waiting send, most urgent first: settle `pattern`; judge at once (a
 * prompt candidate arrived); probe on the next turn, as a burst after a pause (`burst`) or more of one
 * (`spin`); probe once the output pauses; nothing.
 */
export type OutputReaction = 'pattern' | 'judge' | 'burst' | 'spin' | 'after-quiet' | 'none';

/** Which of two reactions wins when one flush processed several chunks. */
export const REACTION_URGENCY: Record<OutputReaction, number> = {
  pattern: 5,
  judge: 4,
  burst: 3,
  spin: 2,
  'after-quiet': 1,
  none: 0,
};
