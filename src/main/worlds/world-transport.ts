/**
 * What carries a world's link (SPEC §10, §12): a transport command's pipes (`ssh host agent-pty serve
 * --stdio`) or a connection to the daemon's Unix socket. The client only needs the two streams, to
 * hear when the transport ended, and a way to end it — gracefully (`finish`) or at once (`abort`).
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { describeError, TerminalError } from '../../shared/errors.js';
import { withinMs } from '../../shared/lifecycle.js';

/** Timing of a transport's end. */
export const TRANSPORT_END_TIMING = {
  /**
   * After the link ended, the command gets this long to exit on its own (the local server closes its
   * sessions first; ssh and kubectl just disconnect) before it is sent SIGTERM.
   */
  EXIT_WAIT_MS: 10_000,
  /** After SIGTERM, this long before SIGKILL: a transport that ignores SIGTERM must still go. */
  KILL_WAIT_MS: 2_000,
  /** A socket whose peer does not close its side within this after ours is destroyed. */
  SOCKET_CLOSE_MS: 2_000,
} as const;

/** Bytes of the command's stderr kept for error messages: its last lines say why a link failed. */
const STDERR_TAIL_BYTES = 2_048;

/** One transport of a world's link. */
export interface WorldTransport {
  /** Frames from the server. */
  readonly input: Readable;
  /** Frames to the server. */
  readonly output: Writable;
  /** Calls `listener` once when the transport ended on its own (the command exited, the socket closed). */
  onEnded(listener: (error: TerminalError) => void): void;
  /** The transport's last diagnostics (a command's stderr tail), or ''. */
  stderr(): string;
  /** Ends it after the link closed: waits for the far side to go, then forces it. Idempotent. */
  finish(): Promise<void>;
  /** Ends it now (the link died; a hung far side would not end on its own). */
  abort(): void;
  /** Whether it may keep the process alive (a call pending, output subscribed). */
  setRef(wanted: boolean): void;
}

type TransportProcess = ChildProcessByStdio<Writable, Readable, Readable>;

/** Starts `argv` with piped stdio (the host's environment plus `env`). */
export function startCommandTransport(argv: readonly string[], env?: Record<string, string>): WorldTransport {
  const [file, ...args] = argv;
  const child: TransportProcess = spawn(file!, args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stderrTail = '';
  let ended: ((error: TerminalError) => void) | undefined;
  let endedWith: TerminalError | undefined;
  const end = (error: TerminalError) => {
    endedWith ??= error;
    ended?.(endedWith);
  };
  let markExited!: () => void;
  const exited = new Promise<void>((resolve) => {
    markExited = resolve;
  });
  // These live as long as the child and its stderr pipe, which `finish` destroys; 'exit' and 'error'
  // are one-shot besides.
  child.once('exit', (code, signal) => {
    const status = signal === null ? `exited with code ${code}` : `was killed by ${signal}`;
    end(new TerminalError('TRANSPORT_CLOSED', `the transport command ${status}`));
    markExited();
  });
  child.once('error', (error) => {
    end(
      new TerminalError('TRANSPORT_CLOSED', `could not run the transport command: ${describeError(error)}`, {
        cause: error,
      }),
    );
    // A command that never started emits no 'exit': nothing is left to wait for.
    if (child.pid === undefined) markExited();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  const exitWithin = async (ms: number): Promise<boolean> =>
    (await withinMs(
      'transport command exit wait',
      exited.then(() => true),
      ms,
    )) === true;
  let finishing: Promise<void> | undefined;
  return {
    input: child.stdout,
    output: child.stdin,
    onEnded(listener) {
      ended = listener;
      if (endedWith !== undefined) listener(endedWith);
    },
    stderr: () => stderrTail.trim(),
    finish() {
      finishing ??= (async () => {
        if (running()) {
          child.ref(); // whoever awaits this waits for the exit: nothing may be left running
          if (!(await exitWithin(TRANSPORT_END_TIMING.EXIT_WAIT_MS))) {
            child.kill('SIGTERM');
            if (!(await exitWithin(TRANSPORT_END_TIMING.KILL_WAIT_MS))) child.kill('SIGKILL');
          }
        }
        await exited;
        // The exit event can precede the end of the pipes; they are released here either way.
        child.stdout.destroy();
        child.stderr.destroy();
        child.stdin.destroy();
      })();
      return finishing;
    },
    abort() {
      if (running()) child.kill('SIGTERM');
    },
    setRef(wanted) {
      const pipes = [child.stdout, child.stderr, child.stdin] as unknown as Socket[];
      if (wanted) {
        child.ref();
        pipes[0]!.ref();
      } else {
        child.unref();
        for (const pipe of pipes) pipe.unref();
      }
    },
  };
}

/** A connected socket as a transport (the daemon's, SPEC §12). */
export function socketTransport(socket: Socket): WorldTransport {
  let closed = false;
  // Both live as long as the socket, which `finish` and `abort` destroy ('close' is one-shot besides).
  const gone = new Promise<void>((resolve) => {
    socket.once('close', () => {
      closed = true;
      resolve();
    });
  });
  // The link reports the socket's end and errors (it listens on both streams); this only has to end it.
  socket.on('error', (reported: unknown) => void reported);
  let finishing: Promise<void> | undefined;
  return {
    input: socket,
    output: socket,
    onEnded: () => undefined,
    stderr: () => '',
    finish() {
      finishing ??= (async () => {
        if (!closed) {
          socket.ref();
          socket.end();
          await withinMs('transport socket close wait', gone, TRANSPORT_END_TIMING.SOCKET_CLOSE_MS);
        }
        socket.destroy();
        await gone;
      })();
      return finishing;
    },
    abort() {
      socket.destroy();
    },
    setRef(wanted) {
      if (wanted) socket.ref();
      else socket.unref();
    },
  };
}
