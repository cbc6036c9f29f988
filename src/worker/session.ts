/**
 * One terminal session inside an engine thread (or inline on the host thread, for the benchmark
 * baseline): the pty child, the output pipeline (replier → sanitizer → scrollback / send / live
 * stream), the send slot, signals and teardown. Where a byte enters: `onData`. Where readiness is
 * decided: `send-operation.ts`. Where a process dies: `close()` → `teardown.ts`.
 */
import { readFileSync, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { threadId } from 'node:worker_threads';
import * as pty from 'node-pty';
import { TerminalError } from '../shared/errors.js';
import { encodeKeys, type SendKey, validateKeys } from '../shared/keys.js';
import type { ProcessIdentity } from '../shared/proc-stat.js';
import type { LaunchInfo, SessionLaunchSpec } from '../shared/protocol.js';
import type {
  ReadRequest,
  ReadResult,
  SendOutputDelta,
  SessionOutcome,
  SessionStatus,
  SignalName,
  SignalResult,
  TerminalSendResult,
} from '../shared/types.js';
import { buildShellEnvironment, SESSION_TERM } from './environment.js';
import { LineFeeds } from './line-feeds.js';
import { LineRing } from './line-ring.js';
import { LineTextKind, lineTextKind } from './line-text.js';
import type { LiveOutputPublisher } from './live-output.js';
import { OutputModel } from './output-model.js';
import { OutputWindow } from './output-window.js';
import { identityOf, readProcStat } from './proc-probe.js';
import { bashMarkerVariables, createNonce, parseOwnedMarker } from './prompt-marker.js';
import type { PromptCandidate } from './prompt-tracker.js';
import { PtyInputWriter, type WriteOutcome } from './pty-input-writer.js';
import { BASH_MARKER_VARIABLES, PWSH_VARIABLES, pwshSetupScript } from './pwsh-prompt.js';
import type { ShellIdentity } from './readiness.js';
import { OutputSanitizer, type SanitizerSink, withoutStyles } from './sanitizer.js';
import { SendOperation } from './send-operation.js';
import { type ForegroundSample, sampleForeground } from './stdin-wait.js';
import { teardownProcessTree } from './teardown.js';
import { TerminalReplier } from './terminal-replier.js';

/** How long close waits for node-pty's exit event after the tree is gone (it follows the socket close). */
const EXIT_EVENT_WAIT_MS = 2_000;
/** Depth bound when checking that a marker's pid descends from the pty child. */
const MAX_ANCESTRY_DEPTH = 16;
/** Small reads are joined up to this size; a larger read is processed alone (see `processOutput`). */
const PROCESS_SLICE_CHARS = 4 * 1024;
/** Settled sends kept so `awaitSend`/`readSendOutput` can still answer right after the settle. */
const SETTLED_SENDS_KEPT = 4;
/** O_CLOEXEC as `/proc/<pid>/fdinfo` prints it (octal `flags:` field): set on a patched node-pty's master. */
const FDINFO_CLOEXEC = 0o2000000;

/** The parts of node-pty's UnixTerminal we rely on beyond its typings (both are public getters there). */
interface UnixPtyExtras {
  fd?: number;
  ptsName?: string;
}

/** A terminal session. Create, `launch()`, `awaitStartup()`, then send/read/signal; `close()` at the end. */
export class SessionCore {
  /** Resolves once the session is closed for good (teardown verified). */
  readonly finished: Promise<SessionOutcome>;

  private readonly nonce = createNonce();
  private readonly scrollback: LineRing;
  private readonly outputWindow: OutputWindow;
  /** What a person would see (SPEC §4.3): the live region over the scrollback. */
  private readonly outputModel: OutputModel;
  private pendingOutput: string[] = [];
  private outputScheduled = false;
  /** Where the line feeds of the chunk being processed are (filled by its line-text scan). */
  private readonly lineFeeds = new LineFeeds();
  private readonly sanitizer: OutputSanitizer;
  private readonly sink: SanitizerSink;
  private term: pty.IPty | undefined;
  private replier: TerminalReplier | undefined;
  private writer: PtyInputWriter | undefined;
  private root: ProcessIdentity | undefined;
  private ttyRdev = -1;
  private shellIdentity: ShellIdentity | undefined;
  private startup: SendOperation | undefined;
  private startupDeadline = 0;
  private active: { id: number; op: SendOperation } | undefined;
  private readonly settledSends = new Map<number, SendOperation>();
  private exitStatus: SessionStatus = { kind: 'running' };
  private readonly exited: Promise<void>;
  private markExited!: () => void;
  private closing = false;
  /** When the replier last wrote a terminal reply (readiness gives the reader time to take it). */
  private lastReplyAt = Number.NEGATIVE_INFINITY;
  private closeAttempt: Promise<SessionOutcome> | undefined;
  private failTeardowns: number;
  private resolveFinished!: (outcome: SessionOutcome) => void;

  constructor(
    private readonly spec: SessionLaunchSpec,
    private readonly live?: LiveOutputPublisher,
  ) {
    const { config } = spec;
    this.scrollback = new LineRing({ maxLines: config.scrollbackLines, maxBytes: config.scrollbackMaxBytes });
    this.outputModel = new OutputModel({
      rows: spec.rows,
      cols: spec.cols,
      ring: this.scrollback,
      maxLineChars: config.maxReadBytes,
    });
    this.outputWindow = new OutputWindow(this.scrollback, this.outputModel);
    this.sanitizer = new OutputSanitizer({ maxPendingChars: config.maxReadBytes });
    this.failTeardowns = spec.faults?.failTeardowns ?? 0;
    this.finished = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
    this.exited = new Promise((resolve) => {
      this.markExited = resolve;
    });
    const sendSink = (): SendOperation | undefined => this.active?.op ?? this.startup;
    const model = this.outputModel;
    // The output model feeds the scrollback. The send and the live stream see the stream itself (the
    // live stream not while a full-screen program redraws: its screen is in the send's result).
    // A rewrite of a line the live stream left empty is no news (readline's CR after a command line).
    let liveLineOpen = false;
    this.sink = {
      text: (s) => {
        model.text(s);
        sendSink()?.text(s);
        if (model.alternateScreen) return;
        this.live?.text(s);
        liveLineOpen = true;
      },
      newline: () => {
        model.newline();
        sendSink()?.newline();
        if (model.alternateScreen) return;
        this.live?.newline();
        liveLineOpen = false;
      },
      rewriteLine: () => {
        model.rewriteLine();
        sendSink()?.rewriteLine();
        if (model.alternateScreen || !liveLineOpen) return;
        this.live?.rewriteLine();
        liveLineOpen = false;
      },
      textBlock: (block, ascii, lineFeeds) => {
        model.textBlock(block, ascii, lineFeeds);
        sendSink()?.textBlock(block);
        if (model.alternateScreen) return;
        this.live?.textBlock(block, ascii);
        liveLineOpen = block.charCodeAt(block.length - 1) !== 0x0a;
      },
      osc: (payload) => {
        if (model.alternateScreen && parseOwnedMarker(payload, this.nonce) !== undefined)
          model.shellPrompted();
        sendSink()?.osc(payload);
      },
      backspace: () => model.backspace(),
      csi: (params, final) => model.csi(params, final),
      escape: (final) => model.escape(final),
    };
  }

  /** Spawns the pty child and starts collecting startup output. Synchronous: node-pty's spawn is. */
  launch(): LaunchInfo {
    if (this.term !== undefined) throw new TerminalError('INTERNAL', 'session already launched');
    const { spec } = this;
    const [file, ...args] = spec.argv;
    if (file === undefined) throw new TerminalError('SPAWN_FAILED', 'empty argv');
    const env = buildShellEnvironment(
      process.env,
      spec.env,
      spec.dialect === 'bash' ? bashMarkerVariables(this.nonce) : PWSH_VARIABLES,
    );
    if (spec.dialect === 'pwsh') for (const name of BASH_MARKER_VARIABLES) delete env[name];
    let term: pty.IPty;
    try {
      term = pty.spawn(file, args, {
        name: SESSION_TERM,
        cols: spec.cols,
        rows: spec.rows,
        cwd: spec.cwd,
        env,
      });
    } catch (error) {
      throw new TerminalError('SPAWN_FAILED', `could not start ${file}: ${String(error)}`, { cause: error });
    }
    this.term = term;
    const extras = term as unknown as UnixPtyExtras;
    if (typeof extras.fd !== 'number' || typeof extras.ptsName !== 'string') {
      term.kill('SIGKILL');
      throw new TerminalError(
        'SPAWN_FAILED',
        'node-pty did not expose the terminal fd (unsupported platform)',
      );
    }
    if (!isCloseOnExec(extras.fd)) {
      // Upstream node-pty leaves the master inheritable, so every later shell could type into this
      // session (docs/decisions/0003-node-pty-patch.md). Fail closed rather than leak it.
      term.kill('SIGKILL');
      throw new TerminalError(
        'SPAWN_FAILED',
        'node-pty is unpatched: its pty master is not close-on-exec, so other shells could write to ' +
          'this terminal; run `npm ci` so patches/node-pty+1.1.0.patch is applied and node-pty rebuilt',
      );
    }
    this.writer = new PtyInputWriter(extras.fd);
    this.ttyRdev = statSync(extras.ptsName).rdev;
    this.root = identityOf(term.pid) ?? { pid: term.pid, startTime: -1 };
    this.replier = new TerminalReplier({
      cols: spec.cols,
      rows: spec.rows,
      reply: (data: string) => {
        if (this.exitStatus.kind !== 'running') return;
        this.term?.write(data);
        this.lastReplyAt = performance.now();
      },
    });
    // One deadline covers the whole startup, however many phases the dialect needs (SPEC §8).
    this.startupDeadline = performance.now() + spec.config.timeoutMs;
    this.startup = new SendOperation(this.sendEnvironment(), {
      text: '',
      submit: false,
      startup: spec.dialect === 'bash' ? 'bash' : 'pwsh-wait',
      deadlineAt: this.startupDeadline,
    });
    void this.startup.start();
    term.onData((chunk) => this.onData(chunk));
    term.onExit(({ exitCode, signal }) => {
      // Never tear anything down inside node-pty's exit callback (SPEC §2): defer to a fresh tick.
      setImmediate(() => this.onExit(exitCode, signal));
    });
    return { identity: this.root, ttyPath: extras.ptsName, threadId };
  }

  /**
   * Resolves with the MOTD once the shell is ready; rejects on timeout or early exit. bash is ready at
   * its verified prompt. pwsh is first proven waiting for input (so echoed text can never publish it),
   * then its prompt function is typed and the shell is ready at the verified marker that prints.
   */
  async awaitStartup(): Promise<{ motd: string }> {
    const first = this.startup;
    if (first === undefined) throw new TerminalError('INTERNAL', 'awaitStartup before launch');
    const ready = this.checkStartup(await first.done);
    if (this.spec.dialect === 'pwsh') {
      const setup = new SendOperation(this.sendEnvironment(), {
        text: pwshSetupScript(this.nonce),
        submit: true,
        startup: 'pwsh-setup',
        deadlineAt: this.startupDeadline,
      });
      this.startup = setup;
      void setup.start();
      this.checkStartup(await setup.done);
    }
    this.startup = undefined;
    return { motd: ready.viewport };
  }

  private checkStartup(result: TerminalSendResult): TerminalSendResult {
    if (result.waitReason === 'timeout') {
      throw new TerminalError(
        'SPAWN_TIMEOUT',
        `shell did not show a ready prompt within ${this.spec.config.timeoutMs} ms`,
      );
    }
    if (result.waitReason === 'session_exit') {
      const status = this.exitStatus;
      const detail = status.kind === 'exited' ? ` (code ${status.exitCode}, signal ${status.signal})` : '';
      throw new TerminalError(
        'SPAWN_EXITED',
        `shell exited during startup${detail}: ${result.viewport.slice(-500)}`,
      );
    }
    return result;
  }

  /**
   * Starts send `id`. Throws SEND_ACTIVE while another send holds the slot. `keys` (SPEC §4.3) replaces
   * `text`: checked before anything is written, encoded for the terminal's modes, no Enter added.
   */
  startSend(id: number, text: string, submit: boolean, keys?: SendKey[]): void {
    this.assertOpen();
    if (keys !== undefined) {
      validateKeys(keys, this.outputModel.alternateScreen);
      if (text !== '')
        throw new TerminalError('INVALID_ARGUMENT', 'a send carries either text or keys, not both');
      text = encodeKeys(keys, { applicationCursorKeys: this.replier?.applicationCursorKeys ?? false });
      submit = false;
    }
    if (this.startup !== undefined) throw new TerminalError('SEND_ACTIVE', 'the session is still starting');
    if (this.active !== undefined) {
      throw new TerminalError(
        'SEND_ACTIVE',
        'another send is still active on this session; wait for it or cancel it',
      );
    }
    const op = new SendOperation(this.sendEnvironment(), { text, submit });
    this.active = { id, op };
    // The slot is released only once no byte or signal of this send can still reach the terminal.
    void op.quiesced.then(() => {
      if (this.active?.op === op) this.active = undefined;
      this.settledSends.set(id, op);
      while (this.settledSends.size > SETTLED_SENDS_KEPT) {
        this.settledSends.delete(this.settledSends.keys().next().value as number);
      }
    });
    void op.start();
  }

  /** Result of send `id`, with the rendered screen while a full-screen program owns the terminal. */
  async awaitSend(id: number): Promise<TerminalSendResult> {
    const result = await this.sendById(id).done;
    if (!this.outputModel.alternateScreen || this.replier === undefined) return result;
    const screen = await this.replier.renderedScreen();
    return screen === undefined ? result : { ...result, screen };
  }

  /** Output of send `id` since the previous call. */
  readSendOutput(id: number): SendOutputDelta {
    return this.sendById(id).readOutput();
  }

  /** Cancels send `id`. */
  cancelSend(id: number): Promise<void> {
    return this.sendById(id).cancel();
  }

  /** A page of scrollback. */
  read(request: ReadRequest): ReadResult {
    this.outputModel.sync();
    return this.scrollback.read(request, this.spec.config.maxReadBytes);
  }

  /** Delivers `signal` to the foreground process group; SIGKILL to the shell's own group is refused. */
  signal(signal: SignalName): SignalResult {
    this.assertOpen();
    if (this.exitStatus.kind === 'exited') throw new TerminalError('SESSION_CLOSED', 'the shell has exited');
    const target = this.foregroundGroup();
    const shellGroup = this.shellIdentity?.pgrp ?? this.root?.pid;
    if (signal === 'SIGKILL' && (target === shellGroup || target === this.root?.pid)) {
      throw new TerminalError(
        'SIGNAL_REFUSED',
        "SIGKILL would kill the session's own shell; close the session instead",
      );
    }
    try {
      process.kill(-target, signal);
    } catch (error) {
      throw new TerminalError('SIGNAL_FAILED', `could not send ${signal} to process group ${target}`, {
        cause: error,
      });
    }
    return { delivered: true, targetPgid: target };
  }

  /** Whether the shell is alive. */
  status(): SessionStatus {
    return this.exitStatus;
  }

  /** Live output on/off. */
  setLiveOutput(enabled: boolean): void {
    this.live?.setEnabled(enabled);
  }

  /**
   * Closes: rejects new sends and signals, stops readiness work, tears the process tree down, then
   * settles an in-flight send as `session_exit`. A failed close is not cached: calling again retries
   * against the live process table.
   */
  close(reason = 'closed'): Promise<SessionOutcome> {
    this.closing = true;
    this.closeAttempt ??= this.runClose(reason).catch((error: unknown) => {
      this.closeAttempt = undefined;
      throw error;
    });
    return this.closeAttempt;
  }

  /** Test-only: kills the engine thread from outside any handler. */
  crashThreadForTest(kind: 'throw' | 'exit'): void {
    if (kind === 'throw') {
      setTimeout(() => {
        throw new Error('injected engine thread crash');
      }, 0);
    } else {
      setTimeout(() => process.exit(1), 0);
    }
  }

  private async runClose(reason: string): Promise<SessionOutcome> {
    const op = this.active?.op ?? this.startup;
    op?.stopReadiness();
    if (this.root !== undefined) {
      await teardownProcessTree(this.root, {
        graceMs: this.spec.config.disposeGraceMs,
        kill: this.killFunction(),
      });
      await this.waitForExitEvent();
    }
    op?.sessionExited();
    this.replier?.dispose();
    this.live?.dispose();
    const outcome: SessionOutcome = { status: this.exitStatus, reason };
    this.resolveFinished(outcome);
    return outcome;
  }

  private killFunction(): ((pid: number, signal: NodeJS.Signals) => void) | undefined {
    if (this.failTeardowns <= 0) return undefined;
    this.failTeardowns--;
    return () => undefined; // fault injection: every kill of this attempt is swallowed
  }

  private async waitForExitEvent(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, EXIT_EVENT_WAIT_MS);
    });
    await Promise.race([this.exited, bound]);
    clearTimeout(timer);
  }

  /**
   * A pty data chunk: processed in the next check phase of the event loop, so a prompt settles without
   * delay. Reads that arrive in the same turn are processed together.
   */
  private onData(chunk: string): void {
    this.pendingOutput.push(chunk);
    if (this.outputScheduled) return;
    this.outputScheduled = true;
    setImmediate(this.processOutput);
  }

  /**
   * Where a byte enters the pipeline: replier (queries), sanitizer → scrollback, send, live stream.
   *
   * Output is processed one read at a time (at most PROCESS_SLICE_CHARS of small reads together), with
   * a turn of the event loop after each, so that reading and processing alternate. This matters for
   * throughput more than per-batch savings do. The line discipline hands over at most 4 KiB per read,
   * and at flood rates that buffer fills again in about 60 µs. A reader that lets it fill makes the
   * kernel restart its flush work on every read, which costs more than processing the output. Measured
   * on a 100 MB `cat`: gathering reads for 2 ms and processing them in 32 KiB slices put ~0.3 s more
   * system time on the reading thread than this does, and throughput was ~0.8 of raw node-pty
   * instead of ~0.95 (bench/README.md).
   */
  private readonly processOutput = (): void => {
    this.outputScheduled = false;
    const pending = this.pendingOutput;
    if (pending.length === 0) return;
    let take = 0;
    let chars = 0;
    while (take < pending.length && chars < PROCESS_SLICE_CHARS) chars += pending[take++]!.length;
    const slice = take === pending.length ? pending : pending.slice(0, take);
    this.pendingOutput = take === pending.length ? [] : pending.slice(take);
    const data = slice.length === 1 ? slice[0]! : slice.join('');
    // One scan decides the route for both consumers (line-text.ts): a plain flood is not scanned twice.
    const kind = lineTextKind(data, this.lineFeeds);
    if (kind !== LineTextKind.None) {
      const lineFeeds = this.lineFeeds.known; // where the scan found line feeds (ASCII chunks)
      this.replier?.feedLineText(data, lineFeeds);
      this.sanitizer.pushLineText(data, this.sink, kind === LineTextKind.Ascii, lineFeeds);
    } else {
      this.replier?.feed(data);
      // Styled line text (a colored log) is line text once its SGRs are gone: one regex pass and a
      // scan instead of the state machine, and the scrollback gets whole blocks instead of pieces.
      const plain = withoutStyles(data);
      const plainKind = plain === undefined ? LineTextKind.None : lineTextKind(plain, this.lineFeeds);
      if (plain === undefined || plainKind === LineTextKind.None) this.sanitizer.push(data, this.sink);
      else {
        const ascii = plainKind === LineTextKind.Ascii;
        this.sanitizer.pushStyledLineText(data, plain, this.sink, ascii, this.lineFeeds.known);
      }
    }
    (this.active?.op ?? this.startup)?.endOfChunk();
    if (this.pendingOutput.length > 0 && !this.outputScheduled) {
      this.outputScheduled = true;
      setImmediate(this.processOutput);
    }
  };

  /** Processes every pending read now (before exit handling, and before a probe judges /proc). */
  private processAllOutput(): void {
    while (this.pendingOutput.length > 0) this.processOutput();
  }

  private onExit(exitCode: number, signal: number | undefined): void {
    this.processAllOutput(); // output read before the exit belongs to the session (and its send)
    this.exitStatus = {
      kind: 'exited',
      exitCode: signal ? null : exitCode,
      signal: signal ? signalName(signal) : null,
    };
    this.markExited();
    if (this.closing) return; // close() settles the send after its teardown
    // The shell exited on its own: clean up what it left behind, then report session_exit.
    const op = this.active?.op ?? this.startup;
    const root = this.root;
    void (async () => {
      if (root !== undefined) {
        try {
          await teardownProcessTree(root, { graceMs: this.spec.config.disposeGraceMs });
        } catch {
          // Leftovers that survive here are retried by close(), which reports the failure.
        }
      }
      op?.sessionExited();
    })();
  }

  private sendById(id: number): SendOperation {
    if (this.active?.id === id) return this.active.op;
    const op = this.settledSends.get(id);
    if (op === undefined) throw new TerminalError('INTERNAL', `unknown send ${id}`);
    return op;
  }

  private assertOpen(): void {
    if (this.closing) throw new TerminalError('SESSION_CLOSED', 'the session is closed');
  }

  /** The terminal's foreground group, read from the pty child's stat (it shares the controlling tty). */
  private foregroundGroup(): number {
    const rootPid = this.root?.pid;
    const stat = rootPid === undefined ? undefined : readProcStat(rootPid);
    if (stat !== undefined && stat.tpgid > 0) return stat.tpgid;
    return this.shellIdentity?.pgrp ?? rootPid ?? -1;
  }

  private sendEnvironment() {
    return {
      config: this.spec.config,
      nonce: this.nonce,
      sample: (): ForegroundSample | undefined => {
        const root = this.root;
        if (root === undefined || this.exitStatus.kind === 'exited') return undefined;
        // A program waiting for our reply to its terminal query (PSReadLine's cursor-position request)
        // is blocked on stdin, but not for the user: sample only while no reply is pending.
        if (this.replier?.busy) return undefined;
        return sampleForeground(root.pid, this.shellIdentity?.pid ?? root.pid, this.ttyRdev);
      },
      shell: (candidate?: PromptCandidate) => this.resolveShell(candidate),
      drainReplies: () => this.replier?.whenIdle() ?? Promise.resolve(),
      writeInput: (data: string, isCancelled: () => boolean): Promise<WriteOutcome> => {
        if (this.writer === undefined) return Promise.reject(new Error('no terminal'));
        return this.writer.write(data, isCancelled);
      },
      interrupt: () => {
        const target = this.foregroundGroup();
        process.kill(-target, 'SIGINT');
        return target;
      },
      status: () => this.exitStatus,
      output: this.outputWindow,
      flushOutput: () => this.processAllOutput(),
      lastReplyAt: () => this.lastReplyAt,
    };
  }

  /**
   * The session's shell. Identified from the first prompt candidate whose pid is the pty child or a
   * descendant of it (a sandbox launcher may sit in between); fixed from then on, so a nested shell that
   * inherited PROMPT_COMMAND can never pose as ours.
   */
  private resolveShell(candidate?: PromptCandidate): ShellIdentity | undefined {
    if (this.shellIdentity !== undefined || candidate === undefined || this.root === undefined) {
      return this.shellIdentity;
    }
    let pid = candidate.shellPid;
    const stat = readProcStat(pid);
    if (stat === undefined) return undefined;
    for (let depth = 0; depth < MAX_ANCESTRY_DEPTH && pid !== this.root.pid; depth++) {
      const parent = readProcStat(pid)?.ppid;
      if (parent === undefined || parent <= 1) return undefined;
      pid = parent;
    }
    if (pid !== this.root.pid) return undefined;
    this.shellIdentity = { pid: candidate.shellPid, pgrp: stat.pgrp };
    return this.shellIdentity;
  }
}

/** Whether `fd` of this process is close-on-exec, read from `/proc/self/fdinfo` (false if unreadable). */
function isCloseOnExec(fd: number): boolean {
  let info: string;
  try {
    info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
  } catch {
    return false;
  }
  const flags = /^flags:\s*([0-7]+)$/m.exec(info)?.[1];
  return flags !== undefined && (Number.parseInt(flags, 8) & FDINFO_CLOEXEC) !== 0;
}

function signalName(signal: number): string {
  const entry = Object.entries(osConstants.signals).find(([, value]) => value === signal);
  return entry?.[0] ?? String(signal);
}
