/**
 * `agent-pty daemon` (SPEC §12): one engine per user that outlives its clients, serving the engine
 * protocol of §10 on a Unix socket. Startup order, each step guarding the next:
 *
 * 1. the socket's directory is created 0700 if missing and checked (`lstat`: a real directory of this
 *    uid, 0700 — socket-directory.ts says why that is what protects the socket);
 * 2. the start lock is taken (start-lock.ts): only its holder may decide the socket is stale;
 * 3. a daemon answering on the socket means this one refuses; a socket nobody answers (connection
 *    refused) is stale and is removed;
 * 4. the socket is created under umask 077 (mode 0600), then the lock is released — a later daemon
 *    finds this one answering.
 *
 * Configuration comes from the daemon's own flags and `--config` file only; a client's hello never
 * changes it. When the daemon stops (`--stop`, SIGTERM), every session closes; when it is killed,
 * the engine's containment (SPEC §4.6) kills them, and clients see `TRANSPORT_CLOSED`.
 */
import { lstatSync, readFileSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { type EngineConfigInput, resolveEngineConfig } from '../../shared/config.js';
import { describeError, TerminalError } from '../../shared/errors.js';
import { DisposableStore } from '../../shared/lifecycle.js';
import type { PtyEngine } from '../../shared/types.js';
import {
  type DaemonStatus,
  type ServerFrame,
  toWireError,
  WORLD_PROTOCOL,
} from '../../shared/world-protocol.js';
import { createPtyEngine } from '../engine/engine.js';
import { createBubblewrapSandbox } from '../sandbox/bubblewrap.js';
import { currentUid, prepareSocketDirectory } from '../worlds/socket-directory.js';
import { DaemonConnection, type DaemonHost } from './daemon-connection.js';
import { checkPeer } from './peer-credentials.js';
import { SessionDirectory } from './session-directory.js';
import { tryStartLock } from './start-lock.js';

/** How long a probe of an existing socket may take before it counts as not answering. */
const PROBE_TIMEOUT_MS = 2_000;

/** Options of {@link startDaemon}. */
export interface DaemonOptions {
  /** The socket to listen on. */
  socketPath: string;
  /** Engine configuration (SPEC §3), from the daemon's flags and `--config` file. */
  config?: EngineConfigInput;
  /** Where diagnostics go (the daemon's stderr or log file). */
  log?: (line: string) => void;
  /** Creates the engine (default: the real engine with the bubblewrap sandbox). */
  createEngine?: (config: EngineConfigInput) => Promise<PtyEngine>;
}

/** A listening daemon. */
export interface RunningDaemon {
  readonly socketPath: string;
  /** Resolves with the reason once the daemon stopped and every session is closed. */
  readonly stopped: Promise<string>;
  /** Stops it: no new clients, every session closed, the socket removed. Idempotent. */
  stop(reason: string): Promise<string>;
}

/** The agent-pty version (the package's). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/** Reads a `--config` file: a JSON object of engine options (SPEC §3), validated at load. */
export function readDaemonConfig(file: string): EngineConfigInput {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new TerminalError(
      'INVALID_CONFIG',
      `cannot read the daemon config ${file}: ${describeError(error)}`,
    );
  }
  resolveEngineConfig(parsed, `daemon config ${file}`); // refuses naming the field and the rule
  return parsed as EngineConfigInput;
}

/** Starts a daemon on `socketPath`; rejects (nothing left behind) when another one serves it. */
export async function startDaemon(options: DaemonOptions): Promise<RunningDaemon> {
  const log = options.log ?? ((line: string) => process.stderr.write(`agent-pty daemon: ${line}\n`));
  const uid = currentUid();
  const config = resolveEngineConfig(options.config ?? {}, 'daemon config');
  prepareSocketDirectory(options.socketPath, uid);
  const lock = await tryStartLock(options.socketPath, uid);
  if (lock === undefined) {
    throw new TerminalError(
      'INVALID_CONFIG',
      `another agent-pty daemon is starting on ${options.socketPath} (it holds the start lock); use that one`,
    );
  }
  let server: Server;
  try {
    await removeStaleSocket(options.socketPath);
    server = await listenPrivately(options.socketPath);
  } finally {
    await lock.release();
  }
  // Clients may connect from here on (a probe already counts the daemon live), while the engine is
  // still being created: without a listener Node drops those connections unanswered, and their
  // client would wait out its whole handshake bound. They wait here and are served once it is up.
  // Attached before any await: no connection event can be handled before this continuation runs.
  const early: Socket[] = [];
  const holdEarly = (socket: Socket) => {
    socket.on('error', (reported: unknown) => void reported); // a client gone meanwhile: its link says so later
    early.push(socket);
  };
  const holding = new DisposableStore();
  holding.listen('daemon early connection listener', server, 'connection', holdEarly);
  const socketInode = lstatSync(options.socketPath).ino;
  let engine: PtyEngine;
  try {
    engine = await (options.createEngine ?? defaultEngine)(options.config ?? {});
  } catch (error) {
    holding.dispose();
    for (const socket of early) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    unlinkIfOurs(options.socketPath, socketInode);
    throw error;
  }
  holding.dispose();
  const daemon = new Daemon(options.socketPath, socketInode, server, engine, config.detachedTtlMs, log);
  for (const socket of early) daemon.accept(socket);
  return daemon;
}

function defaultEngine(config: EngineConfigInput): Promise<PtyEngine> {
  return createPtyEngine({ ...config, sandbox: createBubblewrapSandbox() });
}

/** Refuses a socket a daemon answers on; removes one nobody answers on (stale). */
async function removeStaleSocket(socketPath: string): Promise<void> {
  const answer = await probe(socketPath);
  if (answer === 'absent') return;
  if (answer === 'live') {
    throw new TerminalError(
      'INVALID_CONFIG',
      `an agent-pty daemon already listens on ${socketPath}; stop it first (agent-pty daemon --stop), or pass another --socket`,
    );
  }
  const stat = lstatSync(socketPath);
  if (!stat.isSocket()) {
    throw new TerminalError(
      'INVALID_CONFIG',
      `${socketPath} exists and is not a socket; remove it or pass another --socket`,
    );
  }
  unlinkSync(socketPath);
}

/** Whether a daemon answers on `socketPath`: connecting succeeds (live), is refused (stale) or finds nothing. */
export function probe(socketPath: string): Promise<'live' | 'stale' | 'absent'> {
  return new Promise((resolve) => {
    const socket: Socket = connect(socketPath);
    const wait = new DisposableStore();
    const finish = (answer: 'live' | 'stale' | 'absent') => {
      wait.dispose();
      socket.destroy();
      resolve(answer);
    };
    wait.timeout('daemon probe timeout', PROBE_TIMEOUT_MS, () => finish('live')); // accepted but slow: someone is there
    // One-shot, and they end with the socket, which `finish` destroys.
    socket.once('connect', () => finish('live'));
    socket.once('error', (error: NodeJS.ErrnoException) =>
      finish(error.code === 'ENOENT' ? 'absent' : 'stale'),
    );
  });
}

/** Listens on `socketPath`, created under umask 077 so only the owner may connect (mode 0600). */
function listenPrivately(socketPath: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    // The umask is the process's: set only around bind, which is where the socket file is created.
    const previous = process.umask(0o077);
    // Lives until the server's first error: it is the only error listener of a listening server too,
    // which a later error must find (else it would be unhandled and end the daemon).
    server.once('error', (error) => {
      process.umask(previous);
      reject(new TerminalError('INVALID_CONFIG', `cannot listen on ${socketPath}: ${describeError(error)}`));
    });
    server.listen(socketPath, () => {
      process.umask(previous);
      resolve(server);
    });
  });
}

/** Removes the socket file only if it is still the one this daemon created. */
function unlinkIfOurs(socketPath: string, inode: number): void {
  try {
    if (lstatSync(socketPath).ino === inode) unlinkSync(socketPath);
  } catch (alreadyGone) {
    void alreadyGone;
  }
}

class Daemon implements RunningDaemon, DaemonHost {
  readonly directory: SessionDirectory;
  private readonly connections = new Set<DaemonConnection>();
  /** The server's connection listener; disposed once the server has closed. */
  private readonly owned = new DisposableStore();
  private stopping: Promise<string> | undefined;
  private markStopped!: (reason: string) => void;
  readonly stopped = new Promise<string>((resolve) => {
    this.markStopped = resolve;
  });

  constructor(
    readonly socketPath: string,
    private readonly socketInode: number,
    private readonly server: Server,
    private readonly engine: PtyEngine,
    detachedTtlMs: number,
    readonly log: (line: string) => void,
  ) {
    this.directory = new SessionDirectory(engine, detachedTtlMs);
    const onConnection = (socket: Socket) => this.accept(socket);
    this.owned.listen('daemon connection listener', server, 'connection', onConnection);
    log(`listening on ${socketPath} (pid ${process.pid})`);
  }

  /** Serves a client's connection: its peer checked first, nothing once the daemon is stopping. */
  accept(socket: Socket): void {
    if (this.stopping !== undefined) {
      socket.destroy();
      return;
    }
    const peer = checkPeer(socket, currentUid());
    if (!peer.admitted) {
      this.refusePeer(socket, peer.why);
      return;
    }
    const connection = new DaemonConnection(socket, this, (ended) => this.connections.delete(ended));
    this.connections.add(connection);
  }

  /** A connection from a process that is not the daemon's user: told why, then closed, nothing served. */
  private refusePeer(socket: Socket, why: string): void {
    this.log(`refused a connection: ${why}`);
    const refusal: ServerFrame = {
      t: 'fatal',
      error: toWireError(new TerminalError('TRANSPORT_CLOSED', `the daemon refused this connection: ${why}`)),
    };
    socket.on('error', (reported: unknown) => void reported); // a peer gone already: nothing to tell
    socket.end(`${JSON.stringify(refusal)}\n`);
  }

  async status(): Promise<DaemonStatus> {
    const sessions = await Promise.all(
      this.directory.all().map(async (held) => ({ ...(await held.listing()), scope: held.scope })),
    );
    return {
      pid: process.pid,
      version: packageVersion(),
      protocol: WORLD_PROTOCOL,
      socket: this.socketPath,
      sessions,
    };
  }

  stop(reason: string): Promise<string> {
    this.stopping ??= (async () => {
      this.log(`stopping: ${reason}; closing every session`);
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      unlinkIfOurs(this.socketPath, this.socketInode);
      let outcome = reason;
      try {
        await this.engine.close();
      } catch (error) {
        outcome = `${reason}; closing sessions failed: ${describeError(error)}`;
      }
      for (const held of this.directory.all()) held.forget('the daemon stopped');
      for (const connection of [...this.connections]) connection.close();
      await closed;
      this.owned.dispose();
      this.markStopped(outcome);
      return outcome;
    })();
    return this.stopping;
  }
}
