/**
 * A private OpenSSH server on 127.0.0.1 for the worlds benchmark: its own host key, client key and
 * config in a temporary directory, daemonized, ended by `stop()`. (The tests have the same helper in
 * TypeScript: test/support/sshd.ts.)
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

const SSHD = '/usr/sbin/sshd';
/** sshd refuses to start without its privilege separation directory. */
const PRIVSEP_DIR = '/run/sshd';

/** True when this machine can run the SSH path (sshd, ssh and ssh-keygen installed). */
export function sshAvailable() {
  try {
    execFileSync('sh', ['-c', 'command -v ssh && command -v ssh-keygen'], { stdio: 'ignore' });
    return existsSync(SSHD);
  } catch {
    return false;
  }
}

/** Starts the daemon; resolves with `{ ssh(...remote) → argv, stop() }` once it listens. */
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
      'StrictModes no',
      'UsePAM no',
      'PasswordAuthentication no',
      'PermitRootLogin prohibit-password',
      'PrintMotd no',
    ].join('\n'),
  );
  if (!existsSync(PRIVSEP_DIR)) mkdirSync(PRIVSEP_DIR, { mode: 0o755, recursive: true });
  execFileSync(SSHD, ['-f', config, '-E', join(dir, 'sshd.log')]);
  // sshd binds its port before it daemonizes and writes the pid file.
  while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim() === '') await delay(10);
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  const options = ['-p', String(port), '-i', clientKey, '-o', 'StrictHostKeyChecking=no'];
  options.push('-o', 'UserKnownHostsFile=/dev/null', '-o', 'BatchMode=yes', '-o', 'LogLevel=ERROR');
  return {
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
