/**
 * Starting the per-user daemon on demand (`agent-pty mcp --daemon`, SPEC §12). When nothing answers on
 * the socket, one client — the holder of the starter lock, so five servers started at once start one
 * daemon — starts it detached from itself: through `systemd-run --user --unit=agent-pty-daemon -p
 * Delegate=yes` where a user manager runs (which also gives it delegated cgroups for §4.8), else in a
 * session of its own (`setsid`) with its output appended to `$XDG_STATE_HOME/agent-pty/daemon.log`
 * (0600). Every client then waits until the daemon answers.
 */
import { spawn } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describeError, TerminalError } from '../../shared/errors.js';
import { findOnPath } from '../../shared/find-on-path.js';
import { delay } from '../../shared/lifecycle.js';
import { checkSocketPathLength, currentUid, prepareSocketDirectory } from '../worlds/socket-directory.js';
import { probe } from './daemon.js';
import { tryStartLock } from './start-lock.js';

/** How the daemon is waited for. */
const START_TIMING = {
  /** A daemon must answer within this after it was started (Node's start, the engine's threads). */
  ANSWER_MS: 30_000,
  /** Between two probes of the socket while waiting. */
  PROBE_INTERVAL_MS: 25,
} as const;

/** The CLI of this installation (the daemon runs the same version as its first client). */
const BIN = new URL('../cli/bin.js', import.meta.url).pathname;

/** Where the daemon's output goes when it is started with `setsid`. */
export function daemonLogPath(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME?.startsWith('/') ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  return join(state, 'agent-pty', 'daemon.log');
}

/** Resolves once a daemon answers on `socketPath`, starting one if none does. */
export async function ensureDaemon(socketPath: string, log: (line: string) => void): Promise<void> {
  checkSocketPathLength(socketPath); // before the probe: connecting would use the cut-short path
  if ((await probe(socketPath)) === 'live') return;
  prepareSocketDirectory(socketPath);
  // A lock of its own, not the daemon's: the daemon takes that one while it starts.
  const lock = await tryStartLock(`${socketPath}#starter`, currentUid());
  if (lock === undefined) {
    await waitForAnswer(socketPath); // another client is starting it
    return;
  }
  try {
    if ((await probe(socketPath)) === 'live') return;
    await waitForAnswer(socketPath, startDetached(socketPath, log));
  } finally {
    await lock.release();
  }
}

/**
 * Starts the daemon; resolves the returned promise when a daemon started with `setsid` exits (with
 * the tail of its log). systemd-run exits once the unit is queued, so its exit says nothing.
 */
function startDetached(socketPath: string, log: (line: string) => void): Promise<string> | undefined {
  const argv = [process.execPath, BIN, 'daemon', '--socket', socketPath];
  const systemdRun = userManagerAvailable() ? findOnPath('systemd-run') : undefined;
  if (systemdRun !== undefined) {
    log(`starting the daemon as the systemd user unit agent-pty-daemon (${socketPath})`);
    const child = spawn(
      systemdRun,
      ['--user', '--unit=agent-pty-daemon', '--collect', '-p', 'Delegate=yes', ...argv],
      { stdio: 'ignore', detached: true },
    );
    child.unref();
    return undefined;
  }
  const logFile = daemonLogPath();
  mkdirSync(join(logFile, '..'), { recursive: true, mode: 0o700 });
  const fd = openSync(logFile, 'a', 0o600);
  try {
    chmodSync(logFile, 0o600);
    log(`starting the daemon with setsid (${socketPath}); its log: ${logFile}`);
    // `detached` is setsid(2): the daemon leads a session of its own, no terminal signal of ours reaches it.
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', fd, fd], detached: true, cwd: '/' });
    // Unref'd, the listener keeps nothing alive; a daemon that refuses to start (its socket path is
    // taken, its config is bad) exits at once, and waiting the whole answer time for it helps nobody.
    // One-shot: the child's exit (or its failed spawn) ends them with the promise.
    const exited = new Promise<string>((resolve) => {
      child.once('exit', (code, signal) =>
        resolve(`exited with ${signal ?? `code ${code}`}: ${logTail(logFile)}`),
      );
      child.once('error', (error) => resolve(`could not start: ${describeError(error)}`));
    });
    child.unref();
    return exited;
  } finally {
    closeSync(fd);
  }
}

/** A systemd user manager runs for this user (its private socket exists). */
function userManagerAvailable(): boolean {
  const runtime = process.env.XDG_RUNTIME_DIR;
  return runtime !== undefined && existsSync(join(runtime, 'systemd', 'private'));
}

/** The last lines of the daemon's log (what a daemon that exited at once said). */
function logTail(logFile: string): string {
  let text: string;
  try {
    text = readFileSync(logFile, 'utf8');
  } catch (error) {
    return `its log ${logFile} cannot be read (${describeError(error)})`;
  }
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  return lines.length === 0 ? `its log ${logFile} is empty` : lines.slice(-3).join(' | ');
}

/** Waits until the daemon answers; fails at once when the daemon this client started has `exited`. */
async function waitForAnswer(socketPath: string, exited?: Promise<string>): Promise<void> {
  const deadline = Date.now() + START_TIMING.ANSWER_MS;
  let exit: string | undefined;
  void exited?.then((why) => {
    exit = why;
  });
  while ((await probe(socketPath)) !== 'live') {
    // Only a failed probe consults the exit: the started daemon is gone and none answers.
    if (exit !== undefined) {
      throw new TerminalError('TRANSPORT_CLOSED', `the agent-pty daemon on ${socketPath} ${exit}`);
    }
    if (Date.now() > deadline) {
      throw new TerminalError(
        'TRANSPORT_CLOSED',
        `the agent-pty daemon did not answer on ${socketPath} within ${START_TIMING.ANSWER_MS} ms; see ${daemonLogPath()}`,
      );
    }
    await delay('daemon start probe interval', START_TIMING.PROBE_INTERVAL_MS);
  }
}
