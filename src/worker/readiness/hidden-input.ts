/**
 * Whether a settled send waits for input the terminal does not echo (SPEC §13): a password or a
 * passphrase, which a model must not guess and should ask the user for.
 *
 * Proof comes from the master's termios (terminal-local-flags.ts): canonical mode with echo off is
 * how `getpass`, `read -s`, `sudo` and `ssh-keygen` read a secret. Line editors (readline, ZLE, the
 * python REPL) turn canonical mode off and echo themselves, so a shell's or REPL's own prompt is
 * never flagged. Where the flags cannot prove it — a program that reads its password in raw mode, or
 * a prompt behind a relay such as `ssh` (the local terminal is raw, the remote one out of sight) —
 * a partial line that reads like a password prompt gives `'likely'`.
 */
import type { TerminalSendResult } from '../../shared/types.js';
import type { TerminalLocalFlags } from '../pty/terminal-local-flags.js';

/** What a result says about hidden input. */
export type HiddenInput = true | 'likely';

/**
 * Words of a prompt that asks for a secret, at the end of the partial line (after them at most a
 * colon or question mark and spaces). Anchored at the end so output that merely mentions a password
 * earlier on the line does not count.
 */
const SECRET_PROMPT =
  /(?:password|passphrase|passcode|passwort|mot de passe|contraseña|senha|\bpin\b|one-time code|verification code|otp|2fa code|authenticator code)[^\n]{0,40}?[:?]\s*$/iu;

/** Longest tail of the partial line looked at: a prompt is short, and the check must stay well under 0.1 ms. */
const PROMPT_TAIL_CHARS = 160;

/** Command names of shells, whose own line editor owns a non-canonical terminal at their prompt. */
const SHELL_COMMANDS: ReadonlySet<string> = new Set(['bash', 'zsh', 'sh', 'dash', 'fish', 'ksh', 'pwsh']);

/**
 * The hidden-input verdict of `result`, given the terminal's local flags at the settle (undefined when
 * they could not be read). Only a program waiting for input is judged: `stdin_read`, or `inferred_idle`
 * (where a relay hides the reader).
 */
export function hiddenInputOf(
  result: TerminalSendResult,
  flags: TerminalLocalFlags | undefined,
): HiddenInput | undefined {
  const reason = result.waitReason;
  if (reason !== 'stdin_read' && reason !== 'inferred_idle') return undefined;
  if (result.screen !== undefined) return undefined; // a full-screen program draws its own fields
  if (reason === 'stdin_read' && flags !== undefined && flags.canonical && !flags.echo) return true;
  if (flags?.canonical) return undefined; // a canonical read that echoes: visible input
  // The shell's own line editor at its prompt: whatever the output before it said, it is no secret prompt.
  const command = result.foreground?.command;
  if (command !== undefined && SHELL_COMMANDS.has(command) && reason === 'stdin_read') return undefined;
  return looksLikeSecretPrompt(result.viewport) ? 'likely' : undefined;
}

/** Whether the partial (last, unterminated) line of `viewport` reads like a password prompt. */
export function looksLikeSecretPrompt(viewport: string): boolean {
  const from = Math.max(0, viewport.length - PROMPT_TAIL_CHARS);
  const lineStart = viewport.lastIndexOf('\n') + 1;
  const tail = viewport.slice(Math.max(from, lineStart));
  return tail.trim() !== '' && SECRET_PROMPT.test(tail);
}

/**
 * Each send's verdict, computed once at its first result (the flags change as soon as the program
 * reads its input), so asking for the same result again gives the same answer.
 */
export class HiddenInputVerdicts {
  private readonly verdicts = new WeakMap<object, HiddenInput | null>();

  /** `result` with `inputHidden` when the verdict says so; `readFlags` runs once per send. */
  apply(
    send: object,
    result: TerminalSendResult,
    readFlags: () => TerminalLocalFlags | undefined,
  ): TerminalSendResult {
    let verdict = this.verdicts.get(send);
    if (verdict === undefined) {
      verdict = hiddenInputOf(result, needsFlags(result) ? readFlags() : undefined) ?? null;
      this.verdicts.set(send, verdict);
    }
    return verdict === null ? result : { ...result, inputHidden: verdict };
  }
}

/** Only a result that waits for input needs the terminal's flags read. */
function needsFlags(result: TerminalSendResult): boolean {
  return result.waitReason === 'stdin_read' || result.waitReason === 'inferred_idle';
}
