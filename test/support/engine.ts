/**
 * Engine access for behaviour tests: the real engine from `dist/` (its worker threads load compiled
 * JavaScript), created per test and always closed. `testEngine`, `testingEngine` and `underTest` come
 * from the package under test (package-under-test.ts: this build, or an installed copy).
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { afterEach } from 'vitest';
import type { FaultPlan, TestingEngine } from '../../dist/main/engine/testing.js';
import type { EngineOptions } from '../../dist/main/index.js';
import { liveDescendants } from './leaks.js';
import { packageFileUrl } from './package-under-test.js';
import { until } from './until.js';

/** The public entry of the package under test (`agent-pty`). */
export const underTest: typeof import('../../dist/main/index.js') = await import(
  packageFileUrl('dist/main/index.js')
);
/** Its internal test entry: not in the package's `exports`, imported by path. */
const testing: typeof import('../../dist/main/engine/testing.js') = await import(
  packageFileUrl('dist/main/engine/testing.js')
);

export type { ThreadDiagnostics } from '../../dist/main/engine/testing.js';
export * from '../../dist/main/index.js';

type Engine = Awaited<ReturnType<typeof underTest.createPtyEngine>>;
const open = new Set<Engine>();

/** Creates an engine that is closed after the current test (before the leak checks run). */
export async function testEngine(options: EngineOptions = {}): Promise<Engine> {
  const engine = await underTest.createPtyEngine(options);
  open.add(engine);
  return engine;
}

/**
 * Like `testEngine`, through the internal test entry: its sessions carry `faults`, its threads can be
 * crashed, and it reports what a thread holds.
 */
export async function testingEngine(
  options: EngineOptions = {},
  faults: FaultPlan = {},
): Promise<TestingEngine> {
  const engine = await testing.createTestingEngine(options, faults);
  open.add(engine);
  return engine;
}

afterEach(async () => {
  const engines = [...open];
  open.clear();
  await Promise.allSettled(engines.map((engine) => engine.close()));
});

/**
 * Resolves once a process named `comm` runs in the tree of the session whose pty child is `pid` (polled
 * from /proc: the kernel offers no event for it). A test that acts on a running command waits for this,
 * never for a fixed time.
 */
export async function commandRunning(pid: number, comm: string): Promise<void> {
  await until(`${comm} running in session ${pid}`, () => liveDescendants(pid).some((p) => p.comm === comm));
}

/** The terminal a process has on fd 0, e.g. /dev/pts/3. */
export function ttyOf(pid: number): string {
  return readlinkSync(`/proc/${pid}/fd/0`);
}

/** True when `pid` exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  return stat.charAt(stat.lastIndexOf(')') + 2) !== 'Z';
}
