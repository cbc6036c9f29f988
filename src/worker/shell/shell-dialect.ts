/**
 * A shell dialect (SPEC §8): everything that differs between shells, behind one object — the argv and
 * environment, how the private marker is installed, the startup phases, the controlled prompt the
 * marker is verified against, and what the line editor's wait looks like. The session asks its dialect;
 * readiness and the send lifecycle name none. Adding a shell is one file here plus its tests.
 */
import type { Dialect } from '../../shared/types.js';
import type { LineEditorWait } from '../readiness/readiness.js';
import type { ReadinessPolicy } from '../readiness/readiness-policy.js';

/** One shell. Stateless: what one session needs is made by {@link ShellDialect.install}. */
export interface ShellDialect {
  /** The name the config, `engine.spawn()` and `terminal_open` use. */
  readonly name: Dialect;
  /**
   * The controlled prompt: the printable text that follows the marker, exactly (SPEC §4.2 rule 1).
   * Short and plain: it must arrive verbatim.
   */
  readonly prompt: string;
  /** The argv when the config names no `shellPath`. Throws SPAWN_FAILED when the shell is not installed. */
  defaultArgv(): string[];
  /** Prepares one session's shell, whose marker carries `nonce`. */
  install(nonce: string): ShellInstallation;
  /** Whether a wait of the shell itself is its line editor's (see {@link LineEditorWait}). */
  readonly isLineEditorWait: LineEditorWait;
  /**
   * True when the line editor itself asks the terminal questions (PSReadLine's cursor-position
   * request): its wait then counts as a reader of terminal replies.
   */
  readonly lineEditorQueriesTerminal: boolean;
}

/** What one session's shell is started with, and what to clean up after it. */
export interface ShellInstallation {
  /** Variables set on top of the scrubbed host and caller environment (the marker's, ZDOTDIR, NO_COLOR). */
  readonly environment: Readonly<Record<string, string>>;
  /** Variables removed from the shell's environment (another dialect's marker variables). */
  readonly withoutVariables: readonly string[];
  /** Paths the shell reads at startup: a confined shell must be able to read them too. */
  readonly readablePaths: readonly string[];
  /** Startup, in order, under one deadline (SPEC §4.1, §8). The last phase publishes the shell. */
  readonly startup: readonly StartupPhase[];
  /** Removes what `install` created. Idempotent; never throws. */
  dispose(): void;
}

/** One step of a shell's startup. */
export interface StartupPhase {
  /** Text typed in this phase ('' types nothing). */
  readonly text: string;
  /** Press Enter after the text. */
  readonly submit: boolean;
  /** What may end this phase. */
  readonly readiness: ReadinessPolicy;
}

/** A startup phase that types nothing and waits as `readiness` says. */
export function waitPhase(readiness: ReadinessPolicy): StartupPhase {
  return { text: '', submit: false, readiness };
}
