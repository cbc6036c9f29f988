/**
 * How the CLI shows a send result: the model's-eye view. The bracketed lines are the very ones the
 * `terminal_send` tool renders for a model (src/main/tools/render.ts); the CLI adds the elapsed time.
 */
import type { SessionStatus, TerminalSendResult } from '../../shared/types.js';
import { renderExit, renderForeground, renderSession, renderWait } from '../tools/render.js';

/** One-line summary of a session status. */
export function formatStatus(status: SessionStatus): string {
  return renderSession(status);
}

/** The status lines a model receives after the output, then the cwd and the elapsed time. */
export function formatSendStatus(result: TerminalSendResult): string {
  const meta = [renderWait(result.waitReason)];
  if (result.exitCode !== undefined) meta.push(renderExit(result.exitCode));
  meta.push(...renderForeground(result.foreground));
  meta.push(renderSession(result.sessionStatus));
  if (result.cwd !== undefined) meta.push(`[cwd: ${result.cwd}]`);
  if (result.truncated) meta.push('[truncated: older output dropped; page back with :read]');
  meta.push(`(${result.elapsedMs.toFixed(1)} ms)`);
  return meta.join('\n');
}

/** The output block a model would receive, followed by its status lines and the elapsed time. */
export function formatSendResult(result: TerminalSendResult): string {
  const body = result.viewport === '' ? '(no output)' : result.viewport;
  return `${body}\n${formatSendStatus(result)}`;
}
