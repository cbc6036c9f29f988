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
import { assertInputWithinLimit } from '../shared/input-limit.js';
import type { ProcessIdentity } from '../shared/proc-stat.js';
import type { LaunchInfo, SendSpec, SessionLaunchSpec, ThreadFaultKind } from '../shared/protocol.js';
import type {
  Containment,
  ForegroundProcess,
  ReadRequest,
  ReadResult,
  SendOutputDelta,
  SessionOutcome,
  SessionStatus,
  SignalName,
  SignalResult,
  TerminalSendResult,
} from '../shared/types.js';
import { type CgroupHome, JOIN_FAILED_EXIT_CODE, type SessionCgroup } from './cgroup.js';
import { buildShellEnvironment } from './environment.js';
import { verifiedForegroundGroup } from './foreground-group.js';
import { LineFeeds } from './line-feeds.js';
import { LineRing } from './line-ring.js';
import { LineTextKind, lineTextKind } from './line-text.js';
import type { LiveOutputPublisher } from './live-output.js';
import { type OutputMark, OutputWindow } from './output-window.js';
import { findByNamespacePid, identityOf, readProcStat } from './proc-probe.js';
import { bashMarkerVariables, createNonce, parseOwnedMarker } from './prompt-marker.js';
import { type PromptCandidate, PromptTracker } from './prompt-tracker.js';
import { PtyInputWriter, type WriteOutcome } from './pty-input-writer.js';
import { type DrainOutcome, nodePtyReadStream, PtyOutputDrain } from './pty-output-drain.js';
import { BASH_MARKER_VARIABLES, PWSH_VARIABLES, pwshSetupScript } from './pwsh-prompt.js';
import type { ShellIdentity } from './readiness.js';
import { ReplyGate } from './reply-gate.js';
import { OutputSanitizer, type SanitizerSink, withoutStyles } from './sanitizer.js';
import { type SendEnvironment, SendOperation } from './send-operation.js';
import { planSend } from './send-request.js';
import { type ForegroundSample, sampleForeground } from './stdin-wait.js';
import { waitSyscallTable } from './syscall-table.js';
import { teardownProcessTree } from './teardown.js';
import { TerminalReplier } from './terminal-replier.js';

/** How long close waits for node-pty's exit event after the tree is gone (it follows the socket close). */
const EXIT_EVENT_WAIT_MS = 2_000;
/** Small reads are joined up to this size; a larger read is processed alone (see `processOutput`). */
const PROCESS_SLICE_CHARS = 4 * 1024;
/** Elements per allocation of the 'oom' fault: 512 KiB steps reach a small heap limit in moments. */
const OOM_STEP_ELEMENTS = 64 * 1024;
/**
 * Output read but not yet processed (pending reads plus the replier's unparsed backlog), in characters,
 * at most before reading pauses. xterm parses text without line feeds at ~13 MB/s here while a pty
 * delivers it several times faster; without this bound the difference queued up (17 M characters of
 * backlog for 50 MB of such text, 33 M for random bytes). Paused, the writer blocks in the kernel.
 */
const MAX_UNPROCESSED_OUTPUT_CHARS = 1024 * 1024;
/** Reading resumes once the backlog fell to this: enough left to keep the parser busy meanwhile. */
const RESUME_READING_AT_CHARS = MAX_UNPROCESSED_OUTPUT_CHARS / 4;
/** Settled sends kept so `awaitSend`/`readSendOutput` can still answer right after the settle. */
const SETTLED_SENDS_KEPT = 4;
/** O_CLOEXEC as `/proc/<pid>/fdinfo` prints it (octal `flags:` field): set on a patched node-pty's master. */
const FDINFO_CLOEXEC = 0o2000000;
/** O_NONBLOCK in the same field: node-pty sets it on the master, and the writer relies on it to write synchronously. */
const FDINFO_NONBLOCK = 0o4000;
/** Whether the `/proc` wait probes work on this platform (the exact tier of SPEC §4.2). */
const EXACT_TIER = process.platform === 'linux' && waitSyscallTable(process.arch) !== undefined;

/**
 * The parts of node-pty's UnixTerminal we rely on beyond its typings: `fd` and `ptsName` are public
 * getters there; its `close` event fires when the master fd is closed (before `exit`).
 */
interface UnixPtyExtras {
  fd?: number;
  ptsName?: string;
  on?: (event: 'close', listener: () => void) => void;
}

/** A terminal session. Create, `launch()`, `awaitStartup()`, then send/read/signal; `close()` at the end. */
export class SessionCore {
  /** Resolves once the session is closed for good (teardown verified). */
  readonly finished: Promise<SessionOutcome>;

  private readonly nonce = createNonce();
  private readonly scrollback: LineRing;
  private readonly outputWindow: OutputWindow;
  /** Prompt evidence, fed all the time so a wait-only send sees a prompt that arrived between sends. */
  private readonly prompt: PromptTracker;
  /** Where the previous result's output ended (continuity of output, SPEC §4.2). */
  private resultCursor: OutputMark;
  private pendingOutput: string[] = [];
  /** Characters in `pendingOutput`. */
  private pendingChars = 0;
  /** Reading from the pty is paused until the backlog shrinks (see MAX_UNPROCESSED_OUTPUT_CHARS). */
  private readingPaused = false;
  /** A look at the replier's backlog is scheduled (see `awaitReplierBacklog`). */
  private awaitingReplier = false;
  private outputScheduled = false;
  /** Where the line feeds of the chunk being processed are (filled by its line-text scan). */
  private readonly lineFeeds = new LineFeeds();
  private readonly sanitizer: OutputSanitizer;
  private readonly sink: SanitizerSink;
  private term: pty.IPty | undefined;
  private replier: TerminalReplier | undefined;
  private replyGate: ReplyGate | undefined;
  private writer: PtyInputWriter | undefined;
  private outputDrain: PtyOutputDrain | undefined;
  private root: ProcessIdentity | undefined;
  private ttyRdev = -1;
  private shellIdentity: ShellIdentity | undefined;
  private startup: SendOperation | undefined;
  private startupDeadline = 0;
  private active: { id: number; op: SendOperation } | undefined;
  private readonly settledSends = new Map<number, SendOperation>();
  private exitStatus: SessionStatus = { kind: 'running', containment: 'process-tree' };
  /** The session's cgroup (SPEC §4.6), when one could be created; removed by a successful close. */
  private cgroup: SessionCgroup | undefined;
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
    /** Where this thread creates session cgroups; without one the session uses process-tree teardown. */
    private readonly cgroupHome?: CgroupHome,
  ) {
    const { config } = spec;
    this.scrollback = new LineRing({ maxLines: config.scrollbackLines, maxBytes: config.scrollbackMaxBytes });
    this.outputWindow = new OutputWindow(this.scrollback);
    this.resultCursor = this.outputWindow.mark();
    this.prompt = new PromptTracker(this.nonce);
    this.sanitizer = new OutputSanitizer({ maxPendingChars: config.maxReadBytes });
    this.failTeardowns = spec.faults?.failTeardowns ?? 0;
    this.finished = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
    this.exited = new Promise((resolve) => {
      this.markExited = resolve;
    });
    const sendSink = (): SendOperation | undefined => this.active?.op ?? this.startup;
    this.sink = {
      text: (s) => {
        this.scrollback.text(s);
        this.prompt.text(s);
        sendSink()?.text(s);
        this.live?.text(s);
      },
      newline: () => {
        this.scrollback.newline();
        this.prompt.newline();
        sendSink()?.newline();
        this.live?.newline();
      },
      rewriteLine: () => {
        this.scrollback.rewriteLine();
        this.prompt.rewriteLine();
        sendSink()?.rewriteLine();
        this.live?.rewriteLine();
      },
      textBlock: (block, ascii, lineFeeds) => {
        this.scrollback.textBlock(block, ascii, lineFeeds);
        this.prompt.textBlock(block);
        sendSink()?.textBlock(block);
        this.live?.textBlock(block, ascii);
      },
      osc: (payload) => {
        if (this.prompt.osc(payload)) sendSink()?.markerArrived();
      },
    };
  }

  /** Spawns the pty child and starts collecting startup output. Synchronous: node-pty's spawn is. */
  launch(): LaunchInfo {
    if (this.term !== undefined) throw new TerminalError('INTERNAL', 'session already launched');
    const { spec } = this;
    const file = spec.argv[0];
    if (file === undefined) throw new TerminalError('SPAWN_FAILED', 'empty argv');
    const env = buildShellEnvironment(
      process.env,
      spec.env,
      spec.dialect === 'bash' ? bashMarkerVariables(this.nonce) : PWSH_VARIABLES,
    );
    if (spec.dialect === 'pwsh') for (const name of BASH_MARKER_VARIABLES) delete env[name];
    // The launcher joins the cgroup before it execs the argv: a child forked before a move would escape.
    this.cgroup = this.cgroupHome?.createSession(spec.id);
    this.exitStatus = { kind: 'running', containment: containmentOf(spec.pidNamespace, this.cgroup) };
    const [spawnFile, ...spawnArgs] = this.cgroup?.launcherArgv(spec.argv) ?? spec.argv;
    let term: pty.IPty;
    try {
      term = pty.spawn(spawnFile!, spawnArgs, {
        name: 'dumb',
        cols: spec.cols,
        rows: spec.rows,
        cwd: spec.cwd,
        env,
      });
    } catch (error) {
      this.removeEmptyCgroup();
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
    const fdFlags = fdStatusFlags(extras.fd);
    if (fdFlags === undefined || (fdFlags & FDINFO_CLOEXEC) === 0) {
      // Upstream node-pty leaves the master inheritable, so every later shell could type into this
      // session (docs/decisions/0003-node-pty-patch.md). Fail closed rather than leak it.
      term.kill('SIGKILL');
      throw new TerminalError(
        'SPAWN_FAILED',
        'node-pty is unpatched: its pty master is not close-on-exec, so other shells could write to ' +
          'this terminal; run `npm ci` so patches/node-pty+1.1.0.patch is applied and node-pty rebuilt',
      );
    }
    // Readiness gives a reader REPLY_GRACE_MS from when a reply reached the kernel to take it.
    const writer = new PtyInputWriter(
      extras.fd,
      () => {
        this.lastReplyAt = performance.now();
      },
      (fdFlags & FDINFO_NONBLOCK) !== 0,
    );
    this.writer = writer;
    this.outputDrain = new PtyOutputDrain(extras.fd, nodePtyReadStream(term));
    // Once node-pty closed the fd, its number may be reused by another file: write (or drain) nothing more.
    extras.on?.('close', () => this.stopWriting());
    this.ttyRdev = statSync(extras.ptsName).rdev;
    this.root = identityOf(term.pid) ?? { pid: term.pid, startTime: -1 };
    const gate = new ReplyGate({
      flushOutput: () => this.processAllOutput(),
      replierBusy: () => this.replier?.busy ?? false,
      markersParsed: () => this.replier?.markersParsed ?? 0,
      sample: () => this.sampleNow(),
      // PSReadLine asks for the cursor position from its line editor (SPEC §4.3): its wait counts.
      lineEditorShellPid: () =>
        spec.dialect === 'pwsh' ? undefined : (this.shellIdentity?.pid ?? this.root?.pid),
      write: (data) => {
        if (this.exitStatus.kind !== 'running' || !writer.writeReply(data)) return false;
        this.lastReplyAt = performance.now();
        return true;
      },
    });
    this.replyGate = gate;
    this.replier = new TerminalReplier({
      cols: spec.cols,
      rows: spec.rows,
      maxStringSequenceChars: spec.config.maxReadBytes,
      reply: (data, markersBefore) => gate.offer(data, markersBefore),
      isPromptMarker: (payload) => parseOwnedMarker(payload, this.nonce) !== undefined,
      onPromptMarker: () => gate.markerParsed(),
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
    return { identity: this.root, ttyPath: extras.ptsName, threadId, cgroupDir: this.cgroup?.dir };
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
    this.resultCursor = this.outputWindow.mark(); // the MOTD is the startup's; results start after it
    return { motd: ready.viewport };
  }

  private checkStartup(result: TerminalSendResult): TerminalSendResult {
    if (result.waitReason === 'timeout' || result.waitReason === 'running') {
      throw new TerminalError(
        'SPAWN_TIMEOUT',
        `shell did not show a ready prompt within ${this.spec.config.timeoutMs} ms`,
      );
    }
    if (result.waitReason === 'session_exit') {
      const status = this.exitStatus;
      if (
        this.cgroup !== undefined &&
        status.kind === 'exited' &&
        status.exitCode === JOIN_FAILED_EXIT_CODE
      ) {
        // Never run uncontained: the launcher refused to exec the shell outside its cgroup.
        throw new TerminalError(
          'CONTAINMENT_FAILED',
          `the shell's launcher could not join its cgroup ${this.cgroup.dir}: ${result.viewport.slice(-500)}`,
        );
      }
      const detail = status.kind === 'exited' ? ` (code ${status.exitCode}, signal ${status.signal})` : '';
      throw new TerminalError(
        'SPAWN_EXITED',
        `shell exited during startup${detail}: ${result.viewport.slice(-500)}`,
      );
    }
    return result;
  }

  /**
   * Starts send `id`. Throws INVALID_ARGUMENT for a bad request and SEND_ACTIVE while another send holds
   * the slot, both before anything is written.
   */
  startSend(id: number, request: SendSpec): void {
    this.assertOpen();
    const plan = planSend(request, this.spec.config);
    assertInputWithinLimit(plan.text, this.spec.config.maxInputBytes); // the host checked too; never trust one side
    if (this.startup !== undefined) throw new TerminalError('SEND_ACTIVE', 'the session is still starting');
    if (this.active !== undefined) {
      throw new TerminalError(
        'SEND_ACTIVE',
        'another send is still active on this session; wait for it or cancel it',
      );
    }
    const op = new SendOperation(this.sendEnvironment(), plan);
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

  /** Result of send `id`. */
  awaitSend(id: number): Promise<TerminalSendResult> {
    return this.sendById(id).done;
  }

  /** Output of send `id` since the previous call. */
  readSendOutput(id: number): SendOutputDelta {
    return this.sendById(id).readOutput();
  }

  /** Cancels send `id`. */
  cancelSend(id: number): Promise<void> {
    return this.sendById(id).cancel();
  }

  /** Ends only the wait of send `id` (it settles `running`); nothing is signalled. */
  endWait(id: number): void {
    this.sendById(id).endWait();
  }

  /** A page of scrollback. */
  read(request: ReadRequest): ReadResult {
    return this.scrollback.read(request, this.spec.config.maxReadBytes);
  }

  /** Delivers `signal` to the foreground process group; SIGKILL to the shell's own group is refused. */
  signal(signal: SignalName): SignalResult {
    this.assertOpen();
    if (this.exitStatus.kind === 'exited') throw new TerminalError('SESSION_CLOSED', 'the shell has exited');
    const target = this.foregroundGroup(signal);
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

  /** Test-only: kills or wedges the engine thread from outside any handler (after the call's reply). */
  crashThreadForTest(kind: ThreadFaultKind): void {
    setTimeout(() => injectThreadFault(kind), 0);
  }

  private async runClose(reason: string): Promise<SessionOutcome> {
    const op = this.active?.op ?? this.startup;
    op?.stopReadiness();
    this.stopWriting();
    // Closing reads everything again: the exit is noticed through the pty, and nothing more is parsed
    // than teardown lets through.
    if (this.readingPaused) {
      this.readingPaused = false;
      this.term?.resume();
    }
    const kill = this.killFunction();
    // Fault injection swallows every kill of the attempt, the container's included.
    const killContainer = kill === undefined ? this.containerKill() : undefined;
    if (this.root !== undefined) {
      await teardownProcessTree(this.root, { graceMs: this.spec.config.disposeGraceMs, kill, killContainer });
      await this.waitForExitEvent();
    } else {
      await killContainer?.(); // a launch that failed after the cgroup was made
    }
    if (killContainer !== undefined) this.cgroup?.remove();
    op?.sessionExited();
    this.replier?.dispose();
    this.live?.dispose();
    const outcome: SessionOutcome = { status: this.exitStatus, reason };
    this.resolveFinished(outcome);
    return outcome;
  }

  /** The cgroup kill for `teardownProcessTree`, when the session has a cgroup. */
  private containerKill(): (() => Promise<void>) | undefined {
    const cgroup = this.cgroup;
    return cgroup === undefined ? undefined : () => cgroup.kill();
  }

  /** Removes a cgroup nothing was started in (a failed spawn); a leftover is swept by a successor. */
  private removeEmptyCgroup(): void {
    try {
      this.cgroup?.remove();
    } catch {
      // Not empty after all: close() kills and removes it.
      return;
    }
    this.cgroup = undefined;
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
    this.pendingChars += chunk.length;
    this.limitBacklog();
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
    this.pendingChars -= data.length;
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
    this.limitBacklog();
    if (this.pendingOutput.length > 0 && !this.outputScheduled) {
      this.outputScheduled = true;
      setImmediate(this.processOutput);
    }
  };

  /** Output read and not yet processed through the whole pipeline, in characters. */
  private unprocessedChars(): number {
    return this.pendingChars + (this.replier?.backlogChars ?? 0);
  }

  /**
   * Backpressure: pauses reading while too much output waits to be processed, resumes once it shrank.
   * Paused, the kernel's pty buffer fills and the writing program blocks, as at a slow terminal.
   */
  private limitBacklog(): void {
    const term = this.term;
    if (term === undefined) return;
    if (this.readingPaused) {
      if (this.unprocessedChars() > RESUME_READING_AT_CHARS) this.awaitReplierBacklog();
      else {
        this.readingPaused = false;
        term.resume();
      }
      return;
    }
    if (this.unprocessedChars() <= MAX_UNPROCESSED_OUTPUT_CHARS || this.closing) return;
    this.readingPaused = true;
    term.pause();
    this.awaitReplierBacklog();
  }

  /**
   * While paused: looks again once the replier's backlog shrank. Only while that backlog is what holds
   * the pause; otherwise pending reads do, and processing them (every turn) looks again.
   */
  private awaitReplierBacklog(): void {
    const replier = this.replier;
    if (this.awaitingReplier || replier === undefined) return;
    if (replier.backlogChars < RESUME_READING_AT_CHARS) return;
    this.awaitingReplier = true;
    void replier.whenBacklogBelow(RESUME_READING_AT_CHARS).then(() => {
      this.awaitingReplier = false;
      this.limitBacklog();
    });
  }

  /** Processes every pending read now (before exit handling, and before a probe judges /proc). */
  private processAllOutput(): void {
    while (this.pendingOutput.length > 0) this.processOutput();
  }

  /** Nothing more is written to the terminal: held replies are dropped, pending input is cancelled. */
  private stopWriting(): void {
    this.replyGate?.close();
    this.writer?.close();
    this.outputDrain?.close();
  }

  private onExit(exitCode: number, signal: number | undefined): void {
    this.stopWriting();
    this.processAllOutput(); // output read before the exit belongs to the session (and its send)
    this.exitStatus = {
      kind: 'exited',
      exitCode: signal ? null : exitCode,
      signal: signal ? signalName(signal) : null,
      containment: this.exitStatus.containment,
    };
    this.markExited();
    if (this.closing) return; // close() settles the send after its teardown
    // The shell exited on its own: clean up what it left behind, then report session_exit.
    const op = this.active?.op ?? this.startup;
    const root = this.root;
    void (async () => {
      if (root !== undefined) {
        try {
          await teardownProcessTree(root, {
            graceMs: this.spec.config.disposeGraceMs,
            killContainer: this.containerKill(),
          });
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

  /**
   * The terminal's foreground group, read from the pty child's stat (it shares the controlling tty) and
   * verified to hold a process of the session's tree. Throws SIGNAL_FAILED when there is none: a
   * signal never goes to a guessed group.
   */
  private foregroundGroup(signal: SignalName): number {
    const target = this.root === undefined ? undefined : verifiedForegroundGroup(this.root.pid);
    if (target === undefined) {
      throw new TerminalError(
        'SIGNAL_FAILED',
        `${signal} not sent: the terminal's foreground process group is unknown or holds no process of this session`,
      );
    }
    return target;
  }

  private sendEnvironment(): SendEnvironment {
    return {
      config: this.spec.config,
      prompt: this.prompt,
      exactTier: EXACT_TIER,
      resultCursor: () => this.resultCursor,
      advanceResultCursor: (mark: OutputMark) => {
        this.resultCursor = mark;
      },
      sample: (): ForegroundSample | undefined => {
        const root = this.root;
        if (root === undefined || this.exitStatus.kind === 'exited') return undefined;
        // A program waiting for our reply to its terminal query (PSReadLine's cursor-position request)
        // is blocked on stdin, but not for the user: sample only while no reply is pending.
        if (this.replier?.busy || this.replyGate?.pending || this.writer?.repliesPending) return undefined;
        return this.sampleNow();
      },
      shell: (candidate?: PromptCandidate) => this.resolveShell(candidate),
      drainReplies: async () => {
        await this.replier?.whenIdle();
        await this.replyGate?.whenSettled();
      },
      writeInput: (data: string, isCancelled: () => boolean): Promise<WriteOutcome> => {
        if (this.writer === undefined) return Promise.reject(new Error('no terminal'));
        return this.writer.write(data, isCancelled);
      },
      interrupt: () => {
        const target = this.foregroundGroup('SIGINT');
        process.kill(-target, 'SIGINT');
        return target;
      },
      status: () => this.exitStatus,
      foreground: (readerPid?: number) => this.foreground(readerPid),
      output: this.outputWindow,
      flushOutput: () => this.processAllOutput(),
      drainOutput: (): DrainOutcome => {
        if (this.exitStatus.kind === 'exited' || this.closing) return 'unavailable';
        return this.outputDrain?.drain() ?? 'unavailable';
      },
      lastReplyAt: () => this.lastReplyAt,
    };
  }

  /** A sample of the terminal's foreground group now; undefined once the shell is gone. */
  private sampleNow(): ForegroundSample | undefined {
    const root = this.root;
    if (root === undefined || this.exitStatus.kind === 'exited') return undefined;
    return sampleForeground(root.pid, this.shellIdentity?.pid ?? root.pid, this.ttyRdev);
  }

  /**
   * What holds the terminal: the reader seen waiting when there is one, else the leader of the
   * terminal's foreground group (or, when the leader is gone, the shell or the pty child).
   */
  private foreground(readerPid?: number): ForegroundProcess | undefined {
    if (this.exitStatus.kind === 'exited') return undefined;
    const group = this.root === undefined ? undefined : verifiedForegroundGroup(this.root.pid);
    for (const pid of [readerPid, group]) {
      if (pid === undefined || pid <= 0) continue;
      const stat = readProcStat(pid);
      if (stat !== undefined && stat.state !== 'Z' && stat.state !== 'X') return { pid, command: stat.comm };
    }
    return undefined;
  }

  /**
   * The session's shell. Identified from the first prompt candidate whose pid is that of the pty child
   * or of a descendant of it (a sandbox launcher may sit in between); fixed from then on, so a nested
   * shell that inherited PROMPT_COMMAND can never pose as ours. A confined shell prints its pid in the
   * sandbox's PID namespace, so the tree is searched by namespace pid (`NSpid`) and every probe after
   * this uses the host pid found; unconfined, the two are the same number.
   */
  private resolveShell(candidate?: PromptCandidate): ShellIdentity | undefined {
    if (this.shellIdentity !== undefined || candidate === undefined || this.root === undefined) {
      return this.shellIdentity;
    }
    const stat = findByNamespacePid(this.root.pid, candidate.shellPid);
    if (stat === undefined) return undefined;
    this.shellIdentity = { pid: stat.pid, pgrp: stat.pgrp, markerPid: candidate.shellPid };
    return this.shellIdentity;
  }
}

/** Where a test-only thread fault happens (`ThreadFaultKind`). */
function injectThreadFault(kind: ThreadFaultKind): void {
  switch (kind) {
    case 'throw':
      throw new Error('injected engine thread crash');
    case 'exit':
      process.exit(1);
      break;
    case 'spin':
      for (;;) {
        // wedged: the event loop never turns again
      }
    case 'oom': {
      const hoard: number[][] = [];
      for (;;) hoard.push(new Array(OOM_STEP_ELEMENTS).fill(hoard.length));
    }
  }
}

/** The status flags of `fd` of this process (`O_*`), from `/proc/self/fdinfo`; undefined if unreadable. */
function fdStatusFlags(fd: number): number | undefined {
  let info: string;
  try {
    info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
  } catch {
    return undefined;
  }
  const flags = /^flags:\s*([0-7]+)$/m.exec(info)?.[1];
  return flags === undefined ? undefined : Number.parseInt(flags, 8);
}

/** The containment a session gets from its sandbox's PID namespace and its cgroup. */
function containmentOf(pidNamespace: boolean, cgroup: SessionCgroup | undefined): Containment {
  if (cgroup === undefined) return pidNamespace ? 'pid-namespace' : 'process-tree';
  return pidNamespace ? 'pid-namespace+cgroup' : 'cgroup';
}

function signalName(signal: number): string {
  const entry = Object.entries(osConstants.signals).find(([, value]) => value === signal);
  return entry?.[0] ?? String(signal);
}
