/**
 * Real `agent-pty daemon` processes for behaviour tests (SPEC §12): each in a private temporary
 * directory, stopped after the test (before the leak checks run), whatever the test did to it.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

/** The CLI of this build. */
export const BIN = new URL('../../dist/main/cli/bin.js', import.meta.url).pathname;

/** A daemon process and what it said. */
export interface DaemonProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Resolves with its exit code (or signal name) once it exited. */
  readonly exited: Promise<number | string>;
}

const running = new Set<DaemonProcess>();
const directories: string[] = [];

/** A fresh directory (mode `mode`, default 0755 so another uid may look inside) removed after the test. */
export function scratchDirectory(mode = 0o755): string {
  const dir = mkdtempSync(join(tmpdir(), 'agent-pty-daemon-test-'));
  chmodSync(dir, mode);
  directories.push(dir);
  return dir;
}

/** Starts `agent-pty daemon ARGS…` (not waiting for it to listen). */
export function launchDaemon(args: readonly string[], env: NodeJS.ProcessEnv = process.env): DaemonProcess {
  const child = spawn(process.execPath, [BIN, 'daemon', ...args], { env, cwd: '/' });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout.resume();
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const daemon: DaemonProcess = { child, stderr: () => stderr, exited };
  running.add(daemon);
  void exited.then(() => running.delete(daemon));
  return daemon;
}

/** Starts a daemon on `socket` and resolves once it listens; rejects with its stderr if it exits first. */
export async function startDaemonProcess(
  socket: string,
  extra: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): Promise<DaemonProcess> {
  const daemon = launchDaemon(['--socket', socket, ...extra], env);
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (daemon.stderr().includes('listening on')) {
        daemon.child.stderr.off('data', onData);
        resolve();
      }
    };
    daemon.child.stderr.on('data', onData);
    void daemon.exited.then((code) => reject(new Error(`daemon exited (${code}): ${daemon.stderr()}`)));
  });
  return daemon;
}

/** Runs `agent-pty ARGS…` to completion. */
export function runCli(
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

afterEach(async () => {
  await Promise.all(
    [...running].map(async (daemon) => {
      daemon.child.kill('SIGTERM');
      await daemon.exited;
    }),
  );
  for (const dir of directories.splice(0)) rmSync(dir, { recursive: true, force: true });
});
