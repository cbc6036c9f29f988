/**
 * The bracketed status lines every terminal result shares (SPEC §7): `[wait: <reason>]`,
 * `[exit: <code>]`, `[foreground: <command>]`, `[session: running | exited code=… signal=…]`, and the
 * truncation note.
 */
import type { ForegroundProcess, SessionStatus, TerminalScreen, WaitReason } from '../../shared/types.js';

/**
 * Command names of shells: a foreground that is one of them is the shell itself (at its prompt, its
 * continuation prompt or `read`), which needs no `[foreground: …]` line; anything else (`python3` at
 * `>>>`, `vim`, `sleep`) is named so a model can tell a REPL's prompt from the shell's.
 */
const SHELL_COMMANDS: ReadonlySet<string> = new Set(['bash', 'zsh', 'sh', 'dash', 'pwsh', 'fish', 'ksh']);

/** The call that keeps waiting: `terminal_send` without text for this session, or in general. */
function waitAgainCall(sessionId: string | undefined): string {
  return sessionId === undefined
    ? 'terminal_send without text'
    : `terminal_send ${JSON.stringify({ sessionId })} (no text)`;
}

/** What each wait reason tells the model to do next; proven readiness needs no comment. */
function waitHint(reason: WaitReason, sessionId: string | undefined): string {
  const waitAgain = waitAgainCall(sessionId);
  switch (reason) {
    case 'stdin_read':
      return '';
    case 'running':
      return (
        ' the command is still running: this send stopped waiting before it finished (it is not done, and' +
        ` not waiting for input). Keep waiting with ${waitAgain}, or stop it with terminal_signal SIGINT.`
      );
    case 'pattern':
      return (
        ' the waitFor pattern matched; the command may still be running (a server keeps serving).' +
        ` Follow its output with ${waitAgain} or terminal_read, stop it with terminal_signal SIGINT.`
      );
    case 'inferred_idle':
      return (
        ' not proven finished: output stopped where readiness cannot be observed (an unusual prompt, or' +
        ' a relay such as ssh, script or tmux); the command may still be running or waiting for input.' +
        ` Check with terminal_read, keep waiting with ${waitAgain}, or stop it with terminal_signal SIGINT.`
      );
    case 'timeout':
      return (
        " not proven finished: this send's wait bound passed and the terminal's state could not be read;" +
        ` the command is probably still running. Keep waiting with ${waitAgain}, check with terminal_read,` +
        ' or stop it with terminal_signal SIGINT.'
      );
    case 'session_exit':
      return ' the shell exited or the session was closed; open a new one with terminal_open.';
  }
}

/**
 * `[wait: reason]` plus what the reason means for the next step. With `sessionId`, the hint names the
 * exact call that keeps waiting.
 */
export function renderWait(reason: WaitReason, sessionId?: string): string {
  return `[wait: ${reason}]${waitHint(reason, sessionId)}`;
}

/** `[exit: code]`. */
export function renderExit(code: number): string {
  return `[exit: ${code}]`;
}

/** `[foreground: command]` when something other than the shell holds the terminal, else nothing. */
export function renderForeground(foreground: ForegroundProcess | undefined): string[] {
  if (foreground === undefined || SHELL_COMMANDS.has(foreground.command)) return [];
  return [`[foreground: ${foreground.command}]`];
}

/** `[session: running]` or `[session: exited code=… signal=…]` (`none` for an absent value). */
export function renderSession(status: SessionStatus): string {
  if (status.kind === 'running') return '[session: running]';
  return `[session: exited code=${status.exitCode ?? 'none'} signal=${status.signal ?? 'none'}]`;
}

/** A `terminal_read` call as the model would write it. */
export function readCall(sessionId: string, offset: number, count?: number): string {
  const args = count === undefined ? { sessionId, offset } : { sessionId, offset, count };
  return `terminal_read ${JSON.stringify(args)}`;
}

/** The truncation note: what was dropped, and the call that pages back to it. */
export function renderTruncated(what: string, sessionId: string, offset: number): string {
  return `[truncated: ${what}; page back with ${readCall(sessionId, offset)}]`;
}

/**
 * A full-screen program's screen (SPEC §4.3): a header naming the cursor (1-based, as editors count),
 * then the screen's lines, trailing blank lines left out.
 */
export function renderScreen(screen: TerminalScreen): string {
  const lines = [...screen.lines];
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const header =
    `[screen: a full-screen program owns the terminal; cursor at row ${screen.cursor.row + 1}, ` +
    `column ${screen.cursor.col + 1}; answer it with keys]`;
  return [header, ...lines].join('\n');
}
