/**
 * Every session of the daemon by id, and who may see which (SPEC §12). A client sees only the
 * sessions of its own scope — the same sandbox mode and workspace root as its policy, or unconfined
 * for a client without one — and any other id or name answers `UNKNOWN_SESSION` in the very words a
 * missing one does, so a client learns nothing of other scopes. Names are unique per scope (the engine
 * is not told them: another scope's name must not be refused as taken, which would reveal it).
 */
import { randomBytes } from 'node:crypto';
import { TerminalError } from '../../shared/errors.js';
import type { PtyEngine, SandboxMode, SessionListing, SpawnOptions } from '../../shared/types.js';
import type { WatchedListing } from '../../shared/world-protocol.js';
import { type Attachment, DaemonSession } from './daemon-session.js';

/** A client's policy: the sessions it may see and spawn. */
export type ClientScope = { mode: SandboxMode; workspaceRoot: string } | undefined;

/** Ids read `pty-<8 hex chars of this daemon>-<counter>`: a name of this shape is refused. */
const ID_SHAPE = /^pty-[0-9a-f]{8}-[0-9]+$/;

/** Longest part of an unknown id or name that an error message repeats. */
const MAX_ECHOED_CHARS = 64;

/** The key of a scope: sessions and clients of equal keys see each other. */
export function scopeKey(scope: ClientScope): string {
  return scope === undefined ? 'unconfined' : `${scope.mode}:${scope.workspaceRoot}`;
}

/** The daemon's sessions. */
export class SessionDirectory {
  private readonly sessions = new Map<string, DaemonSession>();
  /** Names of spawns in progress, per scope. */
  private readonly starting = new Map<string, Set<string>>();
  /** This daemon's id prefix: random, so ids of one daemon never repeat those of an earlier one. */
  private readonly prefix = `pty-${randomBytes(4).toString('hex')}-`;
  private next = 1;

  constructor(
    private readonly engine: PtyEngine,
    private readonly detachedTtlMs: number,
  ) {}

  /** Every session (for `--status` and shutdown). */
  all(): DaemonSession[] {
    return [...this.sessions.values()];
  }

  /** The listings a client of `scope` may see. */
  list(scope: ClientScope): Promise<SessionListing[]> {
    const key = scopeKey(scope);
    return Promise.all(
      this.all()
        .filter((session) => session.scope === key)
        .map((session) => session.listing()),
    );
  }

  /**
   * Every session of every scope, each with its workspace: what a watcher connection lists (the
   * person at their own machine, not a model's client; docs/watch.md).
   */
  listForWatcher(): Promise<WatchedListing[]> {
    return Promise.all(
      this.all().map(async (session) => {
        const workspaceRoot = session.session.sandbox?.workspaceRoot;
        return {
          ...(await session.listing()),
          ...(workspaceRoot === undefined ? {} : { workspaceRoot }),
        };
      }),
    );
  }

  /** The session `id` of any scope, for a watcher; a missing one is `UNKNOWN_SESSION`. */
  findForWatcher(id: unknown): DaemonSession {
    const found = typeof id === 'string' ? this.sessions.get(id) : undefined;
    if (found === undefined) return this.find(undefined, { id: String(id) }); // throws, worded as always
    return found;
  }

  /** The session `target` names in `scope`; another scope's answers exactly like a missing one. */
  find(scope: ClientScope, target: { id?: unknown; name?: unknown }): DaemonSession {
    const key = scopeKey(scope);
    const found =
      typeof target.id === 'string'
        ? this.sessions.get(target.id)
        : typeof target.name === 'string'
          ? this.all().find((session) => session.name === target.name && session.scope === key)
          : undefined;
    if (found === undefined || found.scope !== key) {
      const asked = typeof target.id === 'string' ? target.id : String(target.name);
      const shown =
        asked.length > MAX_ECHOED_CHARS
          ? `${asked.slice(0, MAX_ECHOED_CHARS)}… (${asked.length} characters)`
          : asked;
      throw new TerminalError('UNKNOWN_SESSION', `unknown session ${shown}`);
    }
    return found;
  }

  /**
   * Spawns a session for `client` of `scope`. The spawn runs under the scope's sandbox (a client
   * cannot open a session it could not see); a name must be free in the scope and not look like an id.
   */
  async spawn(
    client: Attachment,
    scope: ClientScope,
    options: SpawnOptions,
    signal: AbortSignal,
  ): Promise<DaemonSession> {
    const key = scopeKey(scope);
    const asked = options.sandbox;
    if (
      (asked === undefined) !== (scope === undefined) ||
      (asked !== undefined && (asked.mode !== scope!.mode || asked.workspaceRoot !== scope!.workspaceRoot))
    ) {
      throw new TerminalError(
        'INVALID_ARGUMENT',
        `this client's sessions run ${scope === undefined ? 'unconfined' : `in sandbox mode ${scope.mode} with workspace ${scope.workspaceRoot}`}; spawn without another sandbox`,
      );
    }
    const { name, ...engineOptions } = options;
    if (name !== undefined) this.assertNameFree(key, name);
    const names = this.starting.get(key) ?? new Set<string>();
    this.starting.set(key, names);
    if (name !== undefined) names.add(name);
    try {
      const session = await this.engine.spawn(engineOptions, signal);
      const id = `${this.prefix}${this.next++}`;
      const held = new DaemonSession(id, name, key, session, client, this.detachedTtlMs, (gone) =>
        this.sessions.delete(gone.id),
      );
      this.sessions.set(id, held);
      return held;
    } finally {
      if (name !== undefined) names.delete(name);
      if (names.size === 0) this.starting.delete(key);
    }
  }

  private assertNameFree(key: string, name: string): void {
    if (typeof name !== 'string' || name === '') {
      throw new TerminalError('INVALID_ARGUMENT', 'name must be a non-empty string');
    }
    if (ID_SHAPE.test(name)) {
      throw new TerminalError(
        'INVALID_ARGUMENT',
        `name "${name}" looks like a session id (pty-…-N); pick a name that does not`,
      );
    }
    const taken =
      this.starting.get(key)?.has(name) === true ||
      this.all().some((session) => session.scope === key && session.name === name);
    if (taken) {
      throw new TerminalError(
        'NAME_TAKEN',
        `a session named "${name}" is already open and attached (to this connection or another)`,
      );
    }
  }
}
