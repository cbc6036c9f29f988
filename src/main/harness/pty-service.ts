/**
 * `ctx.pty`: the owner-scoped registry of terminal sessions (SPEC §6). Backends (e.g. `shell` from the
 * `pty-local` plugin) open sessions; the service gives each one an id, binds it to the owner that
 * opened it, and routes every later call through that binding, so owners never see or touch each
 * other's sessions. Spawns in progress are reservations: they count as owner activity and are
 * aborted by disposal.
 */

import { describeError, TerminalBackendCleanupError, TerminalError } from '../../shared/errors.js';
import { DisposableStore } from '../../shared/lifecycle.js';
import { RetryableAttempt } from '../../shared/retryable-attempt.js';
import { assertSignalName } from '../../shared/signals.js';
import type {
  CloseOptions,
  Dialect,
  Disposable,
  OutputChunk,
  ReadRequest,
  ReadResult,
  ReattachReport,
  SandboxSelection,
  SendOperation,
  SendRequest,
  SessionListing,
  SessionStatus,
  SignalName,
  SignalResult,
  TerminalSession,
} from '../../shared/types.js';
import { statusOrExited } from '../engine/session-listing.js';
import { LOCAL_WORLD } from '../worlds/world-registry.js';

/** What a backend is asked to open. */
export interface PtyBackendSpawnRequest {
  /** The owner the session will belong to (the sandbox policy is resolved for it). */
  owner: string;
  /** Human-readable name. */
  name?: string;
  /** Working directory; backends decide how a relative one resolves. */
  cwd?: string;
  /** Execution world to open it in (SPEC §10); omitted = this machine. */
  world?: string;
  /** Shell dialect (default: the backend's). */
  shell?: Dialect;
  /** Terminal rows (default: the engine's). */
  rows?: number;
  /** Terminal columns (default: the engine's). */
  cols?: number;
  /** Record the session as asciicast v2 under `$XDG_STATE_HOME/agent-pty/recordings/` (SPEC §13). */
  record?: boolean;
}

/** One kind of terminal the service can open, registered under its `type`. */
export interface PtyBackend {
  /** Backend type, e.g. `shell`. */
  readonly type: string;
  /**
   * Opens a session and resolves once it is ready. Aborting `signal` must close the unpublished
   * session and reject with the signal's exact reason.
   */
  spawn(request: PtyBackendSpawnRequest, signal: AbortSignal): Promise<TerminalSession>;
  /**
   * A backend whose sessions outlive their clients (a daemon's, SPEC §12): every session of the
   * owner's scope, whoever holds it, for listings.
   */
  listAll?(owner: string): Promise<SessionListing[]>;
  /**
   * Takes up the detached session named `request.name` (or with that id) instead of spawning one;
   * undefined when there is none. Aborting `signal` works as for `spawn`.
   */
  reattach?(
    request: PtyBackendSpawnRequest & { name: string },
    signal: AbortSignal,
  ): Promise<{ session: TerminalSession; report: ReattachReport } | undefined>;
}

/** Handle of a backend registration. */
export interface PtyBackendRegistration {
  /**
   * Stops new spawns of this type. With `closeSessions`, also closes every session of the type and
   * rejects with an `AggregateError` of the failed closes; without it, existing sessions stay
   * (a reloading plugin re-registers the type and keeps serving them).
   */
  unregister(options?: { closeSessions?: boolean }): Promise<void>;
}

/** What `spawn()` is asked to open. */
export interface PtySpawnRequest {
  /** Registered backend type. */
  type: string;
  /** Human-readable name. */
  name?: string;
  /** Working directory. */
  cwd?: string;
  /** Execution world to open it in (SPEC §10); omitted = this machine. */
  world?: string;
  /** Shell dialect (default: the backend's). */
  shell?: Dialect;
  /** Terminal rows (default: the engine's). */
  rows?: number;
  /** Terminal columns (default: the engine's). */
  cols?: number;
  /** Record the session as asciicast v2 under `$XDG_STATE_HOME/agent-pty/recordings/` (SPEC §13). */
  record?: boolean;
  /**
   * Refuse with SESSION_LIMIT when the owner already has this many sessions open or starting (an MCP
   * connection's `--max-sessions`, SPEC §4.8).
   */
  maxOwnerSessions?: number;
}

/** A session as its owner sees it. */
export interface PtySessionSnapshot {
  /** Service-wide unique id, e.g. `shell-1`. */
  sessionId: string;
  /** Human-readable name, when given. */
  name?: string;
  /** Backend type. */
  type: string;
  /** Execution world the session runs in, when not this machine. */
  world?: string;
  /** The shell's pid, as its world's host sees it (not a sandbox launcher's). */
  pid: number;
  /** The shell's dialect. */
  shell: Dialect;
  /** Whether the shell is alive. */
  status: SessionStatus;
  /** Sandbox the session runs in, when confined by policy. */
  sandbox?: SandboxSelection;
  /** True while a close is in progress. */
  closing: boolean;
  /**
   * Only from a backend whose sessions outlive their clients: false for a session no connection holds
   * (`terminal_open` with its name reattaches it), true for one held here or by another connection.
   */
  attached?: boolean;
  /** True for a session another connection holds (listed, not usable from here). */
  elsewhere?: boolean;
}

/** A freshly opened session. */
export interface PtySpawnResult extends PtySessionSnapshot {
  /** Bounded startup output of the shell. */
  motd: string;
  /** Set when an earlier connection's detached session was taken up instead (SPEC §12). */
  reattached?: ReattachReport;
}

/** Result of `kill()`. */
export interface PtyKillResult {
  /** The session that was closed. */
  sessionId: string;
  /** `closed` by this call, or `already-closing` when another close was in progress and finished. */
  outcome: 'closed' | 'already-closing';
}

/** `ctx.pty`: every call names its owner; ids of other owners are unknown to it. */
export interface PtyService {
  /** Makes a backend type available; a type can be registered once at a time. */
  registerBackend(backend: PtyBackend): PtyBackendRegistration;
  /** Registered backend types. */
  listBackends(): string[];
  /** Opens a session for `owner`; aborting `signal` cancels the spawn with the signal's reason. */
  spawn(owner: string, request: PtySpawnRequest, signal?: AbortSignal): Promise<PtySpawnResult>;
  /** Starts a send on the owner's session (one at a time per session; a second fails `SEND_ACTIVE`). */
  startSend(owner: string, id: string, request: SendRequest): SendOperation;
  /**
   * Subscribes to the session's live output (sanitized text as it arrives, see `session.onOutput`);
   * the subscription ends with `dispose()` or when the session closes.
   */
  onOutput(owner: string, id: string, listener: (chunk: OutputChunk) => void): Disposable;
  /** A page of the session's scrollback. */
  read(owner: string, id: string, request?: ReadRequest): Promise<ReadResult>;
  /** Delivers a signal to the session's foreground process group. */
  signal(owner: string, id: string, signal: SignalName): Promise<SignalResult>;
  /** Closes the session and forgets it; a failed close leaves it registered so a later kill retries. */
  kill(owner: string, id: string, reason: string): Promise<PtyKillResult>;
  /** The owner's sessions. */
  list(owner: string): Promise<PtySessionSnapshot[]>;
  /** True while the owner has an open session or a spawn in progress. */
  hasOwnerActivity(owner: string): boolean;
  /** Aborts the owner's spawns and closes its sessions; failures are reported together. */
  disposeOwned(owner: string, reason?: string, options?: CloseOptions): Promise<void>;
  /** Closes everything and clears every registry even when closes fail; failures reported together. */
  dispose(): Promise<void>;
}

/** Id prefix separator: ids read `shell-1`, `shell-2`, … */
const ID_SEPARATOR = '-';

interface SessionRecord {
  readonly id: string;
  readonly owner: string;
  readonly type: string;
  readonly world: string | undefined;
  readonly session: TerminalSession;
  /** The close in progress or done; a failed close is forgotten, so a later kill retries. */
  readonly closing: RetryableAttempt<void>;
}

interface Reservation {
  readonly owner: string;
  readonly controller: AbortController;
  /** Settles (never rejects) when the spawn finished, whichever way. */
  settled: Promise<void>;
}

/** Longest part of an unknown session id that an error message repeats. */
const MAX_ECHOED_ID_CHARS = 64;

/**
 * The refusal of a call with the id of a listed session this connection does not hold: what works
 * instead. Its handle here would be a new sessionId, so reattaching goes through `terminal_open` with
 * its name, or with this id for an unnamed one (the backend's reattach matches either).
 */
function notHeldHere(shown: string, listed: { name: string | undefined; attached: boolean }): TerminalError {
  const reattach = `terminal_open {"name": ${JSON.stringify(listed.name ?? shown)}}`;
  return listed.attached
    ? new TerminalError(
        'SESSION_ATTACHED',
        `PTY session ${shown} is attached to another connection, not this one; once it is detached there, ${reattach} reattaches it here`,
      )
    : new TerminalError(
        'UNKNOWN_SESSION',
        `PTY session ${shown} is detached (it was when terminal_list last ran), not held by this connection; ${reattach} reattaches it, under a new sessionId`,
      );
}

/** Creates an empty PTY service. */
export function createPtyService(): PtyService {
  const backends = new Map<string, PtyBackend>();
  const records = new Map<string, SessionRecord>();
  const reservations = new Set<Reservation>();
  // Per owner, the sessions its last list() showed that nobody here holds (a daemon's, SPEC §12):
  // their ids are listed but are no handles here, so a call with one is told what works instead.
  const listedElsewhere = new Map<string, Map<string, { name: string | undefined; attached: boolean }>>();
  let nextId = 1;
  let disposed = false;

  function assertOpen(): void {
    if (disposed) throw new TerminalError('ENGINE_CLOSED', 'the PTY service is disposed');
  }

  /** The owner's record, or the same error whether the id does not exist or belongs to someone else. */
  function lookup(owner: string, id: string): SessionRecord {
    assertOpen();
    const record = records.get(id);
    if (record === undefined || record.owner !== owner) {
      // An id is echoed only in part: a client's megabytes of id must not come back as megabytes of error.
      const shown =
        id.length > MAX_ECHOED_ID_CHARS
          ? `${id.slice(0, MAX_ECHOED_ID_CHARS)}… (${id.length} characters)`
          : id;
      const listed = record === undefined ? listedElsewhere.get(owner)?.get(id) : undefined;
      if (listed !== undefined) throw notHeldHere(shown, listed);
      throw new TerminalError('UNKNOWN_SESSION', `unknown PTY session: ${shown}`);
    }
    return record;
  }

  function lookupOpen(owner: string, id: string): SessionRecord {
    const record = lookup(owner, id);
    if (record.closing.started) {
      throw new TerminalError('SESSION_CLOSED', `PTY session ${id} is closing`);
    }
    return record;
  }

  async function snapshot(record: SessionRecord): Promise<PtySessionSnapshot> {
    const { session } = record;
    const status = await statusOrExited(session);
    return {
      sessionId: record.id,
      ...(session.name === undefined ? {} : { name: session.name }),
      type: record.type,
      ...(record.world === undefined ? {} : { world: record.world }),
      pid: session.pid,
      shell: session.dialect,
      status,
      ...(session.sandbox === undefined ? {} : { sandbox: session.sandbox }),
      closing: record.closing.started,
    };
  }

  /** Closes a record once; concurrent callers share the close, a failed close is forgotten. */
  function closeRecord(
    record: SessionRecord,
    reason: string,
    options: CloseOptions = {},
  ): { shared: boolean; done: Promise<void> } {
    const shared = record.closing.started;
    const done = record.closing.run(async () => {
      await record.session.close(reason, options);
      records.delete(record.id);
    });
    return { shared, done };
  }

  async function closeAll(
    selected: SessionRecord[],
    reason: string,
    options: CloseOptions = {},
  ): Promise<unknown[]> {
    const outcomes = await Promise.allSettled(
      selected.map((record) => closeRecord(record, reason, options).done),
    );
    return outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
  }

  async function abortReservations(selected: Reservation[], reason: unknown): Promise<void> {
    for (const reservation of selected) reservation.controller.abort(reason);
    await Promise.all(selected.map((reservation) => reservation.settled));
  }

  function reportFailures(failures: unknown[], what: string): void {
    if (failures.length === 0) return;
    const details = failures.map(describeError).join('; ');
    throw new AggregateError(failures, `${what}: ${failures.length} close(s) failed: ${details}`);
  }

  return {
    registerBackend(backend) {
      assertOpen();
      if (backends.has(backend.type)) {
        throw new TerminalError(
          'INVALID_ARGUMENT',
          `PTY backend type "${backend.type}" is already registered`,
        );
      }
      backends.set(backend.type, backend);
      let registered = true;
      return {
        async unregister(options = {}) {
          if (!registered) return;
          registered = false;
          if (backends.get(backend.type) === backend) backends.delete(backend.type);
          if (!options.closeSessions) return;
          const ofType = [...records.values()].filter((record) => record.type === backend.type);
          reportFailures(
            await closeAll(ofType, 'backend unregistered'),
            `closing "${backend.type}" sessions`,
          );
        },
      };
    },

    listBackends() {
      return [...backends.keys()];
    },

    async spawn(owner, request, signal) {
      assertOpen();
      const backend = backends.get(request.type);
      if (backend === undefined) {
        const known = [...backends.keys()].join(', ') || '(none)';
        throw new TerminalError(
          'INVALID_ARGUMENT',
          `unknown PTY backend type "${request.type}"; registered types: ${known}`,
        );
      }
      signal?.throwIfAborted();
      if (request.maxOwnerSessions !== undefined) {
        // Counted with the owner's spawns in progress (reserved below, with no await in between),
        // so concurrent opens cannot overshoot the bound.
        const held =
          [...records.values()].filter((record) => record.owner === owner).length +
          [...reservations].filter((reservation) => reservation.owner === owner).length;
        if (held >= request.maxOwnerSessions) {
          throw new TerminalError(
            'SESSION_LIMIT',
            `this connection has ${request.maxOwnerSessions} terminals open or opening (--max-sessions); close one first`,
          );
        }
      }
      // `local` is this machine, the same as no world: snapshots name only far worlds.
      const world = request.world === LOCAL_WORLD ? undefined : request.world;

      const controller = new AbortController();
      const forwardAbort = () => controller.abort(signal?.reason);
      const listening = new DisposableStore();
      if (signal !== undefined)
        listening.listen('pty spawn abort listener', signal, 'abort', forwardAbort, { once: true });
      let settle!: () => void;
      const reservation: Reservation = {
        owner,
        controller,
        settled: new Promise<void>((resolve) => {
          settle = resolve;
        }),
      };
      // Reserved synchronously, before the first await: from here on the spawn is owner activity,
      // so a mode change or an owner disposal racing with it sees it.
      reservations.add(reservation);
      try {
        const backendRequest: PtyBackendSpawnRequest = {
          owner,
          ...(request.name === undefined ? {} : { name: request.name }),
          ...(request.cwd === undefined ? {} : { cwd: request.cwd }),
          ...(world === undefined ? {} : { world }),
          ...(request.shell === undefined ? {} : { shell: request.shell }),
          ...(request.rows === undefined ? {} : { rows: request.rows }),
          ...(request.cols === undefined ? {} : { cols: request.cols }),
          ...(request.record === true ? { record: true } : {}),
        };
        // A name of a detached session takes it up (SPEC §12); it counts like a new one (above).
        const taken =
          request.name === undefined || world !== undefined || backend.reattach === undefined
            ? undefined
            : await backend.reattach({ ...backendRequest, name: request.name }, controller.signal);
        const session = taken?.session ?? (await backend.spawn(backendRequest, controller.signal));
        const status = await statusOrExited(session);
        // Race: disposal (of the owner or of the service) may abort the reservation just as the
        // backend publishes the session. Nobody can reach an unregistered session, so it is closed
        // here and the spawn rejects with the abort's exact reason. No await separates this check
        // from the registration below, so disposal cannot slip in between.
        if (controller.signal.aborted) {
          const abortReason: unknown = controller.signal.reason;
          try {
            await session.close('spawn aborted');
          } catch (cleanupError) {
            throw new TerminalBackendCleanupError(
              `spawn aborted and closing the new session failed: ${describeError(cleanupError)}`,
              abortReason,
              cleanupError,
            );
          }
          throw abortReason;
        }
        const id = `${backend.type}${ID_SEPARATOR}${nextId++}`;
        const record: SessionRecord = {
          id,
          owner,
          type: backend.type,
          world,
          session,
          closing: new RetryableAttempt<void>(),
        };
        records.set(id, record);
        return {
          sessionId: id,
          ...(session.name === undefined ? {} : { name: session.name }),
          type: backend.type,
          ...(world === undefined ? {} : { world }),
          pid: session.pid,
          shell: session.dialect,
          status,
          ...(session.sandbox === undefined ? {} : { sandbox: session.sandbox }),
          closing: false,
          ...(backend.listAll === undefined ? {} : { attached: true }),
          motd: session.motd,
          ...(taken === undefined ? {} : { reattached: taken.report }),
        };
      } finally {
        listening.dispose();
        reservations.delete(reservation);
        settle();
      }
    },

    startSend(owner, id, request) {
      return lookupOpen(owner, id).session.startSend(request);
    },

    onOutput(owner, id, listener) {
      return lookupOpen(owner, id).session.onOutput(listener);
    },

    async read(owner, id, request) {
      return lookupOpen(owner, id).session.read(request);
    },

    async signal(owner, id, signal) {
      // Before the backend: a backend of another kind need not check what the types promised.
      assertSignalName(signal);
      return lookupOpen(owner, id).session.signal(signal);
    },

    async kill(owner, id, reason) {
      const { shared, done } = closeRecord(lookup(owner, id), reason);
      await done;
      return { sessionId: id, outcome: shared ? 'already-closing' : 'closed' };
    },

    async list(owner) {
      assertOpen();
      const owned = [...records.values()].filter((record) => record.owner === owner);
      const snapshots = await Promise.all(owned.map(snapshot));
      // A backend whose sessions outlive their clients also lists the ones nobody here holds.
      const held = new Set([...records.values()].map((record) => record.session.id));
      const elsewhere = new Map<string, { name: string | undefined; attached: boolean }>();
      for (const backend of backends.values()) {
        if (backend.listAll === undefined) continue;
        for (const record of snapshots) if (record.type === backend.type) record.attached = true;
        for (const listing of await backend.listAll(owner)) {
          if (held.has(listing.id)) continue;
          elsewhere.set(listing.id, { name: listing.name, attached: listing.attached });
          snapshots.push({
            sessionId: listing.id,
            ...(listing.name === undefined ? {} : { name: listing.name }),
            type: backend.type,
            pid: listing.pid,
            shell: listing.dialect ?? 'bash',
            status: listing.status,
            closing: false,
            attached: listing.attached,
            ...(listing.attached ? { elsewhere: true } : {}),
          });
        }
      }
      if (elsewhere.size === 0) listedElsewhere.delete(owner);
      else listedElsewhere.set(owner, elsewhere);
      return snapshots;
    },

    hasOwnerActivity(owner) {
      for (const record of records.values()) if (record.owner === owner) return true;
      for (const reservation of reservations) if (reservation.owner === owner) return true;
      return false;
    },

    async disposeOwned(owner, reason = 'owner disposed', options = {}) {
      assertOpen();
      const spawning = [...reservations].filter((reservation) => reservation.owner === owner);
      await abortReservations(spawning, new TerminalError('ABORTED', `PTY spawn aborted: ${reason}`));
      listedElsewhere.delete(owner);
      const owned = [...records.values()].filter((record) => record.owner === owner);
      reportFailures(await closeAll(owned, reason, options), `disposing the PTY sessions of ${owner}`);
    },

    async dispose() {
      if (disposed) return;
      disposed = true;
      let failures: unknown[] = [];
      try {
        await abortReservations([...reservations], new TerminalError('ABORTED', 'PTY service disposed'));
        failures = await closeAll([...records.values()], 'PTY service disposed');
      } finally {
        // Cleared whatever happened above: a failed close must not keep a disposed service's
        // registries (and the sessions' proxies) alive.
        backends.clear();
        reservations.clear();
        records.clear();
        listedElsewhere.clear();
      }
      reportFailures(failures, 'disposing the PTY service');
    },
  };
}
