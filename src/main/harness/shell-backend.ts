/**
 * The `shell` backend: opens interactive shells through the engine under the owner's sandbox policy.
 * The policy is resolved once per spawn (mode and workspace root; the root is the default cwd) and is
 * fixed for the terminal's life. Each spawn holds a fence on its owner from before the policy is read
 * until the session is closed, so the owner's effective mode cannot change under a live terminal.
 *
 * A spawn may name an execution world (SPEC §10): the shell then starts there, under the same mode, in
 * the world's workspace root (a path on the far side, so a relative cwd is resolved without looking
 * at this machine's files; the far engine checks that it exists).
 */
import { statSync } from 'node:fs';
import { isAbsolute, posix, resolve } from 'node:path';
import { isTerminalError, TerminalError } from '../../shared/errors.js';
import type { PtyEngine, ReattachReport, SessionListing, TerminalSession } from '../../shared/types.js';
import { LOCAL_WORLD, type WorldRegistry } from '../worlds/world-registry.js';
import type { PtyBackend } from './pty-service.js';
import type { SandboxFence, SandboxPolicyService } from './sandbox-policy.js';

/** What the backend needs. */
export interface ShellBackendOptions {
  /** Backend type it registers as (the plugin's configured type, default `shell`). */
  type: string;
  /** Engine that runs the shells on this machine. */
  engine: PtyEngine;
  /** Execution worlds a spawn may name (none when omitted). */
  worlds?: WorldRegistry;
  /** Policy resolved at every spawn. */
  sandboxPolicy: SandboxPolicyService;
}

/** Creates the backend. */
export function createShellBackend({ type, engine, worlds, sandboxPolicy }: ShellBackendOptions): PtyBackend {
  const daemon = isDaemonEngine(engine) ? engine : undefined;
  return {
    type,
    ...(daemon === undefined
      ? {}
      : {
          listAll: () => daemon.list(),
          async reattach({ owner, name }, signal) {
            signal.throwIfAborted();
            const detached = (await daemon.list()).find(
              (listing) => !listing.attached && (listing.name === name || listing.id === name),
            );
            if (detached === undefined) return undefined;
            const fence = sandboxPolicy.fence(owner);
            try {
              const session = await daemon.attach({ id: detached.id });
              return {
                session: releasingOnClose(session, fence),
                report: session.reattach ?? { missedLines: 0 },
              };
            } catch (error) {
              fence.release();
              throw error;
            }
          },
        }),
    async spawn({ owner, name, cwd, world, shell, rows, cols, record }, signal) {
      const far = world !== undefined && world !== LOCAL_WORLD;
      if (far && worlds === undefined) {
        throw new TerminalError('INVALID_ARGUMENT', `unknown world "${world}"; no worlds are configured`);
      }
      const farRoot = far ? worlds!.definition(world).workspaceRoot : undefined;
      // Taken synchronously when the service calls spawn (inside its reservation), before the policy
      // is read: a mode change either commits before this line and is what we resolve, or is fenced.
      const fence = sandboxPolicy.fence(owner);
      try {
        const policy = sandboxPolicy.resolve({ session: owner });
        const selection = farRoot === undefined ? policy : { ...policy, workspaceRoot: farRoot };
        const target = far ? await worlds!.engine(world) : engine;
        const session = await target.spawn(
          {
            cwd: far
              ? posix.resolve(selection.workspaceRoot, cwd ?? '.')
              : resolveCwd(cwd, selection.workspaceRoot, selection.mode !== 'danger-full-access'),
            ...(name === undefined ? {} : { name }),
            ...(shell === undefined ? {} : { dialect: shell }),
            ...(rows === undefined ? {} : { rows }),
            ...(cols === undefined ? {} : { cols }),
            ...(record === true ? { record: true as const } : {}),
            sandbox: selection,
          },
          signal,
        );
        return releasingOnClose(session, fence);
      } catch (error) {
        // When even the cleanup of the unpublished shell failed, a process started under this mode
        // may still run: keep the owner fenced rather than let it outlive a downgrade.
        if (!isTerminalError(error, 'CLEANUP_FAILED')) fence.release();
        throw error;
      }
    },
  };
}

/**
 * The cwd to start in: the workspace root by default; a relative path resolves against the root. A
 * confined cwd is checked by the sandbox, which refuses a hidden one and a missing one alike.
 */
function resolveCwd(cwd: string | undefined, workspaceRoot: string, confined: boolean): string {
  if (cwd === undefined) return workspaceRoot;
  const dir = isAbsolute(cwd) ? cwd : resolve(workspaceRoot, cwd);
  if (!confined && !statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      `cwd ${dir} is not an existing directory; pass an existing directory, or omit cwd to start in ${workspaceRoot}`,
    );
  }
  return dir;
}

/** An engine whose sessions outlive their clients (the daemon's, SPEC §12). */
interface DaemonEngine extends PtyEngine {
  attach(target: {
    id: string;
  }): Promise<TerminalSession & { readonly reattach: ReattachReport | undefined }>;
  list(): Promise<SessionListing[]>;
}

function isDaemonEngine(engine: PtyEngine): engine is DaemonEngine {
  return typeof (engine as Partial<DaemonEngine>).attach === 'function';
}

/** The session, with a close that drops the fence once the process tree is gone. */
function releasingOnClose(session: TerminalSession, fence: SandboxFence): TerminalSession {
  return {
    id: session.id,
    name: session.name,
    pid: session.pid,
    motd: session.motd,
    sandbox: session.sandbox,
    dialect: session.dialect,
    startSend: (request) => session.startSend(request),
    read: (request) => session.read(request),
    signal: (signal) => session.signal(signal),
    status: () => session.status(),
    resize: (size) => session.resize(size),
    onOutput: (listener) => session.onOutput(listener),
    openRaw: (listener) => session.openRaw(listener),
    snapshot: () => session.snapshot(),
    takeKeyboard: (options) => session.takeKeyboard(options),
    async close(reason, options) {
      // Released only after a successful close: a failed close may leave processes of this mode.
      const outcome = await session.close(reason, options);
      fence.release();
      return outcome;
    },
  };
}
