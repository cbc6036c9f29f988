/**
 * One terminal session inside an engine thread (or inline on the host thread, for the benchmark
 * baseline): the composition of the pty child, its output pipeline (output-pipeline.ts), the send slot
 * and containment, with signals and teardown. Where a byte enters: `OutputPipeline.write`. Where
 * readiness is decided: `send-operation.ts`. Where a process dies: `close()` → `teardown.ts`.
 */
import { statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { type MessagePort, threadId } from 'node:worker_threads';
import { TerminalError } from '../shared/errors.js';
import { assertInputWithinLimit } from '../shared/input-limit.js';
import { encodeKeys, refuseSignallingInput, validateKeys } from '../shared/keys.js';
import { DisposableOwner } from '../shared/lifecycle.js';
import {
  type LaunchInfo,
  SETTLED_SENDS_KEPT,
  type SendSpec,
  type SessionLaunchSpec,
  type ShellPlan,
} from '../shared/protocol.js';
import { RetryableAttempt } from '../shared/retryable-attempt.js';
import { unenforcedLimits } from '../shared/session-limits.js';
import { assertSignalName } from '../shared/signals.js';
import { assertTerminalSize } from '../shared/terminal-size.js';
import type {
  Containment,
  Disposable,
  ForegroundProcess,
  LimitEvents,
  ReadRequest,
  ReadResult,
  SendOutputDelta,
  SessionOutcome,
  SessionStatus,
  SignalName,
  SignalResult,
  TerminalSendResult,
  TerminalSize,
  TerminalSnapshot,
} from '../shared/types.js';
import { JOIN_FAILED_EXIT_CODE, launcherArgv } from './containment/cgroup-launcher.js';
import { buildShellEnvironment, SESSION_TERM } from './containment/environment.js';
import type { CgroupPlacement, SessionCgroups } from './containment/session-cgroups.js';
import { teardownProcessTree } from './containment/teardown.js';
import { TeardownFaults } from './containment/teardown-faults.js';
import type { LiveOutputPublisher } from './output/live-output.js';
import type { OutputMark } from './output/output-window.js';
import { OutputPipeline } from './output-pipeline.js';
import { verifiedForegroundGroup } from './proc/foreground-group.js';
import { HeldProcFiles } from './proc/proc-files.js';
import { findByNamespacePid, identityOf, readProcStat } from './proc/proc-probe.js';
import { type ForegroundSample, sampleForeground, type ThreadWait } from './proc/stdin-wait.js';
import { waitSyscallTable } from './proc/syscall-table.js';
import { ptyBinding } from './pty/pty-binding.js';
import { PtyInputWriter, type WriteOutcome } from './pty/pty-input-writer.js';
import { type DrainOutcome, nodePtyReadStream, PtyOutputDrain } from './pty/pty-output-drain.js';
import { type SpawnedPty, spawnPty } from './pty/pty-spawn.js';
import { PtyTextDecoder } from './pty/pty-text-decoder.js';
import { readTerminalLocalFlags, type TerminalLocalFlags } from './pty/terminal-local-flags.js';
import { HiddenInputVerdicts } from './readiness/hidden-input.js';
import { createNonce } from './readiness/prompt-marker.js';
import type { PromptCandidate } from './readiness/prompt-tracker.js';
import type { ShellIdentity } from './readiness/readiness.js';
import { SendOperation } from './readiness/send-operation.js';
import type { SendContext } from './readiness/send-ports.js';
import { NOTHING_TO_WRITE, planSend } from './readiness/send-request.js';
import { ReplyGate } from './replies/reply-gate.js';
import { type LaunchedTerminal, launchedIn, type SessionPhase } from './session-phase.js';
import { dialectNamed } from './shell/registry.js';
import type { ShellDialect, StartupPhase } from './shell/shell-dialect.js';

/** How long close waits for node-pty's exit event after the tree is gone (it follows the socket close). */
const EXIT_EVENT_WAIT_MS = 2_000;
/** Where the shell's launcher runs (it joins cgroups and sets the OOM score through Linux's /proc). */
const LAUNCHER_PLATFORM = process.platform === 'linux';
/** Why a session without a cgroup placement (the inline benchmark baseline) has no limits. */
const NO_PLACEMENT_REASON = 'this session runs outside an engine thread: no cgroups were prepared';
/** Whether the `/proc` wait probes work on this platform (the exact tier of SPEC §4.2). */
const EXACT_TIER = process.platform === 'linux' && waitSyscallTable(process.arch) !== undefined;

/**
 * A terminal session. Create, `plan()`, `launch()`, `awaitStartup()`, then send/read/signal; `close()`
 * at the end. Every timer and listener it arms is registered with its store, which a successful close
 * disposes.
 */
export class SessionCore extends DisposableOwner {
  /** Resolves once the session is closed for good (teardown verified). */
  readonly finished: Promise<SessionOutcome>;

  private readonly nonce = createNonce();
  /** The shell's dialect: argv, environment, startup phases, prompt and line editor (SPEC §8). */
  private readonly dialect: ShellDialect;
  /** Where the session is in its life; each phase carries what exists in it. */
  private phase: SessionPhase = { kind: 'created' };
  /** Everything that happens to a byte after the pty hands it over. */
  private readonly pipeline: OutputPipeline;
  /** What each send sees of the session (readiness/send-operation.ts). */
  private readonly sendContext: SendContext;
  /** Where the previous result's output ended (continuity of output, SPEC §4.2). */
  private resultCursor: OutputMark;
  /** The `/proc` descriptors samples re-read (src/worker/proc/proc-files.ts); closed by dispose. */
  private readonly procFiles = new HeldProcFiles();
  /** The send slot: what may write to the terminal and receives the stream now (one at a time). */
  private slot: SendSlot | undefined;
  private readonly settledSends = new Map<number, SendOperation>();
  /** Whether each result's program waits for hidden input (SPEC §13), judged once per send. */
  private readonly hiddenInput = new HiddenInputVerdicts();
  /** The limit events each result reported (`null`: none), so a result asked for twice stays the same. */
  private readonly resultEvents = new WeakMap<SendOperation, LimitEvents | null>();
  private exitStatus: SessionStatus = {
    kind: 'running',
    containment: 'process-tree',
    limits: unenforcedLimits('the session has not launched'),
  };
  /** The session's cgroups (SPEC §4.6, §4.8), when any could be created; removed by a successful close. */
  private cgroups: SessionCgroups | undefined;
  private readonly closeAttempt = new RetryableAttempt<SessionOutcome>();
  /** Planned teardown failures (tests only, through the internal test entry). */
  private readonly teardownFaults: TeardownFaults | undefined;
  private resolveFinished!: (outcome: SessionOutcome) => void;

  constructor(
    private readonly spec: SessionLaunchSpec,
    live?: LiveOutputPublisher,
    /** Where this thread creates session cgroups; without it, no limits and process-tree teardown. */
    private readonly placement?: CgroupPlacement,
  ) {
    super();
    const { config } = spec;
    this.dialect = dialectNamed(spec.dialect);
    this.owned.own('held /proc descriptors', () => this.procFiles.close());
    this.pipeline = this.owned.add(
      new OutputPipeline({
        rows: spec.rows,
        cols: spec.cols,
        config,
        nonce: this.nonce,
        prompt: this.dialect.prompt,
        live,
        // Replies go through the gate (made at launch: before it there is no output to answer).
        replies: {
          offer: (data, markersBefore) => this.launched?.replyGate.offer(data, markersBefore),
          markerParsed: () => this.launched?.replyGate.markerParsed(),
        },
        listener: () => this.slot?.op,
      }),
    );
    this.resultCursor = this.pipeline.output.mark();
    this.sendContext = this.buildSendContext();
    this.teardownFaults = spec.faults === undefined ? undefined : new TeardownFaults(spec.faults);
    this.finished = new Promise((resolve) => {
      this.resolveFinished = resolve;
    });
  }

  /** The launched terminal, from launch on (through close); undefined before. */
  private get launched(): LaunchedTerminal | undefined {
    return launchedIn(this.phase);
  }

  /**
   * What to start: config `shellPath`/`shellArgs`, else the dialect's argv; and the dialect's files for
   * this session, made now, so the host can let a confined shell read them.
   */
  plan(): ShellPlan {
    if (this.phase.kind !== 'created') throw new TerminalError('INTERNAL', 'session already planned');
    const { config } = this.spec;
    const argv =
      config.shellPath === undefined
        ? this.dialect.defaultArgv()
        : [config.shellPath, ...(config.shellArgs ?? [])];
    const installation = this.dialect.install(this.nonce);
    this.phase = { kind: 'planned', installation };
    return { argv, readablePaths: [...installation.readablePaths] };
  }

  /**
   * Spawns the pty child running `argv` (the plan's, wrapped by the sandbox when confined) and starts
   * collecting startup output. Synchronous: node-pty's spawn is.
   */
  launch(argv: string[]): LaunchInfo {
    if (this.phase.kind === 'created') throw new TerminalError('INTERNAL', 'launch before plan');
    if (this.phase.kind !== 'planned') throw new TerminalError('INTERNAL', 'session already launched');
    const { installation } = this.phase;
    const { spec } = this;
    const file = argv[0];
    if (file === undefined) throw new TerminalError('SPAWN_FAILED', 'empty argv');
    // Loaded before anything is created: a missing native module rejects with nothing to undo.
    const { nodePty } = ptyBinding();
    const env = buildShellEnvironment(spec.baseEnv ?? process.env, spec.env, installation.environment);
    for (const name of installation.withoutVariables) delete env[name];
    // The launcher joins the cgroups before it execs the argv: a child forked before a move would escape.
    const limits = spec.limits ?? {
      memoryBytes: spec.config.sessionMemoryBytes,
      pids: spec.config.sessionPids,
    };
    this.cgroups = this.placement?.place(spec.id, limits);
    this.exitStatus = {
      kind: 'running',
      containment: containmentOf(spec.pidNamespace, this.cgroups?.containment !== undefined),
      limits: this.cgroups?.limits ?? unenforcedLimits(NO_PLACEMENT_REASON),
    };
    // Linux: the launcher also gives the shell its OOM score (SPEC §4.8), cgroups or not.
    const launcherWrapped = LAUNCHER_PLATFORM ? launcherArgv(this.cgroups?.procsFiles ?? [], argv) : argv;
    const [spawnFile, ...spawnArgs] = launcherWrapped;
    let spawned: SpawnedPty;
    try {
      spawned = spawnPty(
        nodePty,
        spawnFile!,
        spawnArgs,
        // Bytes, not text: the session decodes them itself, faster than node-pty's stream (pty-text-decoder.ts).
        { name: SESSION_TERM, cols: spec.cols, rows: spec.rows, cwd: spec.cwd, env, encoding: null },
        file,
      );
    } catch (error) {
      this.removeEmptyCgroup();
      throw error;
    }
    const { term, fd } = spawned;
    // Readiness gives a reader REPLY_GRACE_MS from when a reply reached the kernel to take it.
    const writer = new PtyInputWriter(
      fd,
      () => {
        launched.lastReplyAt = performance.now();
      },
      spawned.nonBlocking,
    );
    this.owned.own('pty input writer', () => writer.close());
    // Once node-pty closed the fd, its number may be reused by another file: write nothing more.
    // node-pty's removeListener('close') looks on the socket, not where 'close' listeners are kept:
    // the guard stands in for the removal.
    let closeListened = true;
    spawned.onMasterClosed(() => {
      if (closeListened) this.stopWriting();
    });
    this.owned.own('pty close listener', () => {
      closeListened = false;
    });
    const outputDrain = new PtyOutputDrain(fd, nodePtyReadStream(term));
    const ttyRdev = statSync(spawned.ptsName).rdev;
    const root = identityOf(term.pid) ?? { pid: term.pid, startTime: -1 };
    const pipeline = this.pipeline;
    const gate = new ReplyGate({
      flushOutput: () => pipeline.flush(),
      replierBusy: () => pipeline.parsingPending,
      markersParsed: () => pipeline.markersParsed,
      sample: () => this.sampleNow(),
      isShellLineEditorWait: (wait) => this.isShellLineEditorWait(launched, wait),
      write: (data) => {
        if (this.exitStatus.kind !== 'running' || !writer.writeReply(data)) return false;
        launched.lastReplyAt = performance.now();
        return true;
      },
    });
    this.owned.add(gate);
    let markExited!: () => void;
    const exited = new Promise<void>((resolve) => {
      markExited = resolve;
    });
    const launched: LaunchedTerminal = {
      term,
      fd,
      root,
      ttyRdev,
      writer,
      outputDrain,
      replyGate: gate,
      // One deadline covers the whole startup, however many phases the dialect needs (SPEC §8).
      startupDeadline: performance.now() + spec.config.timeoutMs,
      exited,
      markExited,
      shellIdentity: undefined,
      lastReplyAt: Number.NEGATIVE_INFINITY,
      decoder: new PtyTextDecoder(),
    };
    this.phase = { kind: 'launched', installation, launched };
    // The first phase starts now, so it collects from the shell's very first byte.
    const [firstPhase] = installation.startup;
    if (firstPhase === undefined)
      throw new TerminalError('INTERNAL', `dialect ${spec.dialect} has no startup`);
    this.startPhase(firstPhase, launched.startupDeadline);
    pipeline.attach({ pause: () => term.pause(), resume: () => term.resume() });
    // With `encoding: null` node-pty's data event carries the bytes read (its typings say string).
    const decoder = launched.decoder;
    const dataListener = term.onData((chunk) => {
      const bytes = chunk as unknown as Buffer;
      const text = decoder.decode(bytes);
      if (text !== '') pipeline.write(text, decoder.exactUtf8);
    });
    this.owned.own('pty data listener', () => dataListener.dispose());
    const exitListener = term.onExit(({ exitCode, signal }) => {
      // Never tear anything down inside node-pty's exit callback (SPEC §2): defer to a fresh tick.
      this.owned.immediate('pty exit handling', () => this.onExit(launched, exitCode, signal));
    });
    this.owned.own('pty exit listener', () => exitListener.dispose());
    return {
      identity: root,
      ttyPath: spawned.ptsName,
      threadId,
      cgroupDir: this.cgroups?.containment?.dir,
      limitDirs: this.cgroups?.v1Dirs ?? [],
    };
  }

  /**
   * Resolves with the MOTD (the first phase's output) and the shell's host pid once the dialect's
   * startup phases are done; rejects on timeout or early exit.
   */
  async awaitStartup(): Promise<{ motd: string; shellPid: number }> {
    const first = this.slot?.kind === 'startup' ? this.slot.op : undefined;
    const launched = this.launched;
    if (first === undefined || this.phase.kind !== 'launched' || launched === undefined) {
      throw new TerminalError('INTERNAL', 'awaitStartup before launch');
    }
    const { installation } = this.phase;
    const ready = this.checkStartup(await first.done);
    for (const phase of installation.startup.slice(1)) {
      this.checkStartup(await this.startPhase(phase, launched.startupDeadline).done);
    }
    this.slot = undefined;
    this.resultCursor = this.pipeline.output.mark(); // the MOTD is the startup's; results start after it
    // The startup's prompt identified the shell (a confined one below the sandbox launcher, by the
    // namespace pid its marker carries); the pty child stands in only if no marker ever named it.
    return { motd: ready.viewport, shellPid: launched.shellIdentity?.pid ?? launched.root.pid };
  }

  /** Starts a startup phase under the one startup deadline. */
  private startPhase(phase: StartupPhase, deadlineAt: number): SendOperation {
    const op = new SendOperation(this.sendContext, {
      text: phase.text,
      submit: phase.submit,
      readiness: phase.readiness,
      deadlineAt,
    });
    this.slot = { kind: 'startup', op };
    void op.start();
    return op;
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
      const joined = this.cgroups?.procsFiles ?? [];
      if (joined.length > 0 && status.kind === 'exited' && status.exitCode === JOIN_FAILED_EXIT_CODE) {
        // Never run uncontained: the launcher refused to exec the shell outside its cgroups.
        throw new TerminalError(
          'CONTAINMENT_FAILED',
          `the shell's launcher could not join its cgroups (${joined.join(', ')}): ${result.viewport.slice(-500)}`,
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
   * the slot, both before anything is written. `keys` (SPEC §4.3) replaces `text`: checked before
   * anything is written, encoded for the terminal's modes, no Enter added.
   */
  startSend(id: number, request: SendSpec): void {
    this.assertOpen();
    // Nothing would read the input or print a prompt: the send could only run into its wait bound.
    if (this.exitStatus.kind === 'exited') {
      throw new TerminalError(
        'SESSION_CLOSED',
        'the shell has exited; its output stays readable until close',
      );
    }
    const plan = planSend(request, this.spec.config);
    const keys = request.keys;
    // The terminal would turn ^C, ^Z and ^\ into signals unless a full-screen program owns it: those
    // go through signal() (SPEC §4.4), whichever form the input takes.
    const { alternateScreen, applicationCursorKeys } = this.pipeline;
    refuseSignallingInput(plan.text, alternateScreen, 'text');
    if (keys !== undefined) {
      validateKeys(keys, alternateScreen);
      plan.text = encodeKeys(keys, { applicationCursorKeys });
      plan.submit = false;
      // Only `{ text: '' }` literals: as good as `keys: []` (planSend refused that one).
      if (plan.text === '') throw new TerminalError('INVALID_ARGUMENT', NOTHING_TO_WRITE);
      // Text was measured by planSend; keys only now that they are encoded.
      assertInputWithinLimit(plan.text, this.spec.config.maxInputBytes);
    }
    if (this.slot?.kind === 'startup')
      throw new TerminalError('SEND_ACTIVE', 'the session is still starting');
    if (this.slot !== undefined) {
      throw new TerminalError(
        'SEND_ACTIVE',
        'another send is still active on this session; wait for it or cancel it',
      );
    }
    const op = new SendOperation(this.sendContext, plan);
    this.slot = { kind: 'send', id, op };
    // The slot is released only once no byte or signal of this send can still reach the terminal.
    void op.quiesced.then(() => {
      if (this.slot?.op === op) this.slot = undefined;
      this.settledSends.set(id, op);
      while (this.settledSends.size > SETTLED_SENDS_KEPT) {
        this.settledSends.delete(this.settledSends.keys().next().value as number);
      }
    });
    void op.start();
  }

  /** Result of send `id`, with the rendered screen while a full-screen program owns the terminal. */
  async awaitSend(id: number): Promise<TerminalSendResult> {
    const op = this.sendById(id);
    const settled = this.withLimitEvents(op, await op.done);
    const result = this.hiddenInput.apply(op, settled, () => this.localFlags());
    if (!this.pipeline.alternateScreen) return result;
    const screen = await this.pipeline.renderedScreen();
    return screen === undefined ? result : { ...result, screen };
  }

  /**
   * `result` with the session's limit events since the previous result (SPEC §4.8), read once per
   * send: asking for the same result again gives the same events.
   */
  private withLimitEvents(op: SendOperation, result: TerminalSendResult): TerminalSendResult {
    let events = this.resultEvents.get(op);
    if (events === undefined) {
      events = this.cgroups?.eventsSinceLastResult() ?? null;
      this.resultEvents.set(op, events);
    }
    return events === null ? result : { ...result, limitEvents: events };
  }

  /** The terminal's ICANON/ECHO now, read from the master (undefined once it is gone). */
  private localFlags(): TerminalLocalFlags | undefined {
    const fd = this.launched?.fd;
    if (fd === undefined || this.exitStatus.kind === 'exited') return undefined;
    try {
      return readTerminalLocalFlags(fd);
    } catch {
      return undefined; // unreadable state is never positive evidence (SPEC §4.2)
    }
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
    return this.pipeline.read(request);
  }

  /** Delivers `signal` to the foreground process group; SIGKILL to the shell's own group is refused. */
  signal(signal: SignalName): SignalResult {
    // The type binds nobody at run time: `process.kill` below would deliver any number or name.
    assertSignalName(signal);
    this.assertOpen();
    if (this.exitStatus.kind === 'exited') throw new TerminalError('SESSION_CLOSED', 'the shell has exited');
    const target = this.foregroundGroup(signal);
    const launched = this.launched;
    const shellGroup = launched?.shellIdentity?.pgrp ?? launched?.root.pid;
    if (signal === 'SIGKILL' && (target === shellGroup || target === launched?.root.pid)) {
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

  /**
   * Resizes the pty (the kernel sends SIGWINCH to the foreground group, so full-screen programs
   * redraw), and the terminal model. Throws INVALID_ARGUMENT for a bad size.
   */
  resize(size: TerminalSize): void {
    assertTerminalSize(size, this.spec.config.maxScreenCells);
    this.assertOpen();
    const term = this.launched?.term;
    if (term === undefined || this.exitStatus.kind === 'exited') {
      throw new TerminalError('SESSION_CLOSED', 'the shell has exited');
    }
    this.pipeline.resize(size, () => {
      try {
        term.resize(size.cols, size.rows);
      } catch (error) {
        throw new TerminalError('SESSION_CLOSED', 'the terminal is gone', { cause: error });
      }
    });
  }

  /** Whether the shell is alive. */
  status(): SessionStatus {
    return this.exitStatus;
  }

  /**
   * A person's input (SPEC §13): written to the pty past the send slot, so it reaches the program
   * whatever a send of the model is doing; its output flows like any other. Never kept or logged.
   */
  async writePersonInput(data: string): Promise<void> {
    this.assertOpen();
    const writer = this.launched?.writer;
    if (writer === undefined || this.exitStatus.kind === 'exited') {
      throw new TerminalError('SESSION_CLOSED', 'the shell has exited');
    }
    await writer.write(data, () => false);
  }

  /** Subscribes `port` to the raw channel (SPEC §2); resolves with the snapshot its chunks continue. */
  openRaw(port: MessagePort): Promise<TerminalSnapshot> {
    this.assertOpen();
    return this.pipeline.openRaw(port);
  }

  /** The terminal model serialized now (SPEC §2), every byte read so far included. */
  snapshot(): TerminalSnapshot {
    this.assertOpen();
    return this.pipeline.snapshot();
  }

  /** Live output on/off. */
  setLiveOutput(enabled: boolean): void {
    this.pipeline.setLiveOutput(enabled);
  }

  /**
   * Closes: rejects new sends and signals, stops readiness work, tears the process tree down, then
   * settles an in-flight send as `session_exit`. A failed close is not cached: calling again retries
   * against the live process table.
   */
  close(reason = 'closed', graceMs?: number): Promise<SessionOutcome> {
    const phase = this.phase;
    if (phase.kind !== 'closing') {
      this.phase = {
        kind: 'closing',
        installation: phase.kind === 'created' ? undefined : phase.installation,
        launched: phase.kind === 'launched' ? phase.launched : undefined,
      };
    }
    const grace = Math.min(this.spec.config.disposeGraceMs, graceMs ?? Number.POSITIVE_INFINITY);
    return this.closeAttempt.run(() => this.runClose(reason, Math.max(0, grace)));
  }

  private async runClose(reason: string, graceMs: number): Promise<SessionOutcome> {
    const op = this.slot?.op;
    op?.stopReadiness();
    this.stopWriting();
    // Closing reads everything again: the exit is noticed through the pty, and nothing more is parsed
    // than teardown lets through.
    this.pipeline.readEverything();
    const kill = this.teardownFaults?.nextKill();
    // Fault injection swallows every kill of the attempt, the container's included.
    const killContainer = kill === undefined ? this.containerKill() : undefined;
    const launched = this.launched;
    if (launched !== undefined) {
      await teardownProcessTree(launched.root, { graceMs, kill, killContainer });
      await this.waitForExitEvent(launched.exited);
    } else {
      await killContainer?.(); // a launch that failed after the cgroup was made
    }
    if (killContainer !== undefined) this.cgroups?.remove();
    op?.sessionExited();
    if (this.phase.kind === 'closing') this.phase.installation?.dispose();
    this.dispose(); // the terminal model, the live stream, the pty's listeners and every timer left
    const outcome: SessionOutcome = { status: this.exitStatus, reason };
    this.resolveFinished(outcome);
    return outcome;
  }

  /** The cgroup kill for `teardownProcessTree`, when the session has cgroups. */
  private containerKill(): (() => Promise<void>) | undefined {
    const cgroups = this.cgroups;
    return cgroups === undefined ? undefined : () => cgroups.kill();
  }

  /** Removes cgroups nothing was started in (a failed spawn); a leftover is swept by a successor. */
  private removeEmptyCgroup(): void {
    try {
      this.cgroups?.remove();
    } catch {
      // Not empty after all: close() kills and removes it.
      return;
    }
    this.cgroups = undefined;
  }

  private async waitForExitEvent(exited: Promise<void>): Promise<void> {
    let timer: Disposable | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = this.owned.timeout('exit event wait', EXIT_EVENT_WAIT_MS, resolve);
    });
    await Promise.race([exited, bound]);
    timer?.dispose();
  }

  /** Nothing more is written to the terminal: held replies are dropped, pending input is cancelled. */
  private stopWriting(): void {
    const launched = this.launched;
    if (launched === undefined) return;
    launched.replyGate.dispose();
    launched.writer.close();
    launched.outputDrain.close();
  }

  private onExit(launched: LaunchedTerminal, exitCode: number, signal: number | undefined): void {
    this.stopWriting();
    // Output read before the exit belongs to the session (and its send), with the U+FFFD of a character
    // the program left unfinished.
    const unfinished = launched.decoder.end();
    if (unfinished !== '') this.pipeline.write(unfinished);
    this.pipeline.flush();
    this.exitStatus = {
      kind: 'exited',
      exitCode: signal ? null : exitCode,
      signal: signal ? signalName(signal) : null,
      containment: this.exitStatus.containment,
      limits: this.exitStatus.limits,
    };
    launched.markExited();
    if (this.phase.kind === 'closing') return; // close() settles the send after its teardown
    // The shell exited on its own: clean up what it left behind, then report session_exit.
    const op = this.slot?.op;
    void (async () => {
      try {
        await teardownProcessTree(launched.root, {
          graceMs: this.spec.config.disposeGraceMs,
          killContainer: this.containerKill(),
        });
      } catch {
        // Leftovers that survive here are retried by close(), which reports the failure.
      }
      op?.sessionExited();
    })();
  }

  private sendById(id: number): SendOperation {
    if (this.slot?.kind === 'send' && this.slot.id === id) return this.slot.op;
    const op = this.settledSends.get(id);
    if (op === undefined) throw new TerminalError('INTERNAL', `unknown send ${id}`);
    return op;
  }

  private assertOpen(): void {
    if (this.phase.kind === 'closing') throw new TerminalError('SESSION_CLOSED', 'the session is closed');
  }

  /**
   * The terminal's foreground group, read from the pty child's stat (it shares the controlling tty) and
   * verified to hold a process of the session's tree. Throws SIGNAL_FAILED when there is none: a
   * signal never goes to a guessed group.
   */
  private foregroundGroup(signal: SignalName): number {
    const root = this.launched?.root;
    const target = root === undefined ? undefined : verifiedForegroundGroup(root.pid);
    if (target === undefined) {
      throw new TerminalError(
        'SIGNAL_FAILED',
        `${signal} not sent: the terminal's foreground process group is unknown or holds no process of this session`,
      );
    }
    return target;
  }

  /** The ports every send of this session uses (built once; each reads the session's state when called). */
  private buildSendContext(): SendContext {
    return {
      config: this.spec.config,
      exactTier: EXACT_TIER,
      terminal: {
        drainReplies: async () => {
          await this.pipeline.whenParsed();
          await this.launched?.replyGate.whenSettled();
        },
        writeInput: (data, isCancelled) => this.writeToTerminal(data, isCancelled),
        interrupt: () => {
          const target = this.foregroundGroup('SIGINT');
          process.kill(-target, 'SIGINT');
          return target;
        },
        lastReplyAt: () => this.launched?.lastReplyAt ?? Number.NEGATIVE_INFINITY,
      },
      probe: {
        sample: (): ForegroundSample | undefined => {
          const launched = this.launched;
          if (launched === undefined || this.exitStatus.kind === 'exited') return undefined;
          // A program waiting for our reply to its terminal query (PSReadLine's cursor-position request)
          // is blocked on stdin, but not for the user: sample only while no reply is pending.
          if (this.pipeline.parsingPending || launched.replyGate.pending || launched.writer.repliesPending)
            return undefined;
          return this.sampleNow();
        },
        shell: (candidate?: PromptCandidate) => this.resolveShell(candidate),
        foreground: (readerPid?: number) => this.foreground(readerPid),
        status: () => this.exitStatus,
      },
      output: {
        prompt: this.pipeline.prompt,
        window: this.pipeline.output,
        resultCursor: () => this.resultCursor,
        advanceResultCursor: (mark: OutputMark) => {
          this.resultCursor = mark;
        },
        flush: () => this.pipeline.flush(),
        drain: (): DrainOutcome => {
          if (this.exitStatus.kind === 'exited' || this.phase.kind !== 'launched') return 'unavailable';
          return this.phase.launched.outputDrain.drain();
        },
      },
    };
  }

  /**
   * Writes `data` into the pty (the send's input; it stops before the next slice once `isCancelled()`
   * is true). Replies the terminal model makes go through the gate, not here.
   */
  private writeToTerminal(data: string, isCancelled: () => boolean): Promise<WriteOutcome> {
    const writer = this.launched?.writer;
    if (writer === undefined) return Promise.reject(new Error('no terminal'));
    return writer.write(data, isCancelled);
  }

  /**
   * Whether `wait` is the shell in its own line editor, which does not read terminal replies; never
   * when the dialect's line editor asks the terminal questions itself.
   */
  private isShellLineEditorWait(launched: LaunchedTerminal, wait: ThreadWait): boolean {
    if (this.dialect.lineEditorQueriesTerminal) return false;
    return (
      wait.pid === (launched.shellIdentity?.pid ?? launched.root.pid) && this.dialect.isLineEditorWait(wait)
    );
  }

  /** A sample of the terminal's foreground group now; undefined once the shell is gone. */
  private sampleNow(): ForegroundSample | undefined {
    const launched = this.launched;
    if (launched === undefined || this.exitStatus.kind === 'exited') return undefined;
    const { root, shellIdentity, ttyRdev } = launched;
    return sampleForeground(root.pid, shellIdentity?.pid ?? root.pid, ttyRdev, process.arch, this.procFiles);
  }

  /**
   * What holds the terminal: the reader seen waiting when there is one, else the leader of the
   * terminal's foreground group (or, when the leader is gone, the shell or the pty child).
   */
  private foreground(readerPid?: number): ForegroundProcess | undefined {
    if (this.exitStatus.kind === 'exited') return undefined;
    // The group is verified only when the reader does not answer: it costs a walk of the process tree,
    // on every result's critical path (bench/README.md, "Where the time of a `true` goes"). The reader's
    // stat is read through the sample's held descriptors (proc-files.ts: a reading as fresh as an open's).
    const alive = (pid: number | undefined): ForegroundProcess | undefined => {
      if (pid === undefined || pid <= 0) return undefined;
      const stat = readProcStat(pid, this.procFiles);
      return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X'
        ? { pid, command: stat.comm }
        : undefined;
    };
    const root = this.launched?.root;
    return alive(readerPid) ?? alive(root === undefined ? undefined : verifiedForegroundGroup(root.pid));
  }

  /**
   * The session's shell. Identified from the first prompt candidate whose pid is that of the pty child
   * or of a descendant of it (a sandbox launcher may sit in between); fixed from then on, so a nested
   * shell that inherited PROMPT_COMMAND can never pose as ours. A confined shell prints its pid in the
   * sandbox's PID namespace, so the tree is searched by namespace pid (`NSpid`) and every probe after
   * this uses the host pid found; unconfined, the two are the same number.
   */
  private resolveShell(candidate?: PromptCandidate): ShellIdentity | undefined {
    const launched = this.launched;
    if (launched === undefined || launched.shellIdentity !== undefined || candidate === undefined) {
      return launched?.shellIdentity;
    }
    const stat = findByNamespacePid(launched.root.pid, candidate.shellPid);
    if (stat === undefined) return undefined;
    launched.shellIdentity = {
      pid: stat.pid,
      pgrp: stat.pgrp,
      markerPid: candidate.shellPid,
      isLineEditorWait: this.dialect.isLineEditorWait,
    };
    return launched.shellIdentity;
  }
}

/**
 * The send slot's occupant: a phase of the dialect's startup (the session is not ready yet), or a
 * caller's send with its host-chosen id. It leaves the slot once none of its bytes or signals can still
 * reach the terminal.
 */
type SendSlot =
  | { readonly kind: 'startup'; readonly op: SendOperation }
  | { readonly kind: 'send'; readonly id: number; readonly op: SendOperation };

/** The containment a session gets from its sandbox's PID namespace and its cgroup. */
function containmentOf(pidNamespace: boolean, cgroup: boolean): Containment {
  if (!cgroup) return pidNamespace ? 'pid-namespace' : 'process-tree';
  return pidNamespace ? 'pid-namespace+cgroup' : 'cgroup';
}

function signalName(signal: number): string {
  const entry = Object.entries(osConstants.signals).find(([, value]) => value === signal);
  return entry?.[0] ?? String(signal);
}
