/**
 * The exclusive lock under which a daemon decides that a socket is stale and replaces it (SPEC §12).
 *
 * It is a Linux abstract Unix socket named after the socket path: binding a name is atomic, and the
 * kernel releases it the moment its holder dies, however it dies — no lock file outlives a crash, so
 * there is no stale lock to break (the race that breaking one would bring). The abstract namespace has
 * no permissions: another uid could bind the name first and so keep the daemon from starting (it can
 * never capture the socket, which lives in the owner's 0700 directory); the refusal names the lock.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:net';

/** A held lock. */
export interface StartLock {
  /** Releases it (idempotent). */
  release(): Promise<void>;
}

/** The lock's abstract name (`\0`-prefixed; at most 108 bytes, so the path is hashed). */
export function startLockName(socketPath: string, uid: number): string {
  const digest = createHash('sha256').update(socketPath).digest('hex').slice(0, 32);
  return `\0agent-pty-daemon-${uid}-${digest}`;
}

/** Takes the lock, or resolves undefined when another process holds it. */
export function tryStartLock(socketPath: string, uid: number): Promise<StartLock | undefined> {
  return new Promise((resolve, reject) => {
    const server: Server = createServer((connection) => connection.destroy());
    // One-shot, and it ends with the lock's server (it also keeps a held lock's later error handled).
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') resolve(undefined);
      else reject(error);
    });
    server.listen(startLockName(socketPath, uid), () => {
      server.unref(); // a held lock never keeps a process alive by itself
      let released: Promise<void> | undefined;
      resolve({
        release: () => {
          released ??= new Promise<void>((done) => server.close(() => done()));
          return released;
        },
      });
    });
  });
}
