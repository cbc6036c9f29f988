/** How the CLI shows a send result: the model's-eye view (delta, reason, exit code, status, time). */
import type { SessionStatus, TerminalSendResult } from '../../shared/types.js';

/** One-line summary of a session status. */
export function formatStatus(status: SessionStatus): string {
  if (status.kind === 'running') return 'running';
  return `exited code=${status.exitCode ?? 'none'} signal=${status.signal ?? 'none'}`;
}

/** The output block a model would receive, followed by a metadata line. */
export function formatSendResult(result: TerminalSendResult): string {
  const meta = [`[wait: ${result.waitReason}]`];
  if (result.exitCode !== undefined) meta.push(`[exit: ${result.exitCode}]`);
  meta.push(`[session: ${formatStatus(result.sessionStatus)}]`);
  if (result.cwd !== undefined) meta.push(`[cwd: ${result.cwd}]`);
  if (result.truncated) meta.push('[truncated: older output dropped; page with :read]');
  meta.push(`${result.elapsedMs.toFixed(1)} ms`);
  const body = result.viewport === '' ? '(no output)' : result.viewport;
  return `${body}\n${meta.join(' ')}`;
}
