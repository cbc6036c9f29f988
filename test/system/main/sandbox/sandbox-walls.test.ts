/**
 * The walls of a confined session (SPEC §4.1, docs/sandbox.md), through the public engine API with a
 * real bwrap: its own PID namespace (nothing outside is visible or can be signalled, and the whole
 * namespace dies with the host, even a SIGKILLed one), `tmpfsBytes`-capped `/tmp` and `/dev/shm`, a
 * read-only `/dev`, a private home with none of the credential stores, no cgroupfs and its own cgroup
 * namespace, and the terminal (job control, Ctrl-Z, cancel) still working with the engine translating
 * namespace pids to host pids. Also: a SIGKILLed host leaves nothing of an unconfined session where
 * cgroups exist (the reaper, SPEC §4.6).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import {
  type Dirent,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect } from 'vitest';
import { createBubblewrapSandbox } from '../../../../dist/main/sandbox/bubblewrap.js';
import { bwrapIt } from '../../../support/bwrap.js';
import {
  type EngineOptions,
  isAlive,
  type TerminalSendResult,
  type TerminalSession,
  testEngine,
} from '../../../support/engine.js';
import { liveTree, sameNamespace, sleepsWithArgument } from '../../../support/namespace.js';
import { until } from '../../../support/until.js';

/** The parent of host process `pid`, from /proc. */
function parentOf(pid: number): number {
  return Number(/^PPid:\s*(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
}

const itBwrap = bwrapIt('sandbox walls');

/** One provider for the file (its availability probe runs once); the home is the real one. */
const sandbox = createBubblewrapSandbox();
/** Short grace: nothing here needs a long one. */
const ENGINE: EngineOptions = { sandbox, disposeGraceMs: 300 };
/** Bound on waiting for processes to appear or vanish (milliseconds in practice). */
const WAIT_MS = 8_000;
/** A small cap, so filling it is quick. */
const SMALL_TMPFS_BYTES = 8 * 1024 * 1024;
/** More than {@link SMALL_TMPFS_BYTES}: writing this much must fail. */
const OVERFILL_BYTES = SMALL_TMPFS_BYTES + 1024 * 1024;
/** The stores SPEC §4.1 names, each created in the test home: directories end with `/`. */
const STORES = [
  '.ssh/',
  '.aws/',
  '.azure/',
  '.config/gcloud/',
  '.kube/',
  '.docker/',
  '.gnupg/',
  '.netrc',
  '.npmrc',
  '.pypirc',
  '.git-credentials',
  '.config/gh/',
];
/** Content of every planted secret (7 bytes). */
const SECRET = 'hunter2';

let root: string;
let workspace: string;
let home: string;
/** Processes a failing test may have left on the host (found by a unique argument), killed after it. */
const sleepArguments = new Set<string>();
const hosts = new Set<HostProcess>();

beforeEach(() => {
  // Outside /tmp, so the sandbox sees them instead of its private /tmp.
  const base = existsSync('/var/tmp') ? '/var/tmp' : homedir();
  root = mkdtempSync(path.join(base, 'sandbox-walls-'));
  workspace = path.join(root, 'workspace');
  home = path.join(root, 'home');
  mkdirSync(workspace);
  mkdirSync(home);
  for (const store of STORES) {
    const target = path.join(home, store);
    if (store.endsWith('/')) {
      mkdirSync(target, { recursive: true });
      writeFileSync(path.join(target, 'secret'), SECRET);
    } else {
      writeFileSync(target, SECRET);
    }
  }
  writeFileSync(path.join(home, '.profile'), SECRET); // not a credential store: stays visible
});

afterEach(async () => {
  for (const host of hosts) await host.kill();
  hosts.clear();
  for (const argument of sleepArguments) {
    for (const pid of sleepsWithArgument(argument)) process.kill(pid, 'SIGKILL');
  }
  sleepArguments.clear();
  rmSync(root, { recursive: true, force: true });
});

/** Sends `text` and expects proven readiness. */
async function run(session: TerminalSession, text: string): Promise<TerminalSendResult> {
  const result = await session.startSend({ text }).done;
  expect(result.waitReason, result.viewport).toBe('stdin_read');
  return result;
}

/** The number a whole output line `name-<n>` carries (typed text never ends a line that way). */
function numberOn(result: TerminalSendResult, name: string): number {
  const match = new RegExp(`^${name}-(\\d+)\\s*$`, 'm').exec(result.viewport);
  if (match === null) throw new Error(`no ${name}-<n> line in:\n${result.viewport}`);
  return Number(match[1]);
}

/** The cgroup directories of engine process `pid` (`agent-pty.<pid>.<start>`) on any cgroup mount. */
function cgroupDirsOf(pid: number): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // removed while walking
    }
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      const child = path.join(dir, entry.name);
      if (entry.name.startsWith(`agent-pty.${pid}.`)) found.push(child);
      else if (depth < 8) walk(child, depth + 1);
    }
  };
  walk('/sys/fs/cgroup', 0);
  return found;
}

/** A `sleep` argument no other process on the host has, registered for cleanup. */
function uniqueSleepArgument(): string {
  const argument = String(randomInt(900_000_000, 999_999_999));
  sleepArguments.add(argument);
  return argument;
}

/** A child node process running test/fixtures/sandbox-host.mjs: an engine with one confined session. */
class HostProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  private readonly lines: string[] = [];
  private wake: (() => void) | undefined;
  private gone = false;

  constructor(sleepArgument: string, mode = 'workspace-write') {
    const fixture = path.join(import.meta.dirname, '../../../fixtures/sandbox-host.mjs');
    this.child = spawn(process.execPath, [fixture, workspace, sleepArgument, mode], {
      env: { ...process.env, HOME: home },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.exited = new Promise((resolve) => this.child.on('exit', () => resolve()));
    void this.exited.then(() => {
      this.gone = true;
      this.wake?.();
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      this.lines.push(line);
      this.wake?.();
    });
    hosts.add(this);
  }

  /** The next JSON line it writes; rejects if it exits first. */
  async next<T>(): Promise<T> {
    while (this.lines.length === 0) {
      if (this.gone) throw new Error('the host process exited');
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
    return JSON.parse(this.lines.shift()!) as T;
  }

  /** Sends a line to its session and returns the result. */
  send(text: string): Promise<{ viewport: string; waitReason: string }> {
    this.child.stdin!.write(`${text}\n`);
    return this.next();
  }

  /** SIGKILL (if still running), then waits for the exit. */
  async kill(): Promise<void> {
    if (!this.gone) this.child.kill('SIGKILL');
    await this.exited;
  }
}

describe('its own PID namespace', () => {
  itBwrap('ps inside lists only the session: the processes the host sees in its namespace', async () => {
    const engine = await testEngine(ENGINE);
    const session = await engine.spawn({ sandbox: { mode: 'workspace-write', workspaceRoot: workspace } });
    const sleeper = uniqueSleepArgument();
    const result = await run(
      session,
      `sleep ${sleeper} & sleep ${sleeper} & ps -e -o pid= > /tmp/ps; echo procs-$(( $(wc -l < /tmp/ps) ))`,
    );
    const namespace = sameNamespace(session.pid); // session.pid is the shell's
    // bwrap's init, the shell and the two sleeps; ps itself was there too when it listed.
    expect(namespace.map((entry) => entry.comm).sort()).toEqual(['bash', 'bwrap', 'sleep', 'sleep']);
    expect(numberOn(result, 'procs')).toBe(namespace.length + 1);
    await session.close();
  });

  itBwrap('a command inside can neither see nor signal the engine', async () => {
    const engine = await testEngine(ENGINE);
    const session = await engine.spawn({ sandbox: { mode: 'read-only', workspaceRoot: workspace } });
    const result = await run(
      session,
      `kill -0 ${process.pid} 2>/dev/null; echo signal-$((100+$?)); test -e /proc/${process.pid}; echo visible-$((100+$?))`,
    );
    expect(numberOn(result, 'signal')).toBe(101);
    expect(numberOn(result, 'visible')).toBe(101);
    expect(isAlive(process.pid)).toBe(true);
    await session.close();
  });

  itBwrap('a SIGKILLed host leaves no process of its confined session behind', async () => {
    const sleeper = uniqueSleepArgument();
    const host = new HostProcess(sleeper);
    const { sessionPid } = await host.next<{ sessionPid: number }>();
    // The prompt can come back before the forked child has exec'd sleep.
    await until('the background sleep', () => sleepsWithArgument(sleeper).length === 1, WAIT_MS);
    expect(liveTree(sessionPid).length).toBeGreaterThan(0);
    await host.kill();
    await until(
      'every process of the session to die',
      () => sleepsWithArgument(sleeper).length === 0,
      WAIT_MS,
    );
    await until('the launcher to die', () => !isAlive(sessionPid), WAIT_MS);
  });

  itBwrap(
    'a SIGKILLed host leaves no process of a danger-full-access session behind where cgroups exist',
    async () => {
      const sleeper = uniqueSleepArgument();
      const daemon = uniqueSleepArgument();
      const host = new HostProcess(sleeper, 'danger-full-access');
      const { containment } = await host.next<{ containment: string }>();
      if (containment !== 'cgroup') return; // no cgroup here: only the kernel's SIGHUP on pty close remains
      // Immune to the pty's hangup, and a daemon in a session of its own: neither is in the shell's tree.
      await host.send(`setsid nohup sleep ${daemon} >/dev/null 2>&1 &`);
      await until(
        'both sleeps',
        () => sleepsWithArgument(sleeper).length + sleepsWithArgument(daemon).length === 2,
        WAIT_MS,
      );
      await host.kill();
      await until(
        'every process of the unconfined session to die',
        () => sleepsWithArgument(sleeper).length + sleepsWithArgument(daemon).length === 0,
        WAIT_MS,
      );
      // The reaper also removed the dead host's cgroups: no successor had to sweep them.
      await until(
        'the dead host’s cgroups to be removed',
        () => cgroupDirsOf(host.child.pid!).length === 0,
        WAIT_MS,
      );
    },
  );

  itBwrap('the `kill -9 $(ps -o ppid= -p $PPID)` escape does not reach the host', async () => {
    const sleeper = uniqueSleepArgument();
    const host = new HostProcess(sleeper);
    const { hostPid } = await host.next<{ hostPid: number }>();
    // Unconfined (or without a PID namespace) this names the engine's process: the shell's parent's parent.
    const attempt = await host.send('(kill -9 $(ps -o ppid= -p $PPID)); echo after-$((40+2))');
    expect(attempt.viewport.split('\n').map((line) => line.trim())).toContain('after-42');
    const direct = await host.send(`kill -9 ${hostPid} 2>/dev/null; echo direct-$((100+$?))`);
    expect(direct.viewport.split('\n').map((line) => line.trim())).toContain('direct-101');
    expect(isAlive(hostPid)).toBe(true);
    await until('the background sleep', () => sleepsWithArgument(sleeper).length === 1, WAIT_MS);
    // Killed from outside after all: still nothing left.
    await host.kill();
    await until(
      'every process of the session to die',
      () => sleepsWithArgument(sleeper).length === 0,
      WAIT_MS,
    );
  });

  itBwrap('close does not wait out disposeGraceMs for the namespace init, and leaves nothing', async () => {
    const disposeGraceMs = 5_000;
    const engine = await testEngine({ ...ENGINE, disposeGraceMs });
    const session = await engine.spawn({ sandbox: { mode: 'read-only', workspaceRoot: workspace } });
    const sleeper = uniqueSleepArgument();
    await run(session, `sleep ${sleeper} &`);
    await until('the background sleep', () => sleepsWithArgument(sleeper).length === 1, WAIT_MS);
    const launcher = parentOf(session.pid); // bwrap: the pty child, above the shell
    const tree = liveTree(launcher);
    const started = performance.now();
    await session.close();
    // bwrap's init ignores SIGTERM from outside (the kernel shields a namespace's init); SIGKILL ends it.
    expect(performance.now() - started).toBeLessThan(disposeGraceMs / 2);
    expect([launcher, ...tree.map((entry) => entry.pid)].filter(isAlive)).toEqual([]);
  });

  itBwrap('job control, Ctrl-Z (SIGTSTP), fg and cancel work inside', async () => {
    const engine = await testEngine(ENGINE);
    const session = await engine.spawn({ sandbox: { mode: 'workspace-write', workspaceRoot: workspace } });
    await run(session, 'sleep 5 &');
    expect((await run(session, 'jobs')).viewport).toMatch(/^\[1\]\+\s+Running\s+sleep 5 &\s*$/m);

    const sleeper = uniqueSleepArgument();
    const running = session.startSend({ text: `sleep ${sleeper}` });
    const [sleepPid] = await until('the foreground sleep', () => {
      const found = sleepsWithArgument(sleeper);
      return found.length === 1 && foregroundGroup(session.pid) === pgrpOf(found[0]!) && found;
    });
    session.signal('SIGTSTP');
    const stopped = await running.done;
    expect(stopped.waitReason).toBe('stdin_read');
    expect(stopped.exitCode).toBe(128 + 20); // stopped by SIGTSTP
    expect((await run(session, 'jobs')).viewport).toMatch(
      new RegExp(`^\\[2\\]\\+\\s+Stopped\\s+sleep ${sleeper}\\s*$`, 'm'),
    );

    const resumed = session.startSend({ text: 'fg %2' });
    await until('the sleep back in the foreground', () => foregroundGroup(session.pid) === pgrpOf(sleepPid!));
    await resumed.cancel();
    const cancelled = await resumed.done;
    expect(cancelled.waitReason).toBe('stdin_read');
    expect(cancelled.exitCode).toBe(130);
    expect(isAlive(sleepPid!)).toBe(false);
    await session.close();
  });
});

/** Field 8 of `/proc/<pid>/stat`: the foreground process group of its terminal (host pids). */
function foregroundGroup(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[5]);
}

/** Field 5 of `/proc/<pid>/stat`: the process group. */
function pgrpOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

describe('capped tmpfs and a read-only /dev', () => {
  itBwrap('writing more than tmpfsBytes into /tmp or /dev/shm fails inside (ENOSPC)', async () => {
    const engine = await testEngine({ ...ENGINE, tmpfsBytes: SMALL_TMPFS_BYTES });
    const session = await engine.spawn({ sandbox: { mode: 'read-only', workspaceRoot: workspace } });
    for (const dir of ['/tmp', '/dev/shm']) {
      const result = await run(
        session,
        `head -c ${OVERFILL_BYTES} /dev/zero > ${dir}/fill 2>/dev/null; echo write-$((100+$?)); echo size-$(stat -c %s ${dir}/fill)`,
      );
      expect(numberOn(result, 'write'), dir).toBe(101);
      expect(numberOn(result, 'size'), dir).toBeLessThanOrEqual(SMALL_TMPFS_BYTES);
      expect(numberOn(result, 'size'), dir).toBeGreaterThan(SMALL_TMPFS_BYTES / 2);
    }
    await session.close();
    await expect(testEngine({ tmpfsBytes: 0 })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('tmpfsBytes'),
    });
  });

  itBwrap('/dev is read-only; /dev/null, the terminal and /dev/shm still work', async () => {
    const engine = await testEngine(ENGINE);
    const session = await engine.spawn({ sandbox: { mode: 'workspace-write', workspaceRoot: workspace } });
    const result = await run(
      session,
      [
        'echo x > /dev/junk; echo junk-$((100+$?))',
        'mkdir /dev/dir; echo mkdir-$((100+$?))',
        'echo x > /dev/null; echo null-$((100+$?))',
        'echo x > "$(tty)"; echo tty-$((100+$?))',
        'echo x > /dev/shm/f; echo shm-$((100+$?))',
      ].join('; '),
    );
    expect(['junk', 'mkdir', 'null', 'tty', 'shm'].map((name) => numberOn(result, name))).toEqual([
      101, 101, 100, 100, 100,
    ]);
    await session.close();
  });
});

describe('credential stores under $HOME', () => {
  /**
   * Writes a script that prints `store <path> <what is there>` for each store and the control: the
   * number of entries of a directory, the bytes of a file, `missing` when nothing is there, `writable`
   * when a file could be created inside.
   */
  function storeReport(): string {
    const script = path.join(workspace, 'stores.sh');
    const lines = [...STORES.map((store) => store.replace(/\/$/, '')), '.profile'].map(
      (store) =>
        `p="$1/${store}"; if [ -d "$p" ]; then n=$(ls -A "$p" | wc -l); ` +
        `elif [ -e "$p" ]; then n=$(wc -c < "$p" 2>/dev/null) || n=unreadable; else n=missing; fi; ` +
        `touch "$p/new" 2>/dev/null && n=writable; echo "store ${store} $n"`,
    );
    writeFileSync(script, `${lines.join('\n')}\n`);
    return script;
  }

  /** `{ store: entries or bytes }` from the report's whole output lines. */
  function parseReport(viewport: string): Record<string, string> {
    return Object.fromEntries(
      [...viewport.matchAll(/^store (\S+) (\d+|unreadable|missing|writable)\s*$/gm)].map((match) => [
        match[1],
        match[2],
      ]),
    );
  }

  /** Deny by default: the private home holds none of them, nor any other file of the real home. */
  const hidden = Object.fromEntries(
    [...STORES.map((store) => store.replace(/\/$/, '')), '.profile'].map((store) => [store, 'missing']),
  );

  itBwrap('no store is there (the home is private); nor are the other files of the home', async () => {
    const script = storeReport();
    const engine = await testEngine({ ...ENGINE, sandbox: createBubblewrapSandbox({ home }) });
    for (const mode of ['read-only', 'workspace-write'] as const) {
      const session = await engine.spawn({ sandbox: { mode, workspaceRoot: workspace } });
      const result = await run(session, `sh ${script} ${home}`);
      expect(parseReport(result.viewport), mode).toEqual(hidden);
      await session.close();
    }
    // Control: unconfined, the same report sees every planted secret (and the store directories
    // are writable, as the host's are).
    const session = await engine.spawn({ sandbox: { mode: 'danger-full-access', workspaceRoot: workspace } });
    const visible = parseReport((await run(session, `sh ${script} ${home}`)).viewport);
    expect(visible).toEqual(
      Object.fromEntries(
        Object.keys(hidden).map((store) => [
          store,
          STORES.includes(`${store}/`) ? 'writable' : String(SECRET.length),
        ]),
      ),
    );
    await session.close();
  });

  itBwrap('by default the home is the engine process’s $HOME', async () => {
    const script = storeReport();
    const host = new HostProcess(uniqueSleepArgument());
    await host.next();
    const result = await host.send(`sh ${script} "$HOME"`);
    expect(result.waitReason).toBe('stdin_read');
    expect(parseReport(result.viewport)).toEqual(hidden);
    host.child.stdin!.end();
    await host.exited;
  });
});

describe('cgroupfs', () => {
  itBwrap(
    'shows nothing of the host: /sys/fs/cgroup is empty and /proc/self/cgroup names only the namespace root',
    async () => {
      // The engine's own cgroup directory, as the host sees it (when the engine could make one).
      const engine = await testEngine(ENGINE);
      for (const mode of ['read-only', 'workspace-write'] as const) {
        const session = await engine.spawn({ sandbox: { mode, workspaceRoot: workspace } });
        const result = await run(
          session,
          [
            'echo entries-$(ls -A /sys/fs/cgroup 2>/dev/null | wc -l)',
            "echo engine-dirs-$(find /sys/fs/cgroup -maxdepth 3 -name 'agent-pty*' 2>/dev/null | wc -l)",
            "echo foreign-$(grep -vc ':/$' /proc/self/cgroup)",
            'echo lines-$(grep -c . /proc/self/cgroup)',
          ].join('; '),
        );
        expect(numberOn(result, 'entries'), mode).toBe(0);
        expect(numberOn(result, 'engine-dirs'), mode).toBe(0);
        // Every hierarchy's path is `/`: the session's own cgroup is the root of its namespace.
        expect(numberOn(result, 'foreign'), `${mode}: ${result.viewport}`).toBe(0);
        expect(numberOn(result, 'lines'), mode).toBeGreaterThan(0);
        // Seen from the host, the shell is still in its session cgroup (teardown reads it from there).
        const hostView = readFileSync(`/proc/${session.pid}/cgroup`, 'utf8'); // session.pid is the shell's
        const unified = hostView.split('\n').find((line) => line.startsWith('0::'));
        if (unified !== undefined && (await session.status()).containment === 'pid-namespace+cgroup') {
          expect(unified).toMatch(/\/agent-pty\.\d+\.\d+\/engine-[0-9a-f]+\/session-/);
        }
        await session.close();
      }
    },
  );
});
