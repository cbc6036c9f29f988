/**
 * The signals `session.signal()` delivers (SPEC §4.4), checked at run time: the type `SignalName`
 * only binds TypeScript callers, while a number, `SIGSTOP` or `SIGSEGV` can arrive from JavaScript,
 * over the harness service or over a world's wire (`serve --stdio`). `process.kill` accepts all of
 * them, so each entry point checks with {@link assertSignalName} before anything is delivered.
 */
import { TerminalError } from './errors.js';
import type { SignalName } from './types.js';

/** Every signal the API delivers, by name: interrupt, terminate, kill, stop from the terminal, hang up. */
export const SIGNAL_NAMES = Object.freeze([
  'SIGINT',
  'SIGTERM',
  'SIGKILL',
  'SIGTSTP',
  'SIGHUP',
] as const satisfies readonly SignalName[]);

/** Throws `INVALID_ARGUMENT` unless `signal` is exactly one of {@link SIGNAL_NAMES}. */
export function assertSignalName(signal: unknown): asserts signal is SignalName {
  if (typeof signal === 'string' && (SIGNAL_NAMES as readonly string[]).includes(signal)) return;
  const given =
    typeof signal === 'string' ? `'${signal}'` : typeof signal === 'number' ? String(signal) : typeof signal;
  throw new TerminalError(
    'INVALID_ARGUMENT',
    `signal must be one of SIGINT, SIGTERM, SIGKILL, SIGTSTP or SIGHUP, by name; got ${given}` +
      ' (to end the session, close it)',
  );
}
