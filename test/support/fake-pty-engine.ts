/**
 * A scripted stand-in for the engine (`PtyEngine`), used to unit-test the layers above it — the
 * harness services, the tools and the MCP server — and to pin races (spawn in flight during disposal,
 * a close that fails) that real shells cannot reproduce on demand. Behaviour of real shells is tested
 * against the real engine elsewhere.
 */
import { TerminalError } from '../../src/shared/errors.js';
import { unenforcedLimits } from '../../src/shared/session-limits.js';
import type {
  Dialect,
  Disposable,
  KeyboardHold,
  OutputChunk,
  PtyEngine,
  RawChunk,
  RawView,
  ReadRequest,
  ReadResult,
  SandboxSelection,
  SendOperation,
  SendRequest,
  SessionListing,
  SessionOutcome,
  SessionStatus,
  SignalName,
  SignalResult,
  SpawnOptions,
  TakeKeyboardOptions,
  TerminalSendResult,
  TerminalSession,
  TerminalSize,
  TerminalSnapshot,
} from '../../src/shared/types.js';

/** The limits every fake session reports: a fake has no cgroups. */
export const FAKE_LIMITS = unenforcedLimits('a fake session has no cgroups');
/** A promise with its resolvers, for gating fake work on the test's schedule. */
export interface Gate {
  promise: Promise<void>;
  open(): void;
}

/** Creates a closed gate. */
export function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Scripted result of a send (defaults fill the rest). */
export type FakeSendScript = (request: SendRequest) => Partial<TerminalSendResult>;

/** A fake terminal session. */
export class FakeSession implements TerminalSession {
  readonly sends: SendRequest[] = [];
  readonly signals: SignalName[] = [];
  readonly closeReasons: string[] = [];
  /** Sizes passed to `resize`, in order. */
  readonly resizes: TerminalSize[] = [];
  /** Number of upcoming closes that reject with CLEANUP_FAILED. */
  failCloses = 0;
  /** Result of the next sends. */
  script: FakeSendScript = (request) => ({ viewport: `ran: ${request.text}`, exitCode: 0 });
  /** Scrollback lines served by `read`. */
  lines: string[] = ['line 0', 'line 1', 'line 2'];
  status_: SessionStatus = { kind: 'running', containment: 'process-tree', limits: FAKE_LIMITS };
  /** When set, sends settle only once it opens (a command that is still running). */
  holdSends: Gate | undefined;
  /** Live output subscribers (`onOutput`); `emitOutput` feeds them. */
  readonly outputListeners = new Set<(chunk: OutputChunk) => void>();
  closed = false;
  private active = false;

  constructor(
    readonly id: string,
    readonly pid: number,
    readonly name: string | undefined,
    readonly sandbox: SandboxSelection | undefined,
    readonly dialect: Dialect = 'bash',
    readonly motd = 'fake motd',
  ) {}

  startSend(request: SendRequest): SendOperation {
    if (this.closed) throw new TerminalError('SESSION_CLOSED', `session ${this.id} is closed`);
    if (this.active) throw new TerminalError('SEND_ACTIVE', `a send is already active on ${this.id}`);
    this.active = true;
    this.sends.push(request);
    const result: TerminalSendResult = {
      viewport: '',
      waitReason: 'stdin_read',
      sessionStatus: this.status_,
      truncated: false,
      elapsedMs: 1,
      ...this.script(request),
    };
    const held = this.holdSends?.promise;
    const done = Promise.resolve(held).then(() => {
      this.active = false;
      return result;
    });
    return {
      done,
      readOutput: async () => ({ delta: result.viewport, truncated: false }),
      cancel: async () => {
        this.signals.push('SIGINT');
      },
    };
  }

  async read(request: ReadRequest = {}): Promise<ReadResult> {
    const offset = request.offset ?? 0;
    const count = request.count ?? 500;
    const lineEnd = Math.max(0, this.lines.length - offset);
    const lineBegin = Math.max(0, lineEnd - count);
    return {
      text: this.lines.slice(lineBegin, lineEnd).join('\n'),
      totalLines: this.lines.length,
      lineBegin,
      lineEnd,
      truncated: false,
    };
  }

  async signal(signal: SignalName): Promise<SignalResult> {
    if (this.closed) throw new TerminalError('SESSION_CLOSED', `session ${this.id} is closed`);
    this.signals.push(signal);
    return { delivered: true, targetPgid: this.pid };
  }

  async status(): Promise<SessionStatus> {
    return this.status_;
  }

  /** The fake has no keyboard to hold. */
  async takeKeyboard(_options: TakeKeyboardOptions): Promise<KeyboardHold> {
    throw new TerminalError('INVALID_ARGUMENT', 'the fake session has no keyboard');
  }

  async resize(size: TerminalSize): Promise<void> {
    if (this.closed) throw new TerminalError('SESSION_CLOSED', `session ${this.id} is closed`);
    this.resizes.push(size);
  }

  onOutput(listener: (chunk: OutputChunk) => void): Disposable {
    this.outputListeners.add(listener);
    return { dispose: () => this.outputListeners.delete(listener) };
  }

  async openRaw(_listener: (chunk: RawChunk) => void): Promise<RawView> {
    throw new TerminalError('INVALID_ARGUMENT', 'a fake session has no raw channel');
  }

  async snapshot(): Promise<TerminalSnapshot> {
    throw new TerminalError('INVALID_ARGUMENT', 'a fake session has no terminal model');
  }

  /** Delivers live output to the subscribers, as the engine's data plane would. */
  emitOutput(text: string, dropped = 0): void {
    for (const listener of this.outputListeners) listener({ text, dropped });
  }

  async close(reason = 'closed'): Promise<SessionOutcome> {
    this.closeReasons.push(reason);
    if (this.failCloses > 0) {
      this.failCloses--;
      throw new TerminalError('CLEANUP_FAILED', `fake teardown of ${this.id} failed`);
    }
    this.closed = true;
    this.status_ = {
      kind: 'exited',
      exitCode: null,
      signal: 'SIGKILL',
      containment: 'process-tree',
      limits: FAKE_LIMITS,
    };
    return { status: this.status_, reason };
  }
}

/** A fake engine: records spawn options, optionally holds spawns at a gate. */
export class FakeEngine implements PtyEngine {
  readonly spawned: FakeSession[] = [];
  readonly spawnOptions: SpawnOptions[] = [];
  /** When set, spawns wait for it (and honour abort while waiting). */
  spawnGate: Gate | undefined;
  /** Called when a spawn starts (before the gate). */
  onSpawnStarted: (() => void) | undefined;
  closed = false;
  private nextPid = 4000;

  async spawn(options: SpawnOptions = {}, signal?: AbortSignal): Promise<TerminalSession> {
    if (this.closed) throw new TerminalError('ENGINE_CLOSED', 'fake engine closed');
    this.spawnOptions.push(options);
    this.onSpawnStarted?.();
    if (this.spawnGate !== undefined) {
      let onAbort = () => {};
      const aborted = new Promise<void>((resolve) => {
        onAbort = resolve;
        signal?.addEventListener('abort', onAbort, { once: true });
      });
      await Promise.race([this.spawnGate.promise, aborted]);
      signal?.removeEventListener('abort', onAbort);
    }
    signal?.throwIfAborted();
    const session = new FakeSession(
      `fake-${this.nextPid}`,
      this.nextPid++,
      options.name,
      options.sandbox,
      options.dialect,
    );
    this.spawned.push(session);
    return session;
  }

  async list(): Promise<SessionListing[]> {
    return Promise.all(
      this.sessions().map(async (session) => ({
        id: session.id,
        name: session.name,
        attached: true,
        pid: session.pid,
        status: await session.status(),
        busy: false,
        mode: session.sandbox?.mode ?? 'unconfined',
      })),
    );
  }

  sessions(): TerminalSession[] {
    return this.spawned.filter((session) => !session.closed);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const session of this.spawned) if (!session.closed) await session.close('engine closed');
  }
}
