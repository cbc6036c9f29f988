/**
 * The bracketed status lines every terminal result shares (SPEC §7): `[wait: <reason>]`,
 * `[exit: <code>]`, `[session: running | exited code=… signal=…]`, and the truncation note.
 */
import type { SessionStatus, TerminalScreen, WaitReason } from '../../shared/types.js';

/** What each wait reason tells the model to do next; proven readiness needs no comment. */
const WAIT_HINTS: Record<WaitReason, string> = {
  stdin_read: '',
  running:
    ' the command is still running (the wait bound of this send passed). Keep waiting with terminal_send' +
    ' without text, or stop it with terminal_signal SIGINT.',
  pattern: ' the waitFor pattern matched; the command may still be running.',
  inferred_idle:
    ' not proven finished: output stopped, but the command may still be running or waiting for input.' +
    ' Check with terminal_read before relying on it, or stop it with terminal_signal SIGINT.',
  timeout:
    ' the time limit of this send passed while the command was still busy; it is probably still running.' +
    ' Check later with terminal_read, or stop it with terminal_signal SIGINT.',
  session_exit: ' the shell exited or the session was closed; open a new one with terminal_open.',
};

/** `[wait: reason]` plus what the reason means for the next step. */
export function renderWait(reason: WaitReason): string {
  return `[wait: ${reason}]${WAIT_HINTS[reason]}`;
}

/** `[exit: code]`. */
export function renderExit(code: number): string {
  return `[exit: ${code}]`;
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
