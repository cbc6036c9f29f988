/**
 * Public types of the engine API (SPEC §5). Shared by the host thread and the engine threads; no
 * runtime code lives here.
 */
import type { SendKey } from './keys.js';

export type { SendKey } from './keys.js';

import type { DIALECTS } from './dialects.js';

/** Shell dialect (SPEC §8): decides the default shell, its environment and how its prompt is proven. */
export type Dialect = (typeof DIALECTS)[number];

/** Sandbox modes, from most to least confined: the one list that schemas, flags and validation use. */
export const SANDBOX_MODES = ['read-only', 'workspace-write', 'danger-full-access'] as const;

/** A sandbox mode (see `SANDBOX_MODES`). */
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** Why a send settled. */
export type WaitReason =
  /** Proven: the shell is back at its own prompt, or the foreground group is blocked reading the terminal. */
  | 'stdin_read'
  /**
   * Not proven finished: the wait bound passed while the foreground was observed running or sleeping,
   * not reading the terminal. The command goes on; wait again with a send without input.
   */
  | 'running'
  /** The send's `waitFor` expression matched its output (the command may still be running). */
  | 'pattern'
  /**
   * Not proven: no pty bytes for `idleSilenceMs` where the probes cannot see (no exact tier, a prompt
   * read some way the probes do not know, or a relay such as `ssh`/`script`/`tmux`).
   */
  | 'inferred_idle'
  /** Not proven: the wait bound passed and the foreground state could not be read. */
  | 'timeout'
  /** The shell exited or the session was closed. */
  | 'session_exit'
  /** A person holds the keyboard (SPEC §13); `humanHold` says whether this send's input was typed. */
  | 'human';

/** Names of the signals `session.signal()` delivers. */
export type SignalName = 'SIGINT' | 'SIGTERM' | 'SIGKILL' | 'SIGTSTP' | 'SIGHUP';

/**
 * What holds a session's processes so that close kills all of them (SPEC §4.6, docs/teardown.md):
 * - `cgroup`: a cgroup v2 of its own, killed as a whole (`cgroup.kill`); a daemonizing descendant dies too;
 * - `pid-namespace`: the sandbox's PID namespace (confined modes);
 * - `process-tree`: neither; teardown kills the pty child's tree and POSIX session.
 */
export type Containment = 'pid-namespace+cgroup' | 'cgroup' | 'pid-namespace' | 'process-tree';

/** What enforces a session limit: a cgroup of the named version, or nothing (with the reason). */
export type LimitEnforcer = 'cgroup-v2' | 'cgroup-v1';

/** A limit nothing enforces on this machine, and why (docs/teardown.md says how to get it). */
export interface UnenforcedLimit {
  enforcedBy: 'none';
  /** Why, with the remedy (e.g. a delegated cgroup: `systemd-run --user -p Delegate=yes …`). */
  reason: string;
}

/**
 * The limits of one session (SPEC §4.8), each reported separately: what it is and what enforces it.
 * Fixed at launch.
 */
export interface SessionLimits {
  /** Memory of the session's cgroup (tmpfs pages it writes count; no swap), within the engine's cap. */
  memory: { bytes: number; engineBytes: number; enforcedBy: LimitEnforcer } | UnenforcedLimit;
  /** Processes and threads of the session's cgroup; a fork beyond it fails (EAGAIN). */
  pids: { max: number; enforcedBy: LimitEnforcer } | UnenforcedLimit;
  /** CPU: every session has the same weight, so a busy session cannot starve another. */
  cpu: { weight: 'equal'; enforcedBy: LimitEnforcer } | UnenforcedLimit;
}

/** Limits asked for one session at spawn (default: the engine's `sessionMemoryBytes` and `sessionPids`). */
export interface SpawnLimits {
  /** Memory limit in bytes (at least 3 × `tmpfsBytes` + 256 MiB). */
  memoryBytes?: number;
  /** Process/thread limit. */
  pids?: number;
}

/** Limit events of a session since its previous result (SPEC §4.8); present only when there were any. */
export interface LimitEvents {
  /** Processes the kernel killed because the session (or the engine) ran out of its memory limit. */
  oomKills: number;
  /** Forks and clones refused because the session reached its process limit. */
  pidsRefused: number;
}

/** Whether the shell is still alive, and what contains the session's processes. */
export type SessionStatus = (
  | { kind: 'running' }
  | {
      kind: 'exited';
      /** Exit code of the shell, when it exited normally. */
      exitCode: number | null;
      /** Signal that ended the shell, when one did. */
      signal: string | null;
    }
) & {
  /** The session's containment, fixed at launch. */
  containment: Containment;
  /** The session's limits and what enforces each, fixed at launch. */
  limits: SessionLimits;
};

/** The sandbox a session runs under, fixed for the life of its terminal. */
export interface SandboxSelection {
  /** Effective mode. */
  mode: SandboxMode;
  /** Workspace root: writable in `workspace-write`, the default cwd in every mode. */
  workspaceRoot: string;
  /**
   * False when the root was taken from where the host started rather than named (default true): a
   * root of `/`, `$HOME` or above `$HOME` is then refused for `workspace-write` and shows nothing of
   * `$HOME` in `read-only` (SPEC §4.1).
   */
  workspaceExplicit?: boolean;
}

/** Options of `engine.spawn()`. */
export interface SpawnOptions {
  /** Working directory (default: the sandbox workspace root, else the host's cwd). */
  cwd?: string;
  /** Extra environment variables, applied after credential scrubbing. */
  env?: Record<string, string>;
  /**
   * The environment the shell starts from instead of this process's own (credential-scrubbed the same
   * way): a daemon spawns with its client's environment, never its own (SPEC §12).
   */
  baseEnv?: Record<string, string>;
  /** Human-readable name shown in listings. */
  name?: string;
  /** Shell dialect (default: the engine's `dialect`). */
  dialect?: Dialect;
  /** Terminal rows (default: the engine's `rows`). */
  rows?: number;
  /** Terminal columns (default: the engine's `cols`). */
  cols?: number;
  /** Sandbox to confine the shell in; without it the shell runs unconfined. */
  sandbox?: SandboxSelection;
  /** This session's limits (default: the engine's). */
  limits?: SpawnLimits;
  /**
   * Record the session as an asciicast v2 file from the raw channel (SPEC §13): a path, or `true` for
   * a file under `$XDG_STATE_HOME/agent-pty/recordings/` (0600). Output events only.
   */
  record?: string | true;
}

/**
 * One send: text typed into the terminal, then a wait for readiness. Without `text` and `keys` the
 * send writes nothing and only waits: how a model keeps waiting for a command that is still running.
 * `text: ''` (with `submit`) is input: it presses Enter. A send that would write nothing although it
 * gives `text` or `keys` (`text: ''` with `submit: false`, `keys: []`) is refused (`INVALID_ARGUMENT`).
 */
export interface SendRequest {
  /** Text to type (optional: no `text` and no `keys` = wait only; `''` with `submit` = press Enter). */
  text?: string;
  /** Press Enter after the text (default true; ignored without text, and for a `keys` send). */
  submit?: boolean;
  /**
   * Instead of `text`: an ordered list of tmux `send-keys` names (`Enter`, `Escape`, `Tab`, `BSpace`,
   * `Up`, `C-x`, `M-x`, `F1` …) and `{ text }` literals, encoded for the terminal's current modes. No
   * Enter is added. Unknown names are refused (`UNKNOWN_KEY`); `C-c` only reaches a full-screen program
   * (`KEY_REFUSED` otherwise: interrupt with `signal`).
   */
  keys?: SendKey[];
  /** This send's wait bound in ms (default config `timeoutMs`, at most `maxTimeoutMs`). */
  timeoutMs?: number;
  /**
   * A cap on this send's wait bound in ms, set by whoever serves the send (an MCP server's
   * `--max-wait`, below its client's request timeout): the bound is `min(timeoutMs ?? config
   * timeoutMs, maxWaitMs, maxTimeoutMs)`, and a result whose bound it cut says so (`cappedWait`).
   */
  maxWaitMs?: number;
  /**
   * Settle with `pattern` once this regular expression (RE2 syntax, linear time) matches a completed
   * line of the send's output or its current partial line, e.g. `Listening on|ready in`.
   */
  waitFor?: string;
  /** Aborting ends only the wait: the send settles as `running`, nothing is signalled. */
  signal?: AbortSignal;
}

/** The rendered screen of a full-screen program (SPEC §4.3). */
export interface TerminalScreen {
  /** `rows` lines as the screen shows them, trailing blanks trimmed. */
  lines: string[];
  /** Cursor position, 0-based. */
  cursor: { row: number; col: number };
}

/** What holds the terminal's foreground when a send settles. */
export interface ForegroundProcess {
  /** Host pid of the foreground group's leader (or of the reader seen on the terminal). */
  pid: number;
  /** Its command name (`bash`, `python3`, `vim`). */
  command: string;
}

/** What a settled send returns (SPEC §4.2). */
export interface TerminalSendResult {
  /** Bounded, sanitized output of this send (the final prompt is not included). */
  viewport: string;
  /** Why the send settled. */
  waitReason: WaitReason;
  /** Exit code of the last command, from the prompt marker (only when the shell's prompt settled it). */
  exitCode?: number;
  /** Shell working directory, from the prompt marker (only when the shell's prompt settled it). */
  cwd?: string;
  /** What holds the terminal when the send settled (`bash` at its prompt, `python3` at `>>>`). */
  foreground?: ForegroundProcess;
  /** The rendered screen, present while a full-screen program (alternate screen) owns the terminal. */
  screen?: TerminalScreen;
  /** Whether the shell is still alive. */
  sessionStatus: SessionStatus;
  /** True when `viewport` dropped older output to stay within `maxReadBytes`. */
  truncated: boolean;
  /**
   * With `truncated`, how many lines of this result's output `viewport` holds nothing of (dropped by
   * `maxReadBytes`, or evicted from the scrollback); absent when none.
   */
  omittedLines?: number;
  /** Milliseconds from the start of the send to its settle. */
  elapsedMs: number;
  /** Limit events of the session since its previous result (an OOM kill, refused forks); absent when none. */
  limitEvents?: LimitEvents;
  /** Present when the send's `maxWaitMs` cut its wait bound: the bound applied and the one asked. */
  cappedWait?: CappedWait;
  /**
   * The program waits for input the terminal does not echo (SPEC §13): `true` when the master's termios
   * prove it (canonical mode, echo off: `sudo`, `getpass`, `read -s`), `'likely'` when only the prompt's
   * words suggest it. The model should ask the user to type it, never guess it.
   */
  inputHidden?: true | 'likely';
  /**
   * With `waitReason: 'human'`, which send the person's hold settled (SPEC §13): `taken_over` — it was in
   * flight at take-over, so its input was typed and may still be running; `not_typed` — its input waited
   * for hand-back and its bound ended first, nothing typed; `wait_only` — it had no input and its bound
   * ended while held.
   */
  humanHold?: HumanHold;
}

/** Which send a keyboard hold settled `human` (see {@link TerminalSendResult.humanHold}). */
export type HumanHold = 'taken_over' | 'not_typed' | 'wait_only';

/** How a send's cap (`maxWaitMs`) cut its wait bound. */
export interface CappedWait {
  /** The wait bound applied, in ms (the cap). */
  boundMs: number;
  /** The bound asked: the send's `timeoutMs`, else the engine's config `timeoutMs`. */
  askedMs: number;
}

/** Output delta of an in-flight send since the previous `readOutput()`. */
export interface SendOutputDelta {
  /** New sanitized output. */
  delta: string;
  /** True when output was dropped between reads to stay bounded. */
  truncated: boolean;
}

/** Arguments of `session.read()`. */
export interface ReadRequest {
  /** Lines back from the newest line (default 0 = end at the newest line). */
  offset?: number;
  /** Number of lines (default 500). */
  count?: number;
}

/** A page of scrollback. */
export interface ReadResult {
  /** The lines, joined with `\n`. */
  text: string;
  /** Lines currently held in the scrollback. */
  totalLines: number;
  /** Index (0 = oldest held line) of the first returned line. */
  lineBegin: number;
  /** Index one past the last returned line. */
  lineEnd: number;
  /** True when the page was cut to `maxReadBytes` (older lines of the page were dropped). */
  truncated: boolean;
}

/** A terminal size for `session.resize()`: positive integers. */
export interface TerminalSize {
  rows: number;
  cols: number;
}

/** Result of `session.signal()`. */
export interface SignalResult {
  /** The signal was delivered. */
  delivered: true;
  /** Process group it was delivered to. */
  targetPgid: number;
}

/** A piece of live output delivered to `session.onOutput` subscribers. */
export interface OutputChunk {
  /** Sanitized text. */
  text: string;
  /** Characters dropped before this chunk because the subscriber lagged (0 when none). */
  dropped: number;
}

/** Options of a close. */
export interface CloseOptions {
  /**
   * SIGTERM → SIGKILL grace of this close in ms, at most the engine's `disposeGraceMs` (a server whose
   * client is gone closes with a short one, SPEC §4.8).
   */
  graceMs?: number;
}

/**
 * The terminal model serialized (SPEC §2): what a person's terminal starts from before the raw channel's
 * chunks. Written into a fresh terminal of `rows` × `cols`, `ansi` reproduces the screen.
 */
export interface TerminalSnapshot {
  rows: number;
  cols: number;
  /** Escape text that redraws this state in a fresh terminal: cells, attributes, cursor, modes, alternate screen. */
  ansi: string;
  /** The visible lines as text, trailing blanks trimmed. */
  lines: string[];
  /** Cursor position (0-based) and visibility. */
  cursor: { row: number; col: number; visible: boolean };
  /** True while a full-screen program owns the alternate screen. */
  alternateScreen: boolean;
  /** Input modes a person's keys must be encoded for. */
  modes: { applicationCursorKeys: boolean; bracketedPaste: boolean };
}

/** A piece of the raw channel: the pty's output decoded as UTF-8, the private prompt marker removed. */
export interface RawChunk {
  data: string;
  /**
   * Characters dropped before this chunk because the subscriber lagged past its watermark (0 when none).
   * A viewer that sees a drop redraws from a fresh `snapshot()`.
   */
  dropped: number;
}

/** An open raw channel: its starting snapshot and the subscription. */
export interface RawView extends Disposable {
  /** The model at the exact point of the byte stream where the chunks begin: snapshot + chunks = the screen. */
  readonly snapshot: TerminalSnapshot;
}

/** Why a keyboard hold ended (SPEC §13). */
export type HoldEnd = 'handed-back' | 'forced' | 'heartbeat-lost' | 'closed';

/** A person's hold of a session's keyboard (SPEC §13): one holder per session. */
export interface KeyboardHold {
  /** When the hold began (ms since the epoch). */
  readonly since: number;
  /** Types the person's input straight into the pty, not through the send slot; never recorded. */
  write(data: string): Promise<void>;
  /** Keeps the hold alive; without one for 30 s the hold ends (`heartbeat-lost`). */
  heartbeat(): void;
  /** Hands the keyboard back to the model; idempotent. */
  release(): Promise<void>;
  /** Settles once, with why the hold ended. */
  readonly ended: Promise<HoldEnd>;
}

/** Options of `session.takeKeyboard()`. */
export interface TakeKeyboardOptions {
  /** Who takes it, shown to a later viewer ("held by another viewer since …"). */
  holder: string;
  /** Take it from another holder (who is told: `forced`). Without it a held session refuses (`HUMAN_HOLDS`). */
  force?: boolean;
}

/** One entry of `engine.list()` (SPEC §12). */
export interface SessionListing {
  id: string;
  name: string | undefined;
  /** True while a client holds a handle on it (always true on an in-process engine). */
  attached: boolean;
  pid: number;
  status: SessionStatus;
  /** A send is in flight. */
  busy: boolean;
  /** The sandbox mode, or `unconfined`. */
  mode: SandboxMode | 'unconfined';
  /** The shell's dialect (a daemon of an older version may leave it out). */
  dialect?: Dialect;
  /** Present while a person holds the keyboard. */
  heldSince?: number;
  /** What held the terminal at the model's last result (its command name), when known. */
  foreground?: string;
}

/** What a reattach found (SPEC §12): what happened while no client was attached. */
export interface ReattachReport {
  /** The result of a send that was in flight when its client vanished, settled on the daemon. */
  orphanedResult?: TerminalSendResult;
  /** The current screen, while a full-screen program owns the terminal. */
  screen?: TerminalScreen;
  /** Otherwise the last `maxResultBytes` of lines. */
  lines?: string;
  /** Lines that were neither shown to a client nor fit in `lines`. */
  missedLines: number;
  /** Lines the scrollback holds now (what `read` can page back through); the rest of `missedLines` is gone. */
  scrollbackLines?: number;
}

/*
 * Wave 3 surface, agreed before the work was split (issues 24–26). TerminalSession gains
 * `openRaw(listener): Promise<RawView>` and `snapshot(): Promise<TerminalSnapshot>` (issue 24) and
 * `takeKeyboard(options): Promise<KeyboardHold>` (issue 26); PtyEngine gains `list()` (issue 25);
 * WaitReason gains 'human' (issue 26); error codes gain NAME_TAKEN, SESSION_ATTACHED (25), HUMAN_HOLDS (26).
 */

/** A subscription that can be ended. */
export interface Disposable {
  /** Stop the subscription; idempotent. */
  dispose(): void;
}

/** How a session ended, as reported by `close()`. */
export interface SessionOutcome {
  /** Exit status of the shell. */
  status: SessionStatus;
  /** Why the session was closed (the caller's reason, or `exited`). */
  reason: string;
}

/** A send in progress, returned by `session.startSend()`. */
export interface SendOperation {
  /** Settles once with the send's result; rejects only on transport failure (coded `TerminalError`). */
  readonly done: Promise<TerminalSendResult>;
  /** Output since the previous call (or since the start of the send). */
  readOutput(): Promise<SendOutputDelta>;
  /** Cancel: a real SIGINT to the foreground group once any in-flight write settled. Resolves when delivered. */
  cancel(): Promise<void>;
}

/** A live terminal session held by the host thread (a proxy to the engine thread). */
export interface TerminalSession {
  /** Engine-unique session id. */
  readonly id: string;
  /** Optional human-readable name. */
  readonly name: string | undefined;
  /** The shell's pid as the host sees it (in a confined mode, not the sandbox launcher's). */
  readonly pid: number;
  /** Bounded startup output of the shell. */
  readonly motd: string;
  /** Sandbox the session runs in, or undefined when unconfined. */
  readonly sandbox: SandboxSelection | undefined;
  /** The shell's dialect. */
  readonly dialect: Dialect;
  /** Types `text` (plus Enter unless `submit: false`) and tracks readiness. */
  startSend(request: SendRequest): SendOperation;
  /** A page of the scrollback. */
  read(request?: ReadRequest): Promise<ReadResult>;
  /** Delivers a signal to the terminal's foreground process group. */
  signal(signal: SignalName): Promise<SignalResult>;
  /** Whether the shell is still alive. */
  status(): Promise<SessionStatus>;
  /** Resizes the terminal (pty and screen model); full-screen programs redraw. */
  resize(size: TerminalSize): Promise<void>;
  /** Subscribes to live output (batched; a lagging subscriber sees `dropped` counts). */
  onOutput(listener: (chunk: OutputChunk) => void): Disposable;
  /**
   * Opens the raw channel (SPEC §2): the pty's output decoded as UTF-8, the private prompt marker
   * removed, batched with the live plane's watermarks, starting from a snapshot taken at the exact point
   * where the first chunk begins. A lagging subscriber sees `dropped` counts and redraws from `snapshot()`.
   */
  openRaw(listener: (chunk: RawChunk) => void): Promise<RawView>;
  /** The terminal model serialized now (SPEC §2): cells, attributes, cursor, modes, alternate screen. */
  snapshot(): Promise<TerminalSnapshot>;
  /** Tears the process tree down; retries if an earlier close failed. */
  close(reason?: string, options?: CloseOptions): Promise<SessionOutcome>;
  /**
   * Gives a person the keyboard (SPEC §13): one holder per session; a held session refuses another
   * (`HUMAN_HOLDS`) unless `force`. While held the model's sends with input wait, its signals, keys
   * and resizes are refused.
   */
  takeKeyboard(options: TakeKeyboardOptions): Promise<KeyboardHold>;
}

/** The engine: spawns sessions on its threads and closes them all on `close()`. */
export interface PtyEngine {
  /** Starts a shell and resolves once it is proven ready (its prompt). */
  spawn(options?: SpawnOptions, signal?: AbortSignal): Promise<TerminalSession>;
  /** Live sessions of this engine: this client's handles. */
  sessions(): TerminalSession[];
  /** Every session this client may see (SPEC §12); on an in-process engine its own, all attached. */
  list(): Promise<SessionListing[]>;
  /** Closes every session, then the engine threads. Idempotent (the first call's options hold). */
  close(options?: CloseOptions): Promise<void>;
}
