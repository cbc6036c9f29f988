/**
 * A private OpenSSH server on 127.0.0.1, for the worlds benchmark and the SSH tests
 * (test/support/sshd.ts; types in sshd.d.mts): its own host key, an authorized client key and a config
 * in a temporary directory, on a free port. It runs as a daemon (re-parented away from its starter, so
 * a test's leak check does not count it); `stop()` ends it and resolves once it is gone.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

const SSHD = '/usr/sbin/sshd';
/** sshd refuses to start without its privilege separation directory (Debian creates it at boot). */
const PRIVSEP_DIR = '/run/sshd';
/** A daemon that has not written its pid file by then did not start. */
const START_TIMEOUT_MS = 10_000;

/** True when this machine can run the SSH path (sshd, ssh and ssh-keygen installed). */
export function sshAvailable() {
  try {
    execFileSync('sh', ['-c', 'command -v ssh && command -v ssh-keygen'], { stdio: 'ignore' });
    return existsSync(SSHD);
  } catch {
    return false;
  }
}

/** Starts the daemon; resolves with `{ pid, port, ssh(...remote) → argv, stop() }` once it listens. */
export async function startSshd() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-sshd-'));
  const hostKey = join(dir, 'host_key');
  const clientKey = join(dir, 'client_key');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', clientKey]);
  const authorizedKeys = join(dir, 'authorized_keys');
  writeFileSync(authorizedKeys, readFileSync(`${clientKey}.pub`));
  chmodSync(authorizedKeys, 0o600);
  const port = await freePort();
  const pidFile = join(dir, 'sshd.pid');
  const config = join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKey}`,
      `AuthorizedKeysFile ${authorizedKeys}`,
      `PidFile ${pidFile}`,
      'StrictModes no', // the temporary directory's permissions are not sshd's business here
      'UsePAM no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'PrintMotd no',
    ].join('\n'),
  );
  if (!existsSync(PRIVSEP_DIR)) mkdirSync(PRIVSEP_DIR, { mode: 0o755, recursive: true });
  execFileSync(SSHD, ['-f', config, '-E', join(dir, 'sshd.log')]);
  // sshd binds its port before it daemonizes and writes the pid file: once the file exists, it listens.
  const startedBy = Date.now() + START_TIMEOUT_MS;
  while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') {
    if (Date.now() > startedBy) throw new Error(`sshd did not start within ${START_TIMEOUT_MS} ms`);
    await delay(10);
  }
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  const options = ['-p', String(port), '-i', clientKey, '-o', 'StrictHostKeyChecking=no'];
  options.push('-o', 'UserKnownHostsFile=/dev/null', '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR');
  return {
    pid,
    port,
    ssh: (...remote) => ['ssh', ...options, '127.0.0.1', ...remote],
    async stop() {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
      while (existsSync(`/proc/${pid}`)) await delay(10);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
