/**
 * The private prompt marker (SPEC §4.1): before every prompt the shell prints
 * `ESC ] 133 ; D ; <exit status> ; <nonce> ; <shell pid> ; <cwd> BEL` followed by the controlled PS1.
 * The nonce is random per session, so replayed shell-integration output from elsewhere cannot pose as
 * ours; the pid lets the session tell its own shell's marker from a nested shell that inherited
 * PROMPT_COMMAND.
 */
import { randomBytes } from 'node:crypto';

/** The controlled prompt. Deliberately short and plain: it must arrive verbatim after the marker. */
export const CONTROLLED_PS1 = '$ ';

/** Payload prefix of our marker inside the OSC (FinalTerm "command finished" with extra fields). */
const MARKER_PREFIX = '133;D;';

/** Bytes of randomness in a nonce: enough that guessing one is hopeless. */
const NONCE_BYTES = 12;

/** One parsed marker. */
export interface PromptMarker {
  /** `$?` of the last command. */
  exitCode: number;
  /** `$$` of the shell that printed it. */
  shellPid: number;
  /** `$PWD` of that shell. */
  cwd: string;
}

/** A fresh per-session nonce (hex). */
export function createNonce(): string {
  return randomBytes(NONCE_BYTES).toString('hex');
}

/**
 * Environment variables that make bash print the marker with every prompt. The marker is part of PS1
 * itself (inside `\[ \]`, so readline counts it as zero-width): bash prints job notices ("[1]+ Done")
 * after PROMPT_COMMAND but before PS1, so a marker printed by PROMPT_COMMAND could be separated from
 * its prompt. PROMPT_COMMAND only saves `$?` — it must be read first, it is the status of the user's
 * command only until the next command runs — and re-asserts PS1 each time, so a command that changes
 * PS1 cannot degrade later sends to silence readiness. PS1's `${...}` are expanded when the prompt is
 * shown (bash's `promptvars`, on by default).
 */
export function bashMarkerVariables(nonce: string): Record<string, string> {
  const markerPs1 = `\\[\\e]${MARKER_PREFIX}\${__agent_pty_status:-0};${nonce};$$;\${PWD}\\a\\]${CONTROLLED_PS1}`;
  const promptCommand = `__agent_pty_status=$?; PS1=${shellQuote(markerPs1)}`;
  return { PS1: markerPs1, PROMPT_COMMAND: promptCommand };
}

/** Parses an OSC payload; returns the marker only when it carries `nonce`. */
export function parseOwnedMarker(payload: string, nonce: string): PromptMarker | undefined {
  if (!payload.startsWith(MARKER_PREFIX)) return undefined;
  const fields = payload.slice(MARKER_PREFIX.length).split(';');
  if (fields.length < 4 || fields[1] !== nonce) return undefined;
  const exitCode = Number(fields[0]);
  const shellPid = Number(fields[2]);
  if (!Number.isInteger(exitCode) || !Number.isInteger(shellPid) || shellPid <= 0) return undefined;
  // The cwd is the last field and may itself contain ';'.
  return { exitCode, shellPid, cwd: fields.slice(3).join(';') };
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}
