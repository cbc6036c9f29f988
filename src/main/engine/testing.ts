/**
 * The internal test entry (`agent-pty/internal/testing`): an engine whose sessions can be made to fail
 * on purpose, and a look at what an engine thread holds. Not part of the public API: `createPtyEngine`
 * and `TerminalSession` carry no test hooks, and nothing here is needed to use the engine.
 */
import type { FaultPlan, ThreadDiagnostics, ThreadFaultKind } from '../../shared/protocol.js';
import type { PtyEngine, TerminalSession } from '../../shared/types.js';
import { type EngineInternals, type EngineOptions, openEngine } from './engine.js';

export type { FaultPlan, ThreadDiagnostics, ThreadFaultKind };

/** An engine for the tests: the public engine plus fault injection and thread diagnostics. */
export interface TestingEngine extends PtyEngine, EngineInternals {
  /**
   * Makes the engine thread hosting `session` die or wedge (after the call's reply). Resolves once the
   * thread answered the request or was declared dead, whichever the host sees first.
   */
  crashThread(session: TerminalSession, kind: ThreadFaultKind): Promise<void>;
  /** What an engine thread holds now: with `threads: 1`, the thread of every session. */
  threadDiagnostics(): Promise<ThreadDiagnostics>;
}

/** Creates an engine whose sessions carry `faults` (default: none planned, crashes allowed). */
export async function createTestingEngine(
  options: EngineOptions = {},
  faults: FaultPlan = {},
): Promise<TestingEngine> {
  return openEngine(options, faults);
}
