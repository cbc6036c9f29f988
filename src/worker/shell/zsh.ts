/**
 * The zsh dialect (SPEC §8): `zsh -i` with a private `ZDOTDIR` — a directory made per session and
 * removed at close — holding the engine's own startup files, so the user's rc files are never read
 * and the engine's always are. (`zsh -f` would skip the engine's files as well.) The marker comes from
 * a `precmd` hook that re-asserts PS1 before every prompt, the same way bash's PROMPT_COMMAND does.
 *
 * ZLE, zsh's line editor, reads the shell's own terminal descriptor (SHTTY, which zsh opens on the
 * terminal and moves to 10 or above), while the `read` builtin reads fd 0: observed with zsh 5.9 at a
 * prompt, a continuation prompt and in `vared`: `read(10, …, 1)`; `read x`: `read(0, …)`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireOnPath } from '../../shared/find-on-path.js';
import type { ThreadWait } from '../proc/stdin-wait.js';
import { MARKER_PREFIX } from '../readiness/prompt-marker.js';
import { STARTUP_AT_PROMPT } from '../readiness/readiness-policy.js';
import { BASH_MARKER_VARIABLE_NAMES } from './bash.js';
import { type ShellDialect, waitPhase } from './shell-dialect.js';

/** The controlled prompt, zsh's usual sign. */
const ZSH_PROMPT = '% ';

/** zsh moves SHTTY out of the user's descriptors 0–9 (`movefd`); ZLE's reads are on it. */
const FIRST_SHELL_PRIVATE_FD = 10;

/** Prefix of the per-session ZDOTDIR under the host's temporary directory. */
const ZDOTDIR_PREFIX = 'agent-pty-zsh-';

/**
 * `.zshenv`, read first by every zsh: the system-wide rc files after it (`/etc/zsh/zshrc` and the
 * like) are skipped, as bash's `--norc` skips `/etc/bash.bashrc`. Only `/etc/zsh/zshenv`, which zsh
 * reads before anything and which cannot be skipped, runs.
 */
const ZSHENV = 'unsetopt GLOBAL_RCS\n';

/**
 * `.zshrc` for a session whose marker carries `nonce`:
 * - no bracketed-paste, right prompt, end-of-line mark (`PROMPT_SP`), leading carriage return or bell:
 *   nothing but the marker and the prompt is printed around a command;
 * - comments allowed at the prompt, as in bash; no `!` history expansion, which would turn typed
 *   text such as `echo "pid=$!"` into a continuation prompt or an "event not found";
 * - `precmd` saves `$?` first (the status of the user's command; zsh gives every hook the same value),
 *   counts the prompt (ZLE's repaint on SIGWINCH or Ctrl-L prints the same PS1, so the same number),
 *   then re-asserts the prompt options and PS1 with the marker inside `%{ %}` (zero width for ZLE).
 *   The marker being part of PS1, ZLE's redraw after a job notice prints it again with its prompt;
 * - `ZDOTDIR` is unset, so a zsh the user starts reads the user's own files.
 */
function zshrc(nonce: string): string {
  const promptSign = ZSH_PROMPT.replaceAll('%', '%%');
  return [
    'zmodload zsh/zle',
    'unset zle_bracketed_paste RPS1 RPROMPT',
    'unsetopt PROMPT_SP PROMPT_CR BEEP',
    'setopt INTERACTIVE_COMMENTS NO_BANG_HIST',
    "PS2='> '",
    '__agent_pty_precmd() {',
    '  local s=$?',
    '  typeset -gi __agent_pty_prompt; (( __agent_pty_prompt += 1 ))',
    '  setopt PROMPT_PERCENT NO_PROMPT_SUBST NO_PROMPT_BANG',
    `  PS1="%{"$'\\e]${MARKER_PREFIX}'"\${s};${nonce};$$;\${__agent_pty_prompt};%d"$'\\a'"%}${promptSign}"`,
    '}',
    'precmd_functions=(__agent_pty_precmd)',
    'unset ZDOTDIR',
    '',
  ].join('\n');
}

/** See the file comment. */
export const zshDialect: ShellDialect = {
  name: 'zsh',
  prompt: ZSH_PROMPT,
  defaultArgv: () => [requireOnPath('zsh', 'zsh', 'zsh (Debian/Ubuntu: apt-get install zsh)'), '-i'],
  install(nonce) {
    const dir = mkdtempSync(join(tmpdir(), ZDOTDIR_PREFIX));
    try {
      writeFileSync(join(dir, '.zshenv'), ZSHENV, { mode: 0o600 });
      writeFileSync(join(dir, '.zshrc'), zshrc(nonce), { mode: 0o600 });
    } catch (error) {
      removeDirectory(dir);
      throw error;
    }
    return {
      environment: { ZDOTDIR: dir },
      withoutVariables: BASH_MARKER_VARIABLE_NAMES,
      // A confined shell has a private /tmp: the sandbox binds this directory into it, read-only.
      readablePaths: [dir],
      startup: [waitPhase(STARTUP_AT_PROMPT)],
      dispose: () => removeDirectory(dir),
    };
  },
  isLineEditorWait: (wait: ThreadWait) => wait.fd !== undefined && wait.fd >= FIRST_SHELL_PRIVATE_FD,
  lineEditorQueriesTerminal: false,
};

/** Removes `dir` and its files; a failure leaves a few bytes in the temporary directory, nothing more. */
function removeDirectory(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // Nothing to do: the directory holds no secret beyond a dead session's nonce.
  }
}
