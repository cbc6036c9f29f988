/**
 * What may settle a send (SPEC §4.1 startup, §4.2, §8). A caller's send accepts every kind of proof
 * the readiness rules allow; a shell's startup phases accept less, and which phases a shell needs is its
 * dialect's business (`src/worker/shell/`). The send lifecycle only reads the policy it is given.
 */

/** When silence (no pty bytes for `idleSilenceMs`) may settle a send as `inferred_idle`. */
export type SilenceRule =
  /** Only where the probes cannot see the reader (SPEC §4.2: no exact tier, a relay, a bare prompt line). */
  | 'unseen-reader'
  /** Once the shell printed anything: zero-output silence never publishes a shell. */
  | 'after-output'
  /** Never: only proof settles. */
  | 'never';

/** The evidence one send accepts, and what its result is for. */
export interface ReadinessPolicy {
  /** The shell's verified prompt (marker, controlled prompt, the shell blocked on the terminal) settles. */
  readonly prompt: boolean;
  /** A thread newly blocked reading the terminal settles (the shell's line editor included). */
  readonly stdinWait: boolean;
  /** A wait from before the write that the write did not wake settles (rule 4). */
  readonly unwokenWait: boolean;
  /** When silence settles. */
  readonly silence: SilenceRule;
  /**
   * A startup phase: its output is the shell's MOTD, not a result (the continuity cursor stays), and
   * a phase without input collects from the shell's very first byte (no write boundary).
   */
  readonly startup: boolean;
}

/** A caller's send: every proof, silence only where the probes cannot see. */
export const CALLER_SEND: ReadinessPolicy = Object.freeze({
  prompt: true,
  stdinWait: true,
  unwokenWait: true,
  silence: 'unseen-reader',
  startup: false,
});

/**
 * Startup of a shell that prints its marker by itself: its own verified prompt, or output followed by
 * silence (a shell whose prompt the marker does not reach still starts).
 */
export const STARTUP_AT_PROMPT: ReadinessPolicy = Object.freeze({
  prompt: true,
  stdinWait: false,
  unwokenWait: false,
  silence: 'after-output',
  startup: true,
});

/**
 * Startup of a shell that must be typed its prompt: only a proven stdin wait, so text the shell echoes
 * can never publish it.
 */
export const STARTUP_PROVEN_WAIT: ReadinessPolicy = Object.freeze({
  prompt: false,
  stdinWait: true,
  unwokenWait: false,
  silence: 'never',
  startup: true,
});

/** Startup phase that typed the prompt setup: only the verified marker that setup installs. */
export const STARTUP_INSTALLED_PROMPT: ReadinessPolicy = Object.freeze({
  prompt: true,
  stdinWait: false,
  unwokenWait: false,
  silence: 'never',
  startup: true,
});
