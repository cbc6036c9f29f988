/**
 * The bubblewrap provider against real processes: confined argvs run with child_process for the
 * filesystem and network rules, and under node-pty for the terminal (tty, job control, REPLs, pids).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import * as pty from 'node-pty';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBubblewrapSandbox } from '../../../../dist/main/sandbox/bubblewrap.js';
import { isTerminalError } from '../../../../dist/shared/errors.js';
import type { SandboxPolicy } from '../../../../dist/shared/sandbox.js';
import { bwrapIt } from '../../../support/bwrap.js';
import { hostPidOf, liveTree } from '../../../support/namespace.js';

const itBwrap = bwrapIt('bubblewrap provider');

/** Bound on any wait for a process or a pty: far above the milliseconds these take, far below the test timeout. */
const WAIT_MS = 8_000;

let root: string;
let workspace: string;
let hostTmpDir: string;
let visibleOutside: string;
let listener: net.Server;
let port: number;
const token = `agent-pty-probe-${randomUUID()}`;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'agent-pty-bwrap-'));
  workspace = path.join(root, 'workspace');
  hostTmpDir = path.join(root, 'host-tmp');
  mkdirSync(workspace);
  mkdirSync(hostTmpDir);
  writeFileSync(path.join(hostTmpDir, 'marker'), 'host');
  // A directory outside /tmp, so the sandbox sees it (read-only) instead of the private /tmp hiding it.
  const base = existsSync('/var/tmp') ? '/var/tmp' : homedir();
  visibleOutside = mkdtempSync(path.join(base, 'agent-pty-bwrap-outside-'));
  listener = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as net.AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => listener.close(() => resolve()));
  rmSync(root, { recursive: true, force: true });
  rmSync(visibleOutside, { recursive: true, force: true });
  // Only present if a sandbox failed to stop a write; removed so a failing run leaves no litter.
  for (const leftover of [`/etc/${token}`, path.join(homedir(), token), path.join('/tmp', token)]) {
    rmSync(leftover, { force: true });
  }
});

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs an argv to completion with pipes (no terminal); never rejects. */
function run(argv: string[], env: Record<string, string> = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', (error) => resolve({ code: null, stdout, stderr: `${stderr}${error.message}` }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * One line `name=ok|denied` per check, from inside the sandbox. Names and paths come in through
 * the environment so the script itself stays constant.
 */
const CHECKS: Record<string, string> = {
  workspace: 'echo x > "$WS/$TOKEN"',
  etc: 'echo x > "/etc/$TOKEN"',
  home: 'echo x > "$HOME/$TOKEN"',
  outside: 'echo x > "$OUTSIDE/$TOKEN"',
  tmp: 'echo x > "/tmp/$TOKEN" && test -f "/tmp/$TOKEN"',
  hostTmpVisible: 'test -e "$HOST_TMP/marker"',
  sysctl: 'cat /proc/sys/vm/swappiness > /proc/sys/vm/swappiness',
  nestedUserNamespace: 'unshare --user true',
  network: '/bin/bash -c \'exec 3<>"/dev/tcp/127.0.0.1/$PORT"\'',
};

/** Runs the named checks (default all) in one shell under `argv` and returns `{ check: 'ok' | 'denied' }`. */
async function probe(argv: string[], names = Object.keys(CHECKS)): Promise<Record<string, string>> {
  const script = Object.entries(CHECKS)
    .filter(([name]) => names.includes(name))
    .map(([name, check]) => `if (${check}) 2>/dev/null; then echo ${name}=ok; else echo ${name}=denied; fi`)
    .join('\n');
  const result = await run([...argv, '/bin/sh', '-c', script], {
    WS: workspace,
    TOKEN: token,
    OUTSIDE: visibleOutside,
    HOST_TMP: hostTmpDir,
    PORT: String(port),
  });
  expect(result.code, result.stderr).toBe(0);
  return Object.fromEntries(
    result.stdout
      .trim()
      .split('\n')
      .map((line) => line.split('=')),
  );
}

/** The prefix that confines a command: the provider's argv for an empty command. */
async function confinedPrefix(policy: SandboxPolicy, sandbox = createBubblewrapSandbox()): Promise<string[]> {
  const marker = `/nonexistent/${randomUUID()}`;
  const argv = await sandbox.confine([marker], policy);
  expect(argv.at(-1)).toBe(marker);
  return argv.slice(0, -1);
}

describe('filesystem and network rules', () => {
  itBwrap(
    'workspace-write: only the workspace and a private /tmp and $HOME are writable, no network',
    async () => {
      const result = await probe(await confinedPrefix({ mode: 'workspace-write', workspaceRoot: workspace }));
      expect(result).toEqual({
        workspace: 'ok',
        etc: 'denied',
        home: 'ok', // the private home: gone with the sandbox
        outside: 'denied',
        tmp: 'ok',
        hostTmpVisible: 'denied',
        sysctl: 'denied',
        nestedUserNamespace: 'denied',
        network: 'denied',
      });
      expect(existsSync(path.join(workspace, token))).toBe(true);
      expect(existsSync(path.join('/tmp', token)), 'the sandbox /tmp must be private').toBe(false);
      expect(existsSync(path.join(homedir(), token)), 'the sandbox $HOME must be private').toBe(false);
      rmSync(path.join(workspace, token));
    },
  );

  itBwrap('read-only: the workspace is read-only too; /tmp is writable but private', async () => {
    const result = await probe(await confinedPrefix({ mode: 'read-only', workspaceRoot: workspace }));
    expect(result).toEqual({
      workspace: 'denied',
      etc: 'denied',
      home: 'denied',
      outside: 'denied',
      tmp: 'ok',
      hostTmpVisible: 'denied',
      sysctl: 'denied',
      nestedUserNamespace: 'denied',
      network: 'denied',
    });
    expect(existsSync(path.join('/tmp', token))).toBe(false);
  });

  itBwrap('policy.network re-enables the network and nothing else', async () => {
    const result = await probe(
      await confinedPrefix({ mode: 'read-only', workspaceRoot: workspace, network: true }),
    );
    expect(result).toMatchObject({ network: 'ok', workspace: 'denied', outside: 'denied' });
  });

  itBwrap('policy.readablePaths are readable, not writable, under the private /tmp', async () => {
    const script =
      'cat "$1/marker"; echo; if (echo x > "$1/written") 2>/dev/null; then echo writable; ' +
      'else echo read-only; fi; echo x > /tmp/private && echo tmp-ok';
    for (const mode of ['read-only', 'workspace-write'] as const) {
      const prefix = await confinedPrefix({ mode, workspaceRoot: workspace, readablePaths: [hostTmpDir] });
      const result = await run([...prefix, '/bin/sh', '-c', script, 'sh', hostTmpDir]);
      expect(result.stdout.trim().split('\n'), `${mode}: ${result.stderr}`).toEqual([
        'host',
        'read-only',
        'tmp-ok',
      ]);
    }
    expect(existsSync(path.join(hostTmpDir, 'written'))).toBe(false);
    for (const bad of [['relative/dir'], ['/nonexistent/agent-pty-rc']]) {
      await expect(
        createBubblewrapSandbox().confine(['/bin/true'], {
          mode: 'read-only',
          workspaceRoot: workspace,
          readablePaths: bad,
        }),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
  });

  itBwrap(
    'danger-full-access returns the argv unchanged: workspace, outside and network all work',
    async () => {
      const argv = ['/bin/sh', '-c', 'true'];
      const confined = await createBubblewrapSandbox().confine(argv, {
        mode: 'danger-full-access',
        workspaceRoot: workspace,
      });
      expect(confined).toEqual(argv);
      // Unconfined: only checks that write into the test's own directories (never /etc or $HOME).
      const result = await probe([], ['workspace', 'outside', 'network']);
      expect(result).toEqual({ workspace: 'ok', outside: 'ok', network: 'ok' });
      rmSync(path.join(workspace, token));
      rmSync(path.join(visibleOutside, token));
    },
  );

  itBwrap(
    'a workspace outside /tmp is writable as well (bind order does not depend on location)',
    async () => {
      const result = await probe(
        await confinedPrefix({ mode: 'workspace-write', workspaceRoot: visibleOutside }),
      );
      expect(result).toMatchObject({ outside: 'ok', workspace: 'denied' });
      rmSync(path.join(visibleOutside, token));
    },
  );

  itBwrap('a workspace above /tmp does not cover the private /tmp (parents are mounted first)', async () => {
    const result = await probe(await confinedPrefix({ mode: 'read-only', workspaceRoot: '/' }), [
      'tmp',
      'hostTmpVisible',
      'outside',
    ]);
    expect(result).toEqual({ tmp: 'ok', hostTmpVisible: 'denied', outside: 'denied' });
  });

  itBwrap('extraReadOnlyPaths stay read-only inside a writable workspace', async () => {
    const gitDir = path.join(workspace, '.git');
    mkdirSync(gitDir, { recursive: true });
    const sandbox = createBubblewrapSandbox({ extraReadOnlyPaths: [gitDir, '/does/not/exist'] });
    const prefix = await confinedPrefix({ mode: 'workspace-write', workspaceRoot: workspace }, sandbox);
    const result = await run([
      ...prefix,
      '/bin/sh',
      '-c',
      `cd "${workspace}" && { echo x > .git/HEAD 2>/dev/null; echo git=$?; echo x > file; echo file=$?; }`,
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/git=[1-9]/);
    expect(result.stdout).toContain('file=0');
    expect(existsSync(path.join(gitDir, 'HEAD'))).toBe(false);
  });

  itBwrap('hides /run and other hiddenPaths: unix sockets there cannot be reached', async () => {
    const socketDir = mkdtempSync(path.join(visibleOutside, 'sockets-'));
    const socketPath = path.join(socketDir, 'service.sock');
    const service = net.createServer((socket) => {
      // The client may hang up before reading; its reset is not this test's concern.
      socket.on('error', (_clientHungUp) => {});
      socket.end('hello\n');
    });
    await new Promise<void>((resolve) => service.listen(socketPath, resolve));
    try {
      const connect = [
        'python3',
        '-c',
        'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(5).decode())',
        socketPath,
      ];
      const policy: SandboxPolicy = { mode: 'read-only', workspaceRoot: workspace };
      // Why hiding exists: a read-only mount does not stop connect() to a unix socket.
      const exposed = await run([...(await confinedPrefix(policy)), ...connect]);
      expect(exposed.stdout.trim()).toBe('hello');
      const hidden = await run([
        ...(await confinedPrefix(policy, createBubblewrapSandbox({ hiddenPaths: [socketDir] }))),
        ...connect,
      ]);
      expect(hidden.code).not.toBe(0);
      if (existsSync('/run')) {
        const runListing = await run([...(await confinedPrefix(policy)), '/bin/ls', '-A', '/run']);
        expect(runListing).toMatchObject({ code: 0, stdout: '' });
      }
    } finally {
      await new Promise<void>((resolve) => service.close(() => resolve()));
    }
  });

  itBwrap('own user, IPC, PID and network namespaces, no capabilities', async () => {
    const kinds = ['user', 'ipc', 'net', 'pid', 'mnt'];
    const script = `for ns in ${kinds.join(' ')}; do readlink /proc/self/ns/$ns; done; grep CapEff /proc/self/status`;
    const hostNamespaces = kinds.map((kind) => readlinkSync(`/proc/self/ns/${kind}`));
    for (const network of [false, true]) {
      const prefix = await confinedPrefix({ mode: 'workspace-write', workspaceRoot: workspace, network });
      const result = await run([...prefix, '/bin/sh', '-c', script]);
      const lines = result.stdout.trim().split('\n');
      const same = Object.fromEntries(
        kinds.map((kind, index) => [kind, lines[index] === hostNamespaces[index]]),
      );
      expect(same).toEqual({ user: false, ipc: false, net: network, pid: false, mnt: false });
      expect(lines.at(-1)).toMatch(/^CapEff:\s+0+$/);
    }
  });

  itBwrap('/dev is minimal: no disks, no other terminals', async () => {
    const other = pty.spawn('/bin/sleep', ['30'], { name: 'dumb', cols: 80, rows: 24 });
    const otherExited = new Promise((resolve) => other.onExit(resolve));
    try {
      const otherPts = (other as unknown as { ptsName: string }).ptsName;
      const prefix = await confinedPrefix({ mode: 'workspace-write', workspaceRoot: workspace });
      const result = await run([
        ...prefix,
        '/bin/sh',
        '-c',
        `find /dev -type b | wc -l; test -e "${otherPts}" && echo other-pty-visible; echo done`,
      ]);
      expect(result.stdout.split('\n')).toEqual(['0', 'done', '']);
    } finally {
      other.kill('SIGKILL');
      await otherExited;
    }
  });

  itBwrap(
    'sandboxed processes cannot read the environment of host processes or other sandboxes',
    async () => {
      const prefix = await confinedPrefix({ mode: 'workspace-write', workspaceRoot: workspace });
      const host = await run([...prefix, '/bin/cat', `/proc/${process.pid}/environ`]);
      expect(host).toMatchObject({ stdout: '' });
      expect(host.code).not.toBe(0);

      // A sibling sandbox runs as the same user without capabilities: its pid is not even in our
      // namespace, and the user namespace would refuse the read anyway.
      const sibling = spawn(prefix[0]!, [...prefix.slice(1), '/bin/sh', '-c', 'echo $$; exec sleep 30'], {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...process.env, SIBLING_SECRET: 'hunter2' },
      });
      const siblingExited = new Promise((resolve) => sibling.on('close', resolve));
      try {
        const [firstLine] = await new Promise<string[]>((resolve) =>
          sibling.stdout.once('data', (chunk) => resolve(String(chunk).split('\n'))),
        );
        const siblingHostPid = hostPidOf(sibling.pid!, Number(firstLine));
        const snoop = await run([...prefix, '/bin/cat', `/proc/${siblingHostPid}/environ`]);
        expect(snoop.stdout).not.toContain('hunter2');
        expect(snoop.code).not.toBe(0);
      } finally {
        sibling.kill('SIGKILL');
        await siblingExited;
      }
    },
  );
});

describe('failing closed', () => {
  const policy = (): SandboxPolicy => ({ mode: 'workspace-write', workspaceRoot: workspace });

  it('a missing bwrap rejects every confined mode with SANDBOX_UNAVAILABLE', async () => {
    const sandbox = createBubblewrapSandbox({ bwrapPath: '/nonexistent/bwrap' });
    for (const mode of ['read-only', 'workspace-write'] as const) {
      const error = await sandbox.confine(['/bin/bash'], { mode, workspaceRoot: workspace }).catch((e) => e);
      expect(isTerminalError(error, 'SANDBOX_UNAVAILABLE'), String(error)).toBe(true);
      expect(error.message).toContain('/nonexistent/bwrap');
      expect(error.message).toContain('danger-full-access');
    }
    const unconfined = await sandbox.confine(['/bin/bash'], {
      mode: 'danger-full-access',
      workspaceRoot: workspace,
    });
    expect(unconfined).toEqual(['/bin/bash']);
  });

  it('a bwrap that cannot run here is probed once and rejects with its complaint', async () => {
    const fake = path.join(root, 'broken-bwrap');
    const calls = `${fake}.calls`;
    writeFileSync(
      fake,
      `#!/bin/sh\necho probe >> "${calls}"\necho 'bwrap: No permissions to create a new namespace' >&2\nexit 1\n`,
    );
    chmodSync(fake, 0o755);
    const sandbox = createBubblewrapSandbox({ bwrapPath: fake });
    const outcomes = await Promise.all(
      [1, 2, 3].map(() => sandbox.confine(['/bin/bash'], policy()).catch((e: unknown) => e)),
    );
    const later = await sandbox.confine(['/bin/bash'], policy()).catch((e: unknown) => e);
    for (const error of [...outcomes, later]) {
      expect(isTerminalError(error, 'SANDBOX_UNAVAILABLE'), String(error)).toBe(true);
      expect((error as Error).message).toContain('No permissions to create a new namespace');
    }
    expect(readFileSync(calls, 'utf8')).toBe('probe\n');
  });

  it('rejects a workspace that is relative, missing or not a directory', async () => {
    const sandbox = createBubblewrapSandbox({ bwrapPath: '/nonexistent/bwrap' });
    const file = path.join(root, 'a-file');
    writeFileSync(file, '');
    for (const workspaceRoot of ['relative/dir', path.join(root, 'missing'), file]) {
      const error = await sandbox
        .confine(['/bin/bash'], { mode: 'read-only', workspaceRoot })
        .catch((e) => e);
      expect(isTerminalError(error, 'INVALID_ARGUMENT'), String(error)).toBe(true);
    }
  });

  it('rejects relative option paths at creation', () => {
    expect(() => createBubblewrapSandbox({ extraReadOnlyPaths: ['.git'] })).toThrow(/absolute/);
    expect(() => createBubblewrapSandbox({ hiddenPaths: ['run'] })).toThrow(/absolute/);
    expect(() => createBubblewrapSandbox({ home: 'me' })).toThrow(/home: must hold absolute paths/);
  });

  it('rejects a tmpfsBytes that is not a positive integer', async () => {
    const sandbox = createBubblewrapSandbox({ bwrapPath: '/nonexistent/bwrap' });
    for (const tmpfsBytes of [0, -1, 1.5, Number.NaN, '8M' as unknown as number]) {
      const error = await sandbox.confine(['/bin/bash'], { ...policy(), tmpfsBytes }).catch((e) => e);
      expect(isTerminalError(error, 'INVALID_ARGUMENT'), String(error)).toBe(true);
      expect(error.message).toContain('tmpfsBytes');
    }
  });

  itBwrap('resolves bwrap to an absolute path and ends with "--" then the exact argv', async () => {
    const argv = ['/bin/bash', '--noprofile', '--norc', '-i'];
    const confined = await createBubblewrapSandbox().confine(argv, policy());
    expect(path.isAbsolute(confined[0]!)).toBe(true);
    expect(confined.slice(-argv.length - 1)).toEqual(['--', ...argv]);
    expect(confined).not.toContain('--new-session');
    expect(confined).toContain('--unshare-pid');
    expect(confined).not.toContain('--as-pid-1');
  });
});

/** A confined interactive bash under a real pty, read as one growing string. */
class ConfinedTerminal {
  readonly term: pty.IPty;
  private output = '';
  private readonly waiters = new Set<() => void>();
  readonly exited: Promise<void>;

  constructor(argv: string[]) {
    this.term = pty.spawn(argv[0]!, argv.slice(1), {
      name: 'dumb',
      cols: 120,
      rows: 30,
      cwd: workspace,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: homedir(),
        LANG: 'C.UTF-8',
        TERM: 'dumb',
        PS1: 'SBX> ',
      },
    });
    this.term.onData((data) => {
      this.output += data;
      for (const waiter of this.waiters) waiter();
    });
    this.exited = new Promise((resolve) => this.term.onExit(() => resolve()));
  }

  /** Where the output ends now: pass to {@link expect} to match only what comes after. */
  mark(): number {
    return this.output.length;
  }

  /** Types `text`. */
  type(text: string): void {
    this.term.write(text);
  }

  /** Waits until output after `since` matches `pattern`; rejects with the output after {@link WAIT_MS}. */
  expect(pattern: RegExp, since: number): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const match = this.output.slice(since).match(pattern);
        if (match === null) return false;
        cleanup();
        resolve(match);
        return true;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out waiting for ${pattern}; output:\n${this.output.slice(since)}`));
      }, WAIT_MS);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
      };
      const waiter = (): void => {
        check();
      };
      this.waiters.add(waiter);
      check();
    });
  }

  /** Types a command line and waits for the output it must produce. */
  async command(line: string, pattern: RegExp): Promise<RegExpMatchArray> {
    const since = this.mark();
    this.type(`${line}\r`);
    return this.expect(pattern, since);
  }
}

/** The 8th field of /proc/<pid>/stat: the foreground process group of the process's terminal. */
function foregroundGroupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[5]);
}

/** The parent pid of `pid`. */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/**
 * Waits until the terminal's foreground group is no longer the shell's, i.e. a job owns the terminal
 * (a Ctrl-Z or Ctrl-C typed earlier would hit the shell, which ignores it). The kernel offers no event
 * for this, so it re-reads the state from /proc on a short tick, bounded by {@link WAIT_MS}.
 */
async function jobInForeground(shellPid: number): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (foregroundGroupOf(shellPid) === shellPid) {
    if (Date.now() > deadline) throw new Error('no job took the terminal foreground');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Waits until the host sees the shell blocked in a system call (`/proc/<pid>/syscall` starts with its
 * number instead of `running`): the probe the engine's readiness relies on. The prompt is printed just
 * before the shell blocks, so this re-reads on a short tick, bounded by {@link WAIT_MS}.
 */
async function shellBlocked(shellPid: number): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!/^\d+ /.test(readFileSync(`/proc/${shellPid}/syscall`, 'utf8'))) {
    if (Date.now() > deadline) throw new Error('the host never saw the shell blocked');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('terminal inside the sandbox', () => {
  const open = new Set<ConfinedTerminal>();
  const strays = new Set<number>();

  /** `shellPid` is the shell's host pid; `innerPid` what `$$` prints inside. */
  async function confinedBash(): Promise<{ terminal: ConfinedTerminal; shellPid: number; innerPid: number }> {
    const argv = await createBubblewrapSandbox().confine(['/bin/bash', '--noprofile', '--norc', '-i'], {
      mode: 'workspace-write',
      workspaceRoot: workspace,
    });
    const terminal = new ConfinedTerminal(argv);
    open.add(terminal);
    const [, pid] = await terminal.command('echo SHELL_PID=$$', /SHELL_PID=(\d+)/);
    const innerPid = Number(pid);
    return { terminal, shellPid: hostPidOf(terminal.term.pid, innerPid), innerPid };
  }

  afterEach(async () => {
    for (const pid of strays) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch (_alreadyGone) {
        // The test cleaned up after itself.
      }
    }
    strays.clear();
    const terminals = [...open];
    open.clear();
    for (const terminal of terminals) {
      terminal.term.kill('SIGKILL');
      await terminal.exited;
    }
  });

  itBwrap('python3 REPL reaches >>> and evaluates', async () => {
    const { terminal } = await confinedBash();
    await terminal.command('python3 -q', />>> $/);
    await terminal.command('print(6*7)', /^42\r?\n>>> $/m);
    await terminal.command('exit()', /SBX> $/);
  });

  itBwrap('tty names the session pty (same device as the host side)', async () => {
    const { terminal } = await confinedBash();
    const [, ttyPath] = await terminal.command('tty', /^(\/dev\/\S+)\r?$/m);
    const [, rdev] = await terminal.command(
      `python3 -c "import os; print('RDEV=%d' % os.stat('${ttyPath}').st_rdev)"`,
      /RDEV=(\d+)/,
    );
    const ptsName = (terminal.term as unknown as { ptsName: string }).ptsName;
    expect(Number(rdev)).toBe(statSync(ptsName).rdev);
  });

  itBwrap('job control works: background jobs, Ctrl-Z, fg, Ctrl-C', async () => {
    const { terminal, shellPid } = await confinedBash();
    const [, innerBackground] = await terminal.command('sleep 100 &', /\[1\] (\d+)/);
    const background = hostPidOf(terminal.term.pid, Number(innerBackground));
    strays.add(background);
    await terminal.command('jobs', /\[1\]\+\s+Running\s+sleep 100 &/);

    let since = terminal.mark();
    terminal.type('sleep 101\r');
    await jobInForeground(shellPid);
    terminal.type('\x1a');
    await terminal.expect(/\[2\]\+\s+Stopped\s+sleep 101/, since);
    await terminal.expect(/SBX> $/, since);

    since = terminal.mark();
    terminal.type('fg %2\r');
    await terminal.expect(/sleep 101/, since);
    await jobInForeground(shellPid);
    terminal.type('\x03');
    await terminal.expect(/SBX> $/, since);
    expect(foregroundGroupOf(shellPid)).toBe(shellPid);

    await terminal.command('kill %1; wait %1; echo REAPED=$((1+1))', /REAPED=2/);
    expect(existsSync(`/proc/${background}`)).toBe(false);
  });

  itBwrap('$$ is a namespace pid; its host pid lies below the pty child and /proc probes work', async () => {
    const { terminal, shellPid, innerPid } = await confinedBash();
    // bwrap's init is pid 1 of the namespace; the shell, its first child, is pid 2.
    expect(innerPid).toBe(2);
    expect(shellPid).not.toBe(innerPid);
    expect(liveTree(terminal.term.pid).map((entry) => entry.comm)).toEqual(['bwrap', 'bash']);
    await terminal.command('echo BACK=$((2+3))', /BACK=5\r?\nSBX> $/);
    await shellBlocked(shellPid);
    const ancestors: number[] = [];
    for (let pid = shellPid; pid > 1 && ancestors.length < 8; pid = parentOf(pid)) ancestors.push(pid);
    expect(ancestors).toContain(terminal.term.pid);
    // What the readiness probes read: the foreground group, and the syscall the shell is blocked in.
    expect(foregroundGroupOf(shellPid)).toBe(shellPid);
    expect(statSync(`/proc/${shellPid}/fd/0`).rdev).toBe(
      statSync((terminal.term as unknown as { ptsName: string }).ptsName).rdev,
    );
  });
});
