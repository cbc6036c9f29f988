/**
 * `agent-pty serve --stdio`: this process becomes an execution world (SPEC §10). The engine protocol
 * runs on stdin/stdout; diagnostics go to stderr. Shells run here, confined by bubblewrap when a spawn
 * asks for a confined sandbox mode. The process exits once its client is gone (stdin closed, link
 * silent, or shut down) or on SIGTERM, SIGINT or SIGHUP — every session closed first.
 */
import { describeError } from '../../shared/errors.js';
import { DisposableStore } from '../../shared/lifecycle.js';
import type { PtyEngine } from '../../shared/types.js';
import { createPtyEngine } from '../engine/engine.js';
import { createBubblewrapSandbox } from '../sandbox/bubblewrap.js';
import { serveWorld } from './world-server.js';

/** Signals that end serving (every session closed) instead of killing the process outright. */
const SHUTDOWN_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/**
 * After serving ended, how long stdout may take to hand over its last frames (a refusal, the answer to
 * a shutdown). A dead link never drains; the process must exit anyway.
 */
const FLUSH_BOUND_MS = 1_000;

/** Exit status of a refused client (protocol mismatch, invalid configuration). */
const EXIT_REFUSED = 2;

/** Serves on stdin/stdout until the client is gone; resolves with the process's exit status. */
export async function runServeStdio(): Promise<number> {
  let requestStop!: (why: string) => void;
  const stopRequested = new Promise<string>((resolve) => {
    requestStop = resolve;
  });
  // Kept until the end: a second signal during teardown must not kill the process and orphan shells.
  const onSignal = (signal: NodeJS.Signals) => requestStop(signal);
  const hooks = new DisposableStore();
  for (const signal of SHUTDOWN_SIGNALS) {
    hooks.listen('serve shutdown signal hook', process, signal, onSignal);
  }
  // Diagnostics must never end the process: over a dead ssh link stderr fails with EPIPE too. The
  // process's lifetime: this process is the world, and its stderr is written until it exits.
  process.stderr.on('error', (unwritable: unknown) => void unwritable);
  try {
    const outcome = await serveWorld({
      input: process.stdin,
      output: process.stdout,
      createEngine: (config): Promise<PtyEngine> =>
        createPtyEngine({ ...config, sandbox: createBubblewrapSandbox() }),
      stopRequested,
    });
    process.stderr.write(`agent-pty serve: ${outcome.reason}; exiting\n`);
    await flushStdout();
    return outcome.refused ? EXIT_REFUSED : 0;
  } catch (error) {
    process.stderr.write(`agent-pty serve: ${describeError(error)}\n`);
    return 1;
  } finally {
    process.stdin.destroy(); // a paused stdin pipe would keep the process alive
    hooks.dispose();
  }
}

/** Resolves once stdout (ended by the server) took everything written, or after {@link FLUSH_BOUND_MS}. */
function flushStdout(): Promise<void> {
  if (process.stdout.writableFinished || process.stdout.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const flushing = new DisposableStore();
    const done = () => {
      flushing.dispose();
      resolve();
    };
    flushing.timeout('serve stdout flush bound', FLUSH_BOUND_MS, done);
    flushing.listen('serve stdout flush listener', process.stdout, 'finish', done, { once: true });
    flushing.listen('serve stdout flush listener', process.stdout, 'error', done, { once: true });
  });
}
