/**
 * The private prompt marker (SPEC §4.1): before every prompt the shell prints
 * `ESC ] 133 ; D ; <exit status> ; <nonce> ; <shell pid> ; <prompt number> ; <cwd> BEL` followed by
 * its dialect's controlled prompt. Every dialect prints this same format (each in its own shell language), so the
 * prompt tracker parses one format. The nonce is random per session, so replayed shell-integration
 * output from elsewhere cannot pose as ours; the pid lets the session tell its own shell's marker from
 * a nested shell that inherited the marker's installation. The prompt number counts the shell's prompts:
 * a line editor repainting its prompt (bash and zsh do on SIGWINCH, on Ctrl-L) prints the marker again
 * with the same number, so a repaint is never taken for the prompt after a command.
 */
import { randomBytes } from 'node:crypto';

/** Payload prefix of our marker inside the OSC (FinalTerm "command finished" with extra fields). */
export const MARKER_PREFIX = '133;D;';

/** Bytes of randomness in a nonce: enough that guessing one is hopeless. */
const NONCE_BYTES = 12;

/** One parsed marker. */
export interface PromptMarker {
  /** `$?` of the last command. */
  exitCode: number;
  /** `$$` of the shell that printed it. */
  shellPid: number;
  /** Which of that shell's prompts this is (counted by the dialect's prompt hook); equal on a repaint. */
  promptNumber: number;
  /** `$PWD` of that shell. */
  cwd: string;
}

/** A fresh per-session nonce (hex). */
export function createNonce(): string {
  return randomBytes(NONCE_BYTES).toString('hex');
}

/** Parses an OSC payload; returns the marker only when it carries `nonce`. */
export function parseOwnedMarker(payload: string, nonce: string): PromptMarker | undefined {
  if (!payload.startsWith(MARKER_PREFIX)) return undefined;
  const fields = payload.slice(MARKER_PREFIX.length).split(';');
  if (fields.length < 5 || fields[1] !== nonce) return undefined;
  const exitCode = Number(fields[0]);
  const shellPid = Number(fields[2]);
  const promptNumber = Number(fields[3]);
  if (!Number.isInteger(exitCode) || !Number.isInteger(shellPid) || shellPid <= 0) return undefined;
  if (!Number.isInteger(promptNumber) || promptNumber < 0) return undefined;
  // The cwd is the last field and may itself contain ';'.
  return { exitCode, shellPid, promptNumber, cwd: fields.slice(4).join(';') };
}
