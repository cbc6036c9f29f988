/**
 * The phases of a session's life (session.ts), each carrying what exists in it: the dialect's
 * installation from `plan()`, the launched terminal (the pty and what is built on its descriptor) from
 * `launch()`, and both, as far as they exist, once `close()` began.
 */
import type { IPty } from 'node-pty';
import type { ProcessIdentity } from '../shared/proc-stat.js';
import type { PtyInputWriter } from './pty/pty-input-writer.js';
import type { PtyOutputDrain } from './pty/pty-output-drain.js';
import type { PtyTextDecoder } from './pty/pty-text-decoder.js';
import type { ShellIdentity } from './readiness/readiness.js';
import type { ReplyGate } from './replies/reply-gate.js';
import type { ShellInstallation } from './shell/shell-dialect.js';

/**
 * Where a session is in its life. `closing` begins with the first `close()` and stays (a failed close
 * is retried from it); it keeps what the session had, so teardown can reach the terminal.
 */
export type SessionPhase =
  | { readonly kind: 'created' }
  /** `plan()` made the dialect's files for this session. */
  | { readonly kind: 'planned'; readonly installation: ShellInstallation }
  /** `launch()` spawned the shell (which may have exited since: see `exitStatus`). */
  | {
      readonly kind: 'launched';
      readonly installation: ShellInstallation;
      readonly launched: LaunchedTerminal;
    }
  | {
      readonly kind: 'closing';
      readonly installation: ShellInstallation | undefined;
      readonly launched: LaunchedTerminal | undefined;
    };

/** What exists once the shell was spawned: the pty and everything built on its descriptor. */
export interface LaunchedTerminal {
  readonly term: IPty;
  /** The pty master's descriptor (the writer's, the drain's, the termios reads'). */
  readonly fd: number;
  /** The pty child (the shell, or the launcher above it), by identity. */
  readonly root: ProcessIdentity;
  /** The terminal's device number: a descriptor is the session's terminal when it matches. */
  readonly ttyRdev: number;
  readonly writer: PtyInputWriter;
  readonly outputDrain: PtyOutputDrain;
  /** Turns the bytes read from the master into text (node-pty hands the session bytes). */
  readonly decoder: PtyTextDecoder;
  /** Where the terminal model's replies wait for their reader (reply-gate.ts). */
  readonly replyGate: ReplyGate;
  /** The one deadline of the whole startup (`performance.now()` ms). */
  readonly startupDeadline: number;
  /** Resolves once node-pty reported the child's exit. */
  readonly exited: Promise<void>;
  readonly markExited: () => void;
  /** The session's shell, identified from the first prompt candidate that names it (see `resolveShell`). */
  shellIdentity: ShellIdentity | undefined;
  /** When a terminal reply last reached the kernel (readiness gives the reader time to take it). */
  lastReplyAt: number;
}

/** The launched terminal in `phase`: from launch on, through close; undefined before. */
export function launchedIn(phase: SessionPhase): LaunchedTerminal | undefined {
  return phase.kind === 'launched' || phase.kind === 'closing' ? phase.launched : undefined;
}
