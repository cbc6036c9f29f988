/**
 * The engine client on the host thread (SPEC §2, §5): a Piscina pool of engine threads, one long-lived
 * task per session, Comlink as the control plane, the host-exit guard. See docs/decisions/0001 for why
 * Piscina and Comlink are used this way and which guards make it safe.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { MessageChannel, type ResourceLimits, type Worker } from 'node:worker_threads';
import * as Comlink from 'comlink';
import { Piscina } from 'piscina';
import { installErrorTransfer, portEndpoint } from '../../shared/comlink-bridge.js';
import { type EngineConfig, type EngineConfigInput, resolveEngineConfig } from '../../shared/config.js';
import { TerminalBackendCleanupError, TerminalError } from '../../shared/errors.js';
import { DisposableStore, delay, withinMs } from '../../shared/lifecycle.js';
import { type ProcessIdentity, parseProcStat } from '../../shared/proc-stat.js';
import {
  type EngineWorkerData,
  type FaultPlan,
  type SessionLaunchSpec,
  type SessionTaskData,
  type SessionThreadApi,
  THREAD_DIAGNOSTICS_TASK,
  type ThreadDiagnostics,
  type ThreadFaultApi,
  type ThreadFaultKind,
} from '../../shared/protocol.js';
import type { SandboxProvider } from '../../shared/sandbox.js';
import type {
  CloseOptions,
  PtyEngine,
  SessionListing,
  SpawnOptions,
  TerminalSession,
} from '../../shared/types.js';
import { CgroupReaper } from './cgroup-reaper.js';
import { HeartbeatMonitor, type HeartbeatStall } from './heartbeat-monitor.js';
import { HostExitGuard } from './host-exit-guard.js';
import { SerialLock } from './serial-lock.js';
import { assertNameFree, listSessions } from './session-listing.js';
import { recordingPath, startRecording } from './session-recording.js';
import { SessionTask, type TaskPlacement } from './session-task.js';
import { validateSpawnOptions } from './spawn-options.js';
import { answeredOrDied, raceDeath, ThreadSession } from './thread-session.js';

/** Options of {@link createPtyEngine}: the configuration of SPEC §3 plus host-side facilities. */
export interface EngineOptions extends EngineConfigInput {
  /** Sandbox provider used for `read-only` / `workspace-write` spawns. */
  sandbox?: SandboxProvider;
  /** V8 heap limits of each engine thread. */
  resourceLimits?: ResourceLimits;
}

/** Piscina keeps an idle thread this long; a thread with live sessions is never idle (its tasks run). */
const THREAD_IDLE_TIMEOUT_MS = 60_000;
/** Tasks per thread: each session is one long-lived task, so this bounds sessions per thread. */
const SESSIONS_PER_THREAD = 4096;

/**
 * How long the host waits for a dead engine thread to finish exiting before its shells are killed
 * anyway (a thread whose pty child ignores SIGHUP only finishes once that child dies).
 */
const THREAD_EXIT_WAIT_MS = 2_000;

/** How often the host looks whether a wedged thread's killed shells were reaped. */
const REAP_POLL_MS = 10;

/** Extra time, beyond the teardown grace, for a last close attempt of a session whose close failed. */
const FINAL_CLOSE_MARGIN_MS = 5_000;

/**
 * V8 young generation of an engine thread. A flood allocates short-lived strings at full speed, and the
 * young generation grows to its limit under it; Node 24's default limit is about twice Node 20's, which
 * took the RSS growth of 50 MB of output without a line end from ~37 MB to ~70 MB (SPEC §4.3 bounds it
 * at 64 MB). 32 MB holds it at Node 20's level on both (`test/system/worker/output/hostile-output.test.ts`). A caller's
 * `resourceLimits` may set another value.
 */
const ENGINE_YOUNG_GENERATION_MB = 32;

const WORKER_FILE = new URL('../../worker/thread/engine-worker.js', import.meta.url).href;

/** Creates an engine. Rejects with INVALID_CONFIG naming the field when the configuration is invalid. */
export async function createPtyEngine(options: EngineOptions = {}): Promise<PtyEngine & EngineInternals> {
  return openEngine(options, undefined);
}

/**
 * Creates an engine whose sessions carry `faults` (the internal test entry, src/main/engine/testing.ts, is the
 * only caller that passes any).
 */
export function openEngine(options: EngineOptions, faults: FaultPlan | undefined): Engine {
  const { sandbox, resourceLimits, ...configInput } = options;
  const config = resolveEngineConfig(configInput);
  installErrorTransfer();
  return new Engine(config, sandbox, resourceLimits, faults);
}

/** Diagnostics the engine offers beyond the public interface (used by tests and the benchmark). */
export interface EngineInternals {
  /** The validated configuration. */
  readonly config: EngineConfig;
  /** Live engine threads. */
  threadCount(): number;
}

/** The engine. Its methods beyond `PtyEngine` and `EngineInternals` are typed for the test entry only. */
export class Engine implements PtyEngine, EngineInternals {
  private readonly pool: Piscina;
  private readonly guard = new HostExitGuard();
  /** Every session task, by id: running in a thread, or published and not yet closed (session-task.ts). */
  private readonly tasks = new Map<string, SessionTask>();
  private readonly pending = new Set<Promise<unknown>>();
  /** node-pty's Linux spawn uses the non-reentrant ptsname(): launches never overlap across threads. */
  private readonly launchLock = new SerialLock();
  private readonly heartbeats = new HeartbeatMonitor((id, reason) => this.onThreadWedged(id, reason));
  /**
   * Wedged threads being terminated. A spawn waits for these first: Piscina forgets a thread only
   * once it exited, and would place the new session on it until then. Bounded: a thread stuck in a
   * native call never exits; sessions placed on it then fail by their own missing heartbeat.
   */
  private readonly replacements = new Set<Promise<void>>();
  /** Kills this process's session cgroups if the host dies without closing (SPEC §4.6). */
  private readonly reaper: CgroupReaper;
  private nextId = 1;
  /** Names of spawns in progress: a second spawn of the same name is refused before either finishes. */
  private readonly namesStarting = new Set<string>();
  private closing: Promise<void> | undefined;

  constructor(
    readonly config: EngineConfig,
    private readonly sandbox: SandboxProvider | undefined,
    resourceLimits: ResourceLimits | undefined,
    private readonly faults: FaultPlan | undefined,
  ) {
    this.pool = new Piscina({
      filename: WORKER_FILE,
      minThreads: config.threads,
      maxThreads: config.threads,
      // 'sync' parks idle workers in Atomics.wait, which starves node-pty of every event (SPEC §2).
      atomics: 'disabled',
      idleTimeout: THREAD_IDLE_TIMEOUT_MS,
      concurrentTasksPerWorker: SESSIONS_PER_THREAD,
      resourceLimits: { maxYoungGenerationSizeMb: ENGINE_YOUNG_GENERATION_MB, ...resourceLimits },
      // Each engine thread finds its cgroup home (and sweeps a dead predecessor's cgroups) at start.
      workerData: {
        cgroupRoot: config.cgroupRoot,
        engineKey: randomBytes(4).toString('hex'),
        engineMemoryBytes: config.engineMemoryBytes,
        heartbeats: this.heartbeats.poolBuffer,
      } satisfies EngineWorkerData,
    });
    // A worker error with no task attached would otherwise be an unhandled 'error' event. The listener
    // lives as long as the pool (dropped with the engine): removing it at close would turn an error the
    // destroyed pool still emits into an unhandled one.
    this.pool.on('error', () => undefined);
    this.reaper = new CgroupReaper(config.cgroupRoot);
  }

  threadCount(): number {
    return this.pool.threads.length;
  }

  sessions(): TerminalSession[] {
    return this.published();
  }

  /** The sessions handed to callers and not yet closed. */
  private published(): ThreadSession[] {
    const sessions: ThreadSession[] = [];
    for (const task of this.tasks.values()) if (task.session !== undefined) sessions.push(task.session);
    return sessions;
  }

  /** Forgets `task` once nothing of it runs and its session is closed. */
  private forgetIfFinished(task: SessionTask): void {
    if (task.finished && this.tasks.get(task.id) === task) this.tasks.delete(task.id);
  }

  list(): Promise<SessionListing[]> {
    return listSessions(this.published());
  }

  spawn(options: SpawnOptions = {}, signal?: AbortSignal): Promise<TerminalSession> {
    if (this.closing !== undefined) {
      return Promise.reject(new TerminalError('ENGINE_CLOSED', 'the engine is closed'));
    }
    // Counted with the spawns in progress, so a burst of spawns cannot overshoot the bound.
    if (this.published().length + this.pending.size >= this.config.maxSessions) {
      return Promise.reject(
        new TerminalError(
          'SESSION_LIMIT',
          `the engine has ${this.config.maxSessions} sessions open or starting (maxSessions); close one first`,
        ),
      );
    }
    try {
      assertNameFree(options.name, this.published(), this.namesStarting);
    } catch (error) {
      return Promise.reject(error);
    }
    const name = typeof options.name === 'string' ? options.name : undefined;
    if (name !== undefined) this.namesStarting.add(name);
    const attempt = this.spawnSession(options, signal);
    this.pending.add(attempt);
    const forget = () => {
      this.pending.delete(attempt);
      if (name !== undefined) this.namesStarting.delete(name);
    };
    attempt.then(forget, forget);
    return attempt;
  }

  /** Starts the recording a spawn asked for (SPEC §13); a recording that cannot start closes the session. */
  private async record(task: SessionTask, session: ThreadSession, record: string | true): Promise<void> {
    try {
      task.recording = await startRecording(session, recordingPath(record, session));
    } catch (error) {
      await session.close('recording failed').catch(() => undefined);
      throw error;
    }
  }

  close(options: CloseOptions = {}): Promise<void> {
    this.closing ??= this.closeAll(options);
    return this.closing;
  }

  /**
   * Makes the thread hosting `session` die or wedge; only on an engine with a fault plan. Resolves once
   * the thread answered or was declared dead (see `answeredOrDied`).
   */
  crashThread(session: TerminalSession, kind: ThreadFaultKind): Promise<void> {
    const task = this.tasks.get(session.id);
    const crash = task?.session === session ? task.crash : undefined;
    if (crash === undefined) {
      return Promise.reject(
        new TerminalError('INVALID_ARGUMENT', 'fault injection is not enabled for this session'),
      );
    }
    return crash(kind);
  }

  /** What an engine thread holds now (with `threads: 1`, the only one); see `ThreadDiagnostics`. */
  threadDiagnostics(): Promise<ThreadDiagnostics> {
    return this.pool.run(undefined, { name: THREAD_DIAGNOSTICS_TASK });
  }

  private async spawnSession(
    options: SpawnOptions,
    signal: AbortSignal | undefined,
  ): Promise<TerminalSession> {
    signal?.throwIfAborted();
    const limits = validateSpawnOptions(options, this.config);
    const dialect = options.dialect ?? this.config.dialect;
    const selection = options.sandbox;
    const sandbox =
      selection === undefined || selection.mode === 'danger-full-access' ? undefined : this.sandbox;
    if (selection !== undefined && selection.mode !== 'danger-full-access' && sandbox === undefined) {
      throw new TerminalError(
        'SANDBOX_UNAVAILABLE',
        `sandbox mode '${selection.mode}' needs a sandbox provider (e.g. createBubblewrapSandbox()); none was given`,
      );
    }
    const cwd = options.cwd ?? selection?.workspaceRoot ?? process.cwd();
    // A confined cwd is the provider's to judge (confine below): it refuses one the sandbox hides with
    // the message it gives a missing one, so the refusal reveals nothing of the host (SPEC §4.1).
    if (sandbox === undefined) assertDirectory(cwd);
    const id = `t${this.nextId++}`;
    const spec: SessionLaunchSpec = {
      id,
      cwd,
      env: options.env,
      ...(options.baseEnv === undefined ? {} : { baseEnv: options.baseEnv }),
      dialect,
      rows: options.rows ?? this.config.rows,
      cols: options.cols ?? this.config.cols,
      config: this.config,
      // Confined modes run the shell in the sandbox's own PID namespace (bubblewrap's --unshare-pid).
      pidNamespace: selection !== undefined && selection.mode !== 'danger-full-access',
      limits,
      ...(this.faults === undefined ? {} : { faults: this.faults }),
    };

    await Promise.all(this.replacements);
    const control = new MessageChannel();
    const data = new MessageChannel();
    const taskData: SessionTaskData = {
      controlPort: control.port2,
      dataPort: data.port2,
      spec,
      heartbeat: this.heartbeats.watch(id),
    };
    const task: Promise<unknown> = this.pool.run(taskData, {
      transferList: [control.port2, data.port2] as never,
    });
    let hostThread: Worker | undefined;
    let declareDead!: (error: TerminalError) => void;
    // Rejects (with ENGINE_THREAD_DIED) once the thread died or was found wedged; never resolves.
    const death = new Promise<never>((_, reject) => {
      declareDead = reject;
    });
    death.catch(() => undefined);
    const placement: TaskPlacement = { threadId: undefined, declareDead };
    const record = new SessionTask(id, placement);
    this.tasks.set(id, record);
    task.catch(async (error: unknown) => {
      // The thread died (or the task failed outside the session): kill the shell this host knew of —
      // but only once the thread is fully gone. Piscina reports a thread's uncaught error before the
      // thread has finished exiting, and a shell dying meanwhile would run node-pty's exit callback
      // inside the half-torn-down thread, which aborts the whole process (SPEC §2).
      await waitForThreadExit(hostThread, THREAD_EXIT_WAIT_MS);
      this.guard.killSession(id);
      declareDead(
        new TerminalError('ENGINE_THREAD_DIED', `the engine thread hosting session ${id} died`, {
          cause: error,
        }),
      );
    });
    const proxy = Comlink.wrap<SessionThreadApi>(portEndpoint(control.port1));
    const call = <T>(invoke: () => Promise<T>): Promise<T> => raceDeath(invoke(), death);
    if (this.faults !== undefined) {
      const faults = proxy as unknown as Comlink.Remote<ThreadFaultApi>;
      record.crash = (kind) => answeredOrDied(faults.crashThread(kind), death);
    }
    const dropPorts = () => {
      control.port1.close();
      data.port1.close();
    };
    const closeUnpublished = async () => {
      await call(() => proxy.close('engine closed'));
      await raceDeath(task, death).catch(() => undefined);
      dropPorts();
    };
    const forgetTask = () => {
      record.ended();
      this.heartbeats.unwatch(id);
      this.forgetIfFinished(record);
    };
    task.then(forgetTask, forgetTask);

    let launched = false;
    try {
      // The dialect (engine thread) says what to start; a confined session's argv is wrapped here.
      const plan = await call(() => proxy.plan());
      const argv =
        sandbox === undefined || selection === undefined
          ? plan.argv
          : await sandbox.confine(plan.argv, {
              mode: selection.mode,
              workspaceRoot: selection.workspaceRoot,
              ...(selection.workspaceExplicit === false ? { workspaceExplicit: false } : {}),
              cwd,
              tmpfsBytes: this.config.tmpfsBytes,
              homeAllowlist: this.config.homeAllowlist,
              readablePaths: plan.readablePaths,
            });
      // node-pty starts the (confined) launcher there on the host: a provider that let a missing cwd
      // through gets the plain refusal rather than a failed spawn.
      if (sandbox !== undefined) assertDirectory(cwd);
      // After plan(): the thread found its cgroup home. Before launch: the launcher joins a cgroup.
      this.reaper.ensureRunning();
      const info = await this.launchLock.run(() => call(() => proxy.launch(argv)));
      hostThread = this.pool.threads.find((thread) => thread.threadId === info.threadId);
      placement.threadId = info.threadId;
      launched = true;
      record.closeAgain = closeUnpublished;
      this.guard.register(id, info.identity, info.cgroupDir, info.limitDirs);
      const { motd, shellPid } = await withAbort(
        call(() => proxy.awaitStartup()),
        signal,
      );
      const session = new ThreadSession({
        id,
        name: options.name,
        // The shell's, as SPEC §5 promises; the guard keeps the pty child's identity (it kills the tree).
        pid: shellPid,
        motd,
        // The published selection: mode and root (how the root was chosen is the spawn's business).
        sandbox:
          selection === undefined
            ? undefined
            : { mode: selection.mode, workspaceRoot: selection.workspaceRoot },
        dialect,
        maxInputBytes: this.config.maxInputBytes,
        maxScreenCells: this.config.maxScreenCells,
        waitBounds: { timeoutMs: this.config.timeoutMs, maxTimeoutMs: this.config.maxTimeoutMs },
        proxy,
        controlPort: control.port1,
        dataPort: data.port1,
        death,
        taskDone: task,
        onClosed: (closedId) => {
          record.recording?.close();
          record.recording = undefined;
          record.session = undefined;
          this.forgetIfFinished(record);
          this.guard.unregister(closedId);
        },
      });
      record.session = session;
      if (record.closeAgain !== undefined) record.closeAgain = () => session.close('engine closed');
      if (options.record !== undefined) await this.record(record, session, options.record);
      return session;
    } catch (error) {
      // The unpublished shell is closed; the caller gets its own abort reason (or the startup error).
      const failure = signal?.aborted ? signal.reason : error;
      if (launched) {
        try {
          await call(() => proxy.close('spawn failed'));
          await raceDeath(task, death).catch(() => undefined);
          this.guard.unregister(id);
        } catch (cleanupError) {
          // The guard kills what teardown could not; engine.close() lets the thread observe it.
          this.guard.killSession(id);
          throw new TerminalBackendCleanupError(
            `closing the unpublished shell of ${id} failed after: ${describe(failure)}`,
            failure,
            cleanupError,
          );
        }
      } else {
        // Never launched: end the task so the thread holds nothing (the port close ends Comlink).
        void call(() => proxy.close('spawn failed')).catch(() => undefined);
      }
      dropPorts();
      throw failure;
    }
  }

  /**
   * Task `id` stopped beating: its thread is wedged (a busy loop, a stuck native call). Every session
   * of that thread is declared dead at once (its calls reject with ENGINE_THREAD_DIED) and its shells
   * are SIGKILLed from here. Only once they are reaped is the thread terminated, so Piscina replaces
   * it for new sessions: terminating a thread whose pty child is alive hangs, and one whose child dies
   * meanwhile runs node-pty's exit callback in a dying thread (SPEC §2).
   */
  private onThreadWedged(id: string, reason: HeartbeatStall): void {
    const wedged = this.tasks.get(id);
    const threadId = wedged?.placement?.threadId;
    const victims =
      threadId === undefined
        ? [id] // never launched: nothing else is known to share its thread
        : [...this.tasks.values()].filter((task) => task.placement?.threadId === threadId).map((t) => t.id);
    const roots: ProcessIdentity[] = [];
    for (const victim of victims) {
      const task = this.tasks.get(victim);
      const placement = task?.placement;
      if (task !== undefined) task.placement = undefined;
      this.heartbeats.unwatch(victim);
      const root = this.guard.rootOf(victim);
      if (root !== undefined) roots.push(root);
      this.guard.killSession(victim);
      placement?.declareDead(
        new TerminalError(
          'ENGINE_THREAD_DIED',
          `the engine thread hosting session ${victim} ${reason}; the session is gone`,
        ),
      );
    }
    const thread =
      threadId === undefined ? undefined : this.pool.threads.find((worker) => worker.threadId === threadId);
    if (thread === undefined) return;
    const replaced = waitUntilGone(roots, THREAD_EXIT_WAIT_MS)
      .then(() => withinMs('engine thread terminate wait', thread.terminate(), THREAD_EXIT_WAIT_MS))
      .then(() => undefined);
    // Until Piscina has seen the thread exit it would still place new sessions on it.
    this.replacements.add(replaced);
    void replaced.finally(() => this.replacements.delete(replaced));
  }

  private async closeAll(options: CloseOptions): Promise<void> {
    // Spawns in progress finish (or fail) first, so none publishes a session after we looked.
    await Promise.allSettled([...this.pending]);
    const failures: unknown[] = [];
    const results = await Promise.allSettled(
      this.published().map((session) => session.close('engine closed', options)),
    );
    for (const result of results) if (result.status === 'rejected') failures.push(result.reason);
    // Tasks still running (a close failed, or an unpublished shell's cleanup failed): kill their
    // processes from here, then let their own thread observe the deaths and finish its task.
    const unfinished: [string, () => Promise<unknown>][] = [];
    for (const task of this.tasks.values()) {
      if (task.closeAgain !== undefined) unfinished.push([task.id, task.closeAgain]);
    }
    for (const [id] of unfinished) this.guard.killSession(id);
    const bound = this.config.disposeGraceMs + FINAL_CLOSE_MARGIN_MS;
    await Promise.allSettled(
      unfinished.map(([, close]) => withinMs('engine final close wait', close(), bound)),
    );
    // Whatever is still registered is killed before the threads are released: terminating a thread
    // whose pty child ignores SIGHUP would otherwise hang.
    this.guard.killAll();
    this.heartbeats.dispose();
    await this.pool.destroy();
    this.guard.dispose();
    // Every session is closed or killed: dismissed, the reaper kills nothing (another engine of this
    // process shares its cgroup directory).
    await this.reaper.close();
    if (failures.length > 0)
      throw new AggregateError(failures, `${failures.length} session(s) failed to close cleanly`);
  }
}

/** Resolves once no process of `roots` exists any more (reaped), or after `ms`. */
async function waitUntilGone(roots: ProcessIdentity[], ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (roots.some(exists) && performance.now() < deadline) {
    await delay('engine reap poll', REAP_POLL_MS);
  }
}

/** Whether the process of `identity` still exists (alive or a zombie not yet reaped). */
function exists(identity: ProcessIdentity): boolean {
  try {
    return (
      parseProcStat(readFileSync(`/proc/${identity.pid}/stat`, 'utf8'))?.startTime === identity.startTime
    );
  } catch {
    return false;
  }
}

/** Resolves like `call`, or rejects with the signal's exact reason once it aborts. */
function withAbort<T>(call: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return call;
  call.catch(() => undefined); // once abandoned after an abort, its later failure is expected
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    // One-shot: the listener ends with this promise (removed once the call settled, or it fired).
    const listening = new DisposableStore();
    listening.listen('engine call abort listener', signal, 'abort', onAbort, { once: true });
    call.then(resolve, reject).finally(() => listening.dispose());
  });
}

/** One promise per engine thread that resolves once it exited: every task of a dead thread shares it. */
const threadExits = new WeakMap<Worker, Promise<void>>();

/** Resolves once `thread` has exited (at once if it already has, or is unknown), or after `ms`. */
function waitForThreadExit(thread: Worker | undefined, ms: number): Promise<void> {
  // Node sets threadId to -1 once a Worker has exited.
  if (thread === undefined || thread.threadId === -1) return Promise.resolve();
  let exited = threadExits.get(thread);
  if (exited === undefined) {
    // One listener per thread, not per task: hundreds of tasks of one thread fail together. One-shot:
    // the thread's exit ends it, and the thread's own lifetime bounds it.
    exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
    threadExits.set(thread, exited);
  }
  return withinMs('engine thread exit wait', exited, ms).then(() => undefined);
}

function assertDirectory(cwd: string): void {
  let isDirectory = false;
  try {
    isDirectory = statSync(cwd).isDirectory();
  } catch {
    // reported below
  }
  if (!isDirectory) throw new TerminalError('INVALID_ARGUMENT', `cwd is not an existing directory: ${cwd}`);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
