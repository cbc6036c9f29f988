/**
 * The sandbox contract (SPEC §4.1): a provider turns a shell argv into an argv that runs it confined.
 * Types only; the Linux provider lives in `src/main/sandbox/bubblewrap.ts`.
 */
import type { SandboxMode } from './types.js';

/** What a confined shell may touch, fixed for the life of its terminal. */
export interface SandboxPolicy {
  /** Effective mode. */
  mode: SandboxMode;
  /** Absolute path of an existing directory: writable in `workspace-write`, readable in every mode. */
  workspaceRoot: string;
  /**
   * False when the root was not named but taken from where the host started (the MCP server or the
   * CLI without `--workspace`; default true). A root that is `/`, `$HOME` or an ancestor of `$HOME`
   * taken that way is refused for `workspace-write`, and in `read-only` shows nothing of `$HOME`
   * (SPEC §4.1). `/` is refused for `workspace-write` however it was chosen.
   */
  workspaceExplicit?: boolean;
  /**
   * The directory the shell starts in. When given, a confined mode refuses a cwd it does not show
   * (hidden or missing alike) with `INVALID_ARGUMENT`, and the shell starts exactly there.
   */
  cwd?: string;
  /**
   * Paths relative to `$HOME` the confined session may read (SPEC §3 `homeAllowlist`); the engine
   * passes its config. A provider's default applies when absent.
   */
  homeAllowlist?: readonly string[];
  /** Allow network access in the confined modes (default false: no network at all). */
  network?: boolean;
  /**
   * Size cap in bytes of each private tmpfs of the confined modes (`/tmp`, `/dev/shm`); a positive
   * integer. The engine passes its `tmpfsBytes` config; a provider's default applies when absent.
   */
  tmpfsBytes?: number;
  /**
   * Absolute paths the shell must be able to read in every confined mode, bound read-only over whatever
   * the mode makes of them: the shell's own startup files, which its dialect writes per session under
   * the host's temporary directory (a confined `/tmp` is private). Missing paths are an error.
   */
  readablePaths?: readonly string[];
}

/** Wraps argvs so they run confined by a {@link SandboxPolicy}. */
export interface SandboxProvider {
  /** Short name for logs and errors, e.g. `bubblewrap`. */
  readonly name: string;
  /**
   * Returns the argv that runs `argv` confined by `policy`. Rejects with
   * `TerminalError('SANDBOX_UNAVAILABLE')` (saying what is missing and what to do) when the mode
   * cannot be enforced; never returns an unconfined argv for a confined mode. `danger-full-access`
   * returns `argv` unchanged.
   */
  confine(argv: string[], policy: SandboxPolicy): Promise<string[]>;
}
