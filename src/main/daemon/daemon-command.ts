/**
 * `agent-pty daemon [--socket PATH] [--config FILE] [--status | --stop]` (SPEC §12): runs the daemon in
 * the foreground until SIGTERM, SIGINT, SIGHUP or `--stop`; or asks the running one for its status, or
 * to stop. Diagnostics go to stderr (a supervisor or `mcp --daemon` sends them to the log).
 */
import { describeError } from '../../shared/errors.js';
import { DisposableStore } from '../../shared/lifecycle.js';
import type { DaemonStatus } from '../../shared/world-protocol.js';
import { defaultSocketPath } from '../worlds/socket-directory.js';
import { readDaemonConfig, startDaemon } from './daemon.js';
import { askDaemon } from './daemon-control.js';

/** Signals that stop the daemon (every session closed) instead of killing it outright. */
const SHUTDOWN_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** The parsed command line. */
export interface DaemonCommand {
  action: 'run' | 'status' | 'stop';
  socket?: string;
  config?: string;
}

/** Runs the command; resolves with the exit status. */
export async function runDaemonCommand(command: DaemonCommand): Promise<number> {
  const socketPath = command.socket ?? defaultSocketPath();
  if (command.action === 'status') {
    const status = await askDaemon<DaemonStatus>(socketPath, 'daemon-status');
    process.stdout.write(formatStatus(status));
    return 0;
  }
  if (command.action === 'stop') {
    await askDaemon(socketPath, 'daemon-stop');
    process.stdout.write(`agent-pty daemon on ${socketPath}: stopping, every session closed\n`);
    return 0;
  }
  const config = command.config === undefined ? {} : readDaemonConfig(command.config);
  // Diagnostics must never end the daemon: a log pipe that closed fails with EPIPE. The process's
  // lifetime: this process is the daemon, and its stderr is written until it exits.
  process.stderr.on('error', (unwritable: unknown) => void unwritable);
  const daemon = await startDaemon({ socketPath, config });
  const onSignal = (signal: NodeJS.Signals) => void daemon.stop(signal);
  // Kept until the end: a second signal during teardown must not kill the process and orphan shells.
  const hooks = new DisposableStore();
  for (const signal of SHUTDOWN_SIGNALS) {
    hooks.listen('daemon shutdown signal hook', process, signal, onSignal);
  }
  try {
    const reason = await daemon.stopped;
    process.stderr.write(`agent-pty daemon: stopped (${reason})\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`agent-pty daemon: ${describeError(error)}\n`);
    return 1;
  } finally {
    hooks.dispose();
  }
}

/** `--status` as text: one line per fact, one per session. */
function formatStatus(status: DaemonStatus): string {
  const lines = [
    `pid: ${status.pid}`,
    `version: ${status.version}`,
    `protocol: ${status.protocol.min}-${status.protocol.max}`,
    `socket: ${status.socket}`,
    `sessions: ${status.sessions.length}`,
    ...status.sessions.map(
      (session) =>
        `  ${session.id}${session.name === undefined ? '' : ` "${session.name}"`} pid ${session.pid} ${session.status.kind} ${session.attached ? 'attached' : 'detached'}${session.busy ? ' busy' : ''} ${session.scope}`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
