/**
 * The bash dialect (SPEC §4.1, §8), the default: bash without profile or rc files, its prompt marker
 * installed through the environment alone, published at its own verified prompt.
 */

import type { ThreadWait } from '../proc/stdin-wait.js';
import { MARKER_PREFIX } from '../readiness/prompt-marker.js';
import { STARTUP_AT_PROMPT } from '../readiness/readiness-policy.js';
import { type ShellDialect, waitPhase } from './shell-dialect.js';

/** bash without profile or rc files: the environment alone installs the prompt marker. */
const BASH_ARGV: readonly string[] = ['/bin/bash', '--noprofile', '--norc', '-i'];

/** The controlled prompt. */
const BASH_PROMPT = '$ ';

/** Readline waits for a key in `pselect6` on fd 0 (older builds: `select`/`poll`); `read x` in `read`. */
const READLINE_SYSCALLS: ReadonlySet<string> = new Set(['pselect6', 'select', 'poll', 'ppoll']);

/** The variables bash's marker lives in; other dialects remove them so no host value leaks in. */
export const BASH_MARKER_VARIABLE_NAMES: readonly string[] = ['PS1', 'PROMPT_COMMAND'];

/** See the file comment. */
export const bashDialect: ShellDialect = {
  name: 'bash',
  prompt: BASH_PROMPT,
  defaultArgv: () => [...BASH_ARGV],
  install: (nonce) => ({
    environment: bashMarkerVariables(nonce),
    withoutVariables: [],
    readablePaths: [],
    startup: [waitPhase(STARTUP_AT_PROMPT)],
    dispose: () => undefined,
  }),
  isLineEditorWait: (wait: ThreadWait) => wait.syscall === undefined || READLINE_SYSCALLS.has(wait.syscall),
  lineEditorQueriesTerminal: false,
};

/**
 * Environment variables that make bash print the marker with every prompt. The marker is part of PS1
 * itself (inside `\[ \]`, so readline counts it as zero-width): bash prints job notices ("[1]+ Done")
 * after PROMPT_COMMAND but before PS1, so a marker printed by PROMPT_COMMAND could be separated from
 * its prompt. PROMPT_COMMAND saves `$?` — it must be read first, it is the status of the user's
 * command only until the next command runs — counts the prompt (readline's repaint on SIGWINCH or
 * Ctrl-L prints PS1 again, expanded once per prompt, so it repeats the number) and re-asserts PS1, so a command that changes
 * PS1 cannot degrade later sends to silence readiness. PS1's `${...}` are expanded when the prompt is
 * shown (bash's `promptvars`, on by default).
 */
export function bashMarkerVariables(nonce: string): Record<string, string> {
  const markerPs1 = `\\[\\e]${MARKER_PREFIX}\${__agent_pty_status:-0};${nonce};$$;\${__agent_pty_prompt:-0};\${PWD}\\a\\]${BASH_PROMPT}`;
  const promptCommand = `__agent_pty_status=$?; __agent_pty_prompt=$((\${__agent_pty_prompt:-0} + 1)); PS1=${shellQuote(markerPs1)}`;
  return { PS1: markerPs1, PROMPT_COMMAND: promptCommand };
}

/** `value` as one single-quoted POSIX shell word. */
function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}
