/**
 * The pwsh dialect's prompt (SPEC §8). PowerShell cannot take its prompt from the environment, so the
 * session types one setup line once pwsh is proven waiting for input: an encoding preamble that pins
 * UTF-8, then a `prompt` function that prints the same private marker as bash — so readiness stays
 * dialect-agnostic — followed by the controlled prompt text.
 */
import { CONTROLLED_PS1 } from './prompt-marker.js';

/** Bash-only variables a pwsh session must not inherit. */
export const BASH_MARKER_VARIABLES = ['PS1', 'PROMPT_COMMAND'] as const;

/** Variables the pwsh dialect adds: PSReadLine and modules drop their colours. */
export const PWSH_VARIABLES: Readonly<Record<string, string>> = { NO_COLOR: '1' };

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
    `"$([char]27)]133;D;$s;${nonce};$PID;$($executionContext.SessionState.Path.CurrentLocation.Path)$([char]7)${CONTROLLED_PS1}" }`;
  return `${preamble}; ${prompt}`;
}
