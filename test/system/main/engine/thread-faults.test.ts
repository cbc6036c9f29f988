// SPEC §4.7: a wedged engine thread is found by its heartbeat within a few seconds, and an engine
// thread that dies of heap exhaustion never takes the host down. Each run hosts the engine in a child
// node process (test/fixtures/thread-fault-host.mjs): two sessions share the thread, the second with a
// background job; the first makes the thread spin or run out of heap. An abort of the host would show
// as the child's exit code 134 instead of killing the test runner.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const FIXTURE = fileURLToPath(new URL('../../../fixtures/thread-fault-host.mjs', import.meta.url));

/** Heap exhaustion runs: the abort it used to cause came in 6 of 40 runs, so one run proves nothing. */
const OOM_RUNS = 20;
/** Each run takes ~1.7 s (three spawns, the fault, the checks); the bound leaves room for a loaded machine. */
const OOM_TEST_TIMEOUT_MS = 150_000;
/** SPEC §4.7's "a few seconds": the heartbeat's stall bound (3 s) plus its check period and slack. */
const WEDGE_DETECTION_BOUND_MS = 5_000;

interface FaultReport {
  codes: string[];
  /** Message of the pending send's rejection. */
  message: string;
  rejectedAfterMs: number;
  alive: number[];
  jobFound: boolean;
  newSession: boolean;
}

interface HostRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  report: FaultReport | undefined;
  stderr: string;
}

const running = new Set<ReturnType<typeof spawn>>();

afterEach(() => {
  // A host still running when its test failed: SIGTERM lets its exit guard kill its shells.
  for (const child of running) child.kill('SIGTERM');
});

function runFaultHost(kind: 'spin' | 'oom'): Promise<HostRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FIXTURE, kind], { stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (exitCode, signal) => {
      running.delete(child);
      const line = stdout.split('\n')[0] ?? '';
      resolve({ exitCode, signal, report: line === '' ? undefined : JSON.parse(line), stderr });
    });
  });
}

function expectContained(run: HostRun): void {
  expect(run.exitCode, run.stderr).toBe(0);
  expect(run.report).toMatchObject({
    // The pending send, then later calls of both sessions that shared the thread.
    codes: ['ENGINE_THREAD_DIED', 'ENGINE_THREAD_DIED', 'ENGINE_THREAD_DIED'],
    // Both shells and the neighbour's background job were killed.
    alive: [],
    jobFound: true,
    // A session spawned afterwards (on a fresh thread) answers `echo ok-$((6*7))` with ok-42.
    newSession: true,
  });
}

describe('engine thread faults', () => {
  it('a spinning thread is detected by its heartbeat within seconds; its sessions die, a new spawn works', async () => {
    const run = await runFaultHost('spin');
    expectContained(run);
    // Found by the heartbeat (the thread never exited on its own), within the bound.
    expect(run.report!.message).toMatch(/stopped responding \(no heartbeat\)/);
    expect(run.report!.rejectedAfterMs).toBeLessThan(WEDGE_DETECTION_BOUND_MS);
  });

  it(
    `heap exhaustion of a thread never aborts the host (${OOM_RUNS} runs)`,
    async () => {
      const exits: Array<number | null> = [];
      for (let i = 0; i < OOM_RUNS; i++) {
        const run = await runFaultHost('oom');
        exits.push(run.exitCode);
        expectContained(run);
      }
      expect(exits).toEqual(Array(OOM_RUNS).fill(0));
    },
    OOM_TEST_TIMEOUT_MS,
  );
});
