/**
 * A private OpenSSH server for tests: its own host key, an authorized client key and a config in a
 * temporary directory, listening on 127.0.0.1 on a free port. It runs as a daemon (re-parented away
 * from the test process, so the per-test leak check does not count it); `stop()` ends it.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive } from './engine.js';
import { until } from './until.js';

const SSHD = '/usr/sbin/sshd';
/** sshd refuses to start without its privilege separation directory (Debian creates it at boot). */
const PRIVSEP_DIR = '/run/sshd';

/** A running test sshd. */
export interface TestSshd {
  /** Pid of the listening daemon. */
  pid: number;
  /** Its port on 127.0.0.1. */
  port: number;
  /** An ssh argv that runs `remote` on it non-interactively (no host key prompts, no agent). */
  ssh(...remote: string[]): string[];
  /** Ends the daemon and removes its directory; resolves once it is gone. */
  stop(): Promise<void>;
}

/** Starts a daemon; resolves once it accepts connections. */
export async function startTestSshd(): Promise<TestSshd> {
  const dir = mkdtempSync(join(tmpdir(), 'test-sshd-'));
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
  execFileSync(SSHD, ['-f', config, '-E', join(dir, 'sshd.log')]); // daemonizes, then returns
  // sshd binds its port before it daemonizes and writes the pid file: once the file exists, it listens.
  const pid = await until('sshd to write its pid file', () => {
    const text = existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim() : '';
    return text === '' ? undefined : Number(text);
  });
  const options = [
    '-p',
    String(port),
    '-i',
    clientKey,
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    '-o',
    'BatchMode=yes',
    '-o',
    'LogLevel=ERROR',
  ];
  return {
    pid,
    port,
    ssh: (...remote) => ['ssh', ...options, '127.0.0.1', ...remote],
    async stop() {
      if (isAlive(pid)) process.kill(pid, 'SIGTERM');
      await until('sshd to exit', () => !isAlive(pid));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A port that was free a moment ago (sshd binds it right after). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}
