/**
 * The pwsh dialect (SPEC §8). PowerShell cannot take its prompt from the environment, so the session
 * types one setup line once pwsh is proven waiting for input: an encoding preamble that pins UTF-8,
 * then a `prompt` function that prints the same private marker as bash followed by the controlled
 * prompt. PSReadLine asks the terminal for the cursor position from its line editor; the xterm replier
 * answers it.
 */

import { requireOnPath } from '../../shared/find-on-path.js';
import { MARKER_PREFIX } from '../readiness/prompt-marker.js';
import { STARTUP_INSTALLED_PROMPT, STARTUP_PROVEN_WAIT } from '../readiness/readiness-policy.js';
import { BASH_MARKER_VARIABLE_NAMES, bashDialect } from './bash.js';
import { type ShellDialect, waitPhase } from './shell-dialect.js';

/** pwsh without logo or profile; the prompt function is written through the session. */
const PWSH_ARGS: readonly string[] = ['-NoLogo', '-NoProfile'];

/** The controlled prompt. */
const PWSH_PROMPT = '$ ';

/** Variables the pwsh dialect adds: PSReadLine and modules drop their colours. */
const PWSH_VARIABLES: Readonly<Record<string, string>> = { NO_COLOR: '1' };

/** See the file comment. */
export const pwshDialect: ShellDialect = {
  name: 'pwsh',
  prompt: PWSH_PROMPT,
  defaultArgv: () => [requireOnPath('pwsh', 'pwsh', 'PowerShell'), ...PWSH_ARGS],
  install: (nonce) => ({
    environment: PWSH_VARIABLES,
    withoutVariables: BASH_MARKER_VARIABLE_NAMES,
    readablePaths: [],
    // Proven waiting first, so echoed text can never publish pwsh; then the setup is typed and only
    // the marker it installs publishes.
    startup: [
      waitPhase(STARTUP_PROVEN_WAIT),
      { text: pwshSetupScript(nonce), submit: true, readiness: STARTUP_INSTALLED_PROMPT },
    ],
    dispose: () => undefined,
  }),
  // PSReadLine's key wait is told from a builtin's read the way readline's is.
  isLineEditorWait: bashDialect.isLineEditorWait,
  lineEditorQueriesTerminal: true,
};

/**
 * The setup line. `$?` is read first: it is the status of the user's last command only until the prompt
 * function runs anything else; a failed native command reports `$LASTEXITCODE`.
 */
export function pwshSetupScript(nonce: string): string {
  const preamble =
    '$OutputEncoding = [Console]::InputEncoding = [Console]::OutputEncoding = [System.Text.UTF8Encoding]::new($false)';
  const prompt =
    'function global:prompt { ' +
    '$s = if ($?) { 0 } elseif ($global:LASTEXITCODE) { $global:LASTEXITCODE } else { 1 }; ' +
    // Counted without reading an unset variable, which `Set-StrictMode` would make an error.
    '$global:__agent_pty_prompt = 1 + [int](Get-Variable -Scope Global -Name __agent_pty_prompt -ValueOnly -ErrorAction Ignore); ' +
    `"$([char]27)]${MARKER_PREFIX}$s;${nonce};$PID;$global:__agent_pty_prompt;$($executionContext.SessionState.Path.CurrentLocation.Path)$([char]7)${PWSH_PROMPT}" }`;
  return `${preamble}; ${prompt}`;
}
