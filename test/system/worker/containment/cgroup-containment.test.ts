/**
 * Containment (SPEC §4.6 "Containment first", docs/teardown.md): where the engine can create a cgroup
 * v2, each session lives in its own, and close kills the cgroup as a whole — so processes that left
 * the pty child's tree AND its POSIX session (a daemon started in a SIGTERM trap during teardown,
 * `setsid nohup`, a double fork into a new session, a re-forking chain) die with the session, which
 * process-tree teardown cannot promise. Checked with real processes in every mode available
 * (unconfined; confined under bubblewrap), by scanning the host's /proc for unique numbers on command
 * lines. Also: status().containment, the cgroup directory is removed, a dead predecessor's cgroup is
 * swept when an engine starts, the launcher's join contract, and the fallback where no cgroup can be
 * made (config `cgroupRoot` pointing at a directory that is not a cgroup).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBubblewrapSandbox } from '../../../../dist/main/sandbox/bubblewrap.js';
import { launcherArgv } from '../../../../dist/worker/containment/cgroup-launcher.js';
import { HAS_BWRAP } from '../../../support/bwrap.js';
import {
  type EngineOptions,
  type SandboxSelection,
  type TerminalSendResult,
  type TerminalSession,
  testEngine,
  testingEngine,
} from '../../../support/engine.js';
import { until } from '../../../support/until.js';

/** This process's own cgroup v2 directory (mount from mountinfo + `0::` path), as the engine finds it. */
function ownCgroupDir(): string | undefined {
  const own = readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .find((line) => line.startsWith('0::'))
    ?.slice(3);
  if (own === undefined) return undefined;
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const fields = line.split(' ');
    const separator = fields.indexOf('-');
    if (separator > 0 && fields[separator + 1] === 'cgroup2' && fields[3] === '/') {
      return path.join(fields[4]!, own);
    }
  }
  return undefined;
}

/** Whether this machine lets us create cgroups where the engine would (root, or a delegated subtree). */
function cgroupUsable(home: string | undefined): home is string {
  if (home === undefined) return false;
  try {
    accessSync(path.join(home, 'cgroup.procs'), constants.W_OK);
    accessSync(home, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

const CGROUP_HOME = ownCgroupDir();
const HAS_CGROUP = cgroupUsable(CGROUP_HOME);
if (!HAS_CGROUP) console.warn('no writable cgroup v2 here: SKIPPING the cgroup containment tests');
const itCgroup = it.skipIf(!HAS_CGROUP);
const itCgroupBwrap = it.skipIf(!HAS_CGROUP || !HAS_BWRAP);

/** Short grace: long enough for the trap job to run its trap (it waits for its `sleep 0.2`). */
const ENGINE: EngineOptions = { disposeGraceMs: 600 };
/** Bound on a process state change seen through /proc. */
const WAIT_MS = 8_000;
/** After the close, how long a re-forking chain would need to show it is still going. */
const AFTERLIFE_MS = 400;

let workspace: string;

beforeEach(() => {
  workspace = mkdtempSync(path.join(tmpdir(), 'cgroup-containment-'));
});

afterEach(() => {
  rmSync(workspace, { recursive: true, force: true });
});

/** Live processes whose command line contains `marker` (zombies have an empty one). */
function processesWith(marker: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      continue;
    }
    if (cmdline.includes(marker)) found.push(`${name}: ${cmdline.trim()}`);
  }
  return found;
}

/** The cgroup directory of `pid`, from its `0::` line. */
function cgroupOf(pid: number): string {
  const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('0::'));
  return path.join(CGROUP_HOME!, line!.slice(3));
}

async function run(session: TerminalSession, text: string): Promise<TerminalSendResult> {
  const result = await session.startSend({ text }).done;
  expect(result.waitReason, result.viewport).toBe('stdin_read');
  return result;
}

/**
 * Starts every escape artist of the brief in `session`, tagged `<base>.<tag>` so two modes never see
 * each other's processes, and waits until each is running. Returns the markers.
 */
async function startEscapees(session: TerminalSession, tag: string): Promise<string[]> {
  const trap = `77812.${tag}`;
  const daemon = `77813.${tag}`;
  const doubleFork = `77814.${tag}`;
  const chain = `77815.${tag}`;
  // Daemonizes only when teardown's SIGTERM arrives: new session, re-parented to init.
  await run(session, `bash -c 'trap "setsid sleep ${trap} & exit" TERM; while :; do sleep 0.2; done' &`);
  await run(session, `setsid nohup sleep ${daemon} >/dev/null 2>&1 &`);
  // Double fork: the middle process exits at once, the grandchild is in a new session under init.
  await run(session, `sh -c 'setsid sh -c "sleep ${doubleFork} & exit" & exit'`);
  // 200 steps, each forking the next and exiting (the pid keeps changing), in a session of its own.
  await run(
    session,
    `setsid bash -c ': ${chain}; f() { [ "$1" -ge 200 ] && exec sleep ${chain}; sleep 0.03; f $(( $1 + 1 )) & }; f 0' >/dev/null 2>&1 &`,
  );
  for (const marker of [trap, daemon, doubleFork, chain]) {
    await until(`${marker} running`, () => processesWith(marker).length > 0, WAIT_MS);
  }
  return [trap, daemon, doubleFork, chain];
}

/** Asserts that nothing carrying one of `markers` is alive now, nor comes back shortly after. */
async function expectAllDead(markers: string[]): Promise<void> {
  const survivors = () => markers.flatMap(processesWith);
  // Killed before close resolved: at most the reaping of zombies by init may lag.
  await until('escapees gone', () => survivors().length === 0, 1_000).catch(() => undefined);
  expect(survivors()).toEqual([]);
  await new Promise((resolve) => setTimeout(resolve, AFTERLIFE_MS));
  expect(survivors(), 'a re-forking chain came back after close').toEqual([]);
}

/** Kills whatever a failing run left, so one failure does not cascade into the leak checks. */
function killMarked(markers: string[]): void {
  for (const entry of markers.flatMap(processesWith)) {
    try {
      process.kill(Number(entry.split(':')[0]), 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

describe('a session in its own cgroup: everything it started dies with close', () => {
  const modes: {
    name: string;
    tag: string;
    sandbox: boolean;
    containment: string;
    available: ReturnType<typeof it.skipIf>;
  }[] = [
    { name: 'unconfined', tag: '1', sandbox: false, containment: 'cgroup', available: itCgroup },
    {
      name: 'confined (bubblewrap workspace-write)',
      tag: '2',
      sandbox: true,
      containment: 'pid-namespace+cgroup',
      available: itCgroupBwrap,
    },
  ];
  for (const mode of modes) {
    mode.available(
      `${mode.name}: trap daemon, setsid nohup, double fork, re-fork chain; cgroup removed`,
      async () => {
        const engine = await testEngine({
          ...ENGINE,
          ...(mode.sandbox ? { sandbox: createBubblewrapSandbox() } : {}),
        });
        const selection: SandboxSelection | undefined = mode.sandbox
          ? { mode: 'workspace-write', workspaceRoot: workspace }
          : undefined;
        const session = await engine.spawn({ cwd: workspace, ...(selection ? { sandbox: selection } : {}) });
        let markers: string[] = [];
        try {
          expect(await session.status()).toMatchObject({ kind: 'running', containment: mode.containment });
          const dir = cgroupOf(session.pid);
          expect(path.basename(path.dirname(dir))).toMatch(/^engine-[0-9a-f]+$/);
          expect(path.basename(path.dirname(path.dirname(dir)))).toMatch(
            new RegExp(`^agent-pty\\.${process.pid}\\.\\d+$`),
          );
          expect(path.basename(dir)).toMatch(/^session-/);
          markers = await startEscapees(session, mode.tag);
          // Every one of them is in the session's cgroup, whatever its session or parent.
          for (const marker of markers) {
            for (const entry of processesWith(marker)) {
              const pid = Number(entry.split(':')[0]);
              // A step of the re-forking chain may exit between the scan and this read.
              let own: string;
              try {
                own = cgroupOf(pid);
              } catch {
                continue; // gone meanwhile
              }
              expect(own).toBe(dir);
            }
          }
          const outcome = await session.close();
          expect(outcome.status).toMatchObject({ kind: 'exited', containment: mode.containment });
          await expectAllDead(markers);
          expect(existsSync(dir), 'the session cgroup is removed').toBe(false);
        } finally {
          killMarked(markers);
        }
      },
      30_000,
    );
  }

  itCgroup('a shell that exits on its own takes its daemons along; close removes the cgroup', async () => {
    const engine = await testEngine(ENGINE);
    const session = await engine.spawn({ cwd: workspace });
    const dir = cgroupOf(session.pid);
    const marker = '77818.1';
    try {
      await run(session, `setsid nohup sleep ${marker} >/dev/null 2>&1 &`);
      await until('daemon running', () => processesWith(marker).length > 0, WAIT_MS);
      const exit = await session.startSend({ text: 'exit 4' }).done;
      expect(exit.sessionStatus).toMatchObject({
        kind: 'exited',
        exitCode: 4,
        signal: null,
        containment: 'cgroup',
      });
      await until('daemon gone', () => processesWith(marker).length === 0, WAIT_MS);
      await session.close();
      expect(existsSync(dir)).toBe(false);
    } finally {
      killMarked([marker]);
    }
  });
});

describe('stale cgroups of a dead engine process are swept at engine start', () => {
  let sleeper: ChildProcess | undefined;
  const created: string[] = [];

  afterEach(() => {
    sleeper?.kill('SIGKILL');
    sleeper = undefined;
    const dirs = created.splice(0).reverse(); // children first
    for (const dir of dirs) {
      try {
        writeFileSync(path.join(dir, 'cgroup.kill'), '1');
      } catch {
        // already gone
      }
    }
    for (const dir of dirs) {
      try {
        rmdirSync(dir);
      } catch {
        // already gone (the point of the test) or busy for a moment
      }
    }
  });

  itCgroup(
    'a dead owner’s cgroup and the process in it are killed and removed; a live owner’s stays',
    async () => {
      // pid_max itself is never handed out: an owner with that pid is certainly dead.
      const deadPid = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
      const stale = path.join(CGROUP_HOME!, `agent-pty.${deadPid}.12345`);
      const staleSession = path.join(stale, 'session-1-t1');
      // A live owner (this test process, under another start time it never had: a pid reused by us).
      const selfStart = Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ')[19]);
      const live = path.join(CGROUP_HOME!, `agent-pty.${process.pid}.${selfStart}`);
      const liveKeep = path.join(live, 'keep-test');
      for (const dir of [stale, staleSession]) {
        mkdirSync(dir);
        created.push(dir);
      }
      mkdirSync(live, { recursive: true });
      mkdirSync(liveKeep);
      created.push(live, liveKeep);

      const stray = spawn('sleep', ['77816'], { stdio: 'ignore' });
      sleeper = stray;
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        stray.once('exit', (_code, signal) => resolve(signal)),
      );
      writeFileSync(path.join(staleSession, 'cgroup.procs'), String(stray.pid));
      expect(cgroupOf(stray.pid!)).toBe(staleSession);

      await testEngine(ENGINE);
      await until('stale cgroup swept', () => !existsSync(stale), WAIT_MS);
      expect(await exited).toBe('SIGKILL');
      expect(existsSync(liveKeep), 'a live engine’s directory is never touched').toBe(true);
    },
  );
});

describe('the launcher joins the cgroup before it runs the argv', () => {
  /** Runs `argv` under the launcher of a cgroup at `dir`; resolves with its exit code, stdout and pid. */
  function launch(
    dir: string,
    argv: string[],
  ): Promise<{ code: number | null; stdout: string; pid: number }> {
    const [file, ...args] = launcherArgv([path.join(dir, 'cgroup.procs')], argv);
    return new Promise((resolve) => {
      const child = execFile(file!, args, (error, stdout) => {
        resolve({ code: error === null ? 0 : (error.code as number), stdout, pid: child.pid! });
      });
    });
  }

  itCgroup('the exec’d argv keeps the launcher’s pid and runs inside the cgroup', async () => {
    const dir = path.join(CGROUP_HOME!, `agent-pty-launch-test.${process.pid}`);
    mkdirSync(dir);
    try {
      const result = await launch(dir, ['/bin/sh', '-c', 'echo pid=$$; cat /proc/self/cgroup']);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`pid=${result.pid}\n`);
      const own = result.stdout.split('\n').find((line) => line.startsWith('0::'));
      expect(path.join(CGROUP_HOME!, own!.slice(3))).toBe(dir);
    } finally {
      rmdirSync(dir);
    }
  });

  it('a failed join exits 125 and never runs the argv', async () => {
    const result = await launch(path.join(workspace, 'not-a-cgroup'), ['/bin/sh', '-c', 'echo ran-$((6*7))']);
    expect(result.code).toBe(125);
    expect(result.stdout).not.toContain('ran-42');
  });
});

describe('a launcher that cannot join its cgroup never runs the shell', () => {
  let root: string | undefined;

  afterEach(() => {
    if (root === undefined) return;
    // Children first: the engine directory's keeper and any session cgroup, then the engine dirs.
    const removeTree = (dir: string): void => {
      for (const child of readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory())) {
        removeTree(path.join(dir, child.name));
      }
      rmdirSync(dir);
    };
    removeTree(root);
    root = undefined;
  });

  itCgroup('a session cgroup that cannot be joined fails the spawn with CONTAINMENT_FAILED', async () => {
    root = path.join(CGROUP_HOME!, `agent-pty-test-join.${process.pid}`);
    mkdirSync(root);
    const engine = await testEngine({ ...ENGINE, cgroupRoot: root });
    const first = await engine.spawn({ cwd: workspace });
    expect((await first.status()).containment).toBe('cgroup');
    const engineDir = path.dirname(cgroupOf(first.pid));
    // Keep the engine directory when the session closes, then make it a threaded cgroup: every new
    // session cgroup below it is then "domain invalid", which no process can join.
    mkdirSync(path.join(engineDir, 'keep'));
    await first.close();
    writeFileSync(path.join(engineDir, 'cgroup.type'), 'threaded');
    await expect(engine.spawn({ cwd: workspace })).rejects.toMatchObject({ code: 'CONTAINMENT_FAILED' });
    expect(
      readdirSync(engineDir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name),
    ).toEqual(['keep']);
  });
});

describe('where no cgroup can be made, sessions fall back to process-tree teardown', () => {
  it('cgroupRoot that is not a cgroup: containment process-tree, close still kills the tree', async () => {
    const engine = await testEngine({ ...ENGINE, cgroupRoot: workspace });
    const session = await engine.spawn({ cwd: workspace });
    expect(await session.status()).toMatchObject({ kind: 'running', containment: 'process-tree' });
    const marker = '77817.1';
    await run(session, `sleep ${marker} &`);
    await until('job running', () => processesWith(marker).length > 0, WAIT_MS);
    await session.close();
    expect(processesWith(marker)).toEqual([]);
    expect(readdirSync(workspace), 'nothing is created in a directory that is not a cgroup').toEqual([]);
  });

  it.skipIf(!HAS_BWRAP)('a confined session without a cgroup reports pid-namespace', async () => {
    const engine = await testEngine({ ...ENGINE, cgroupRoot: workspace, sandbox: createBubblewrapSandbox() });
    const session = await engine.spawn({ sandbox: { mode: 'read-only', workspaceRoot: workspace } });
    expect(await session.status()).toMatchObject({ kind: 'running', containment: 'pid-namespace' });
    await session.close();
  });
});

describe('the host-exit guard kills a session through its cgroup', () => {
  itCgroup('an engine thread that dies takes a daemonized descendant of its session along', async () => {
    const engine = await testingEngine(ENGINE);
    const session = await engine.spawn({ cwd: workspace });
    const marker = '77818.1';
    // Out of the shell's tree and POSIX session: only the cgroup still knows it belongs here.
    await run(session, `setsid nohup sleep ${marker} >/dev/null 2>&1 &`);
    await until('daemon running', () => processesWith(marker).length > 0, WAIT_MS);
    try {
      await engine.crashThread(session, 'throw');
      // The host declares the session dead only once its guard wrote the cgroup's kill, and that waits
      // for the thread to be gone (bounded by the engine's own wait): once a call says so, only the
      // kernel's delivery of the kill is left to wait for. (A call that reaches the thread before it
      // crashes is still answered.)
      await until(
        'the session declared dead',
        () =>
          session.status().then(
            () => false,
            (error: unknown) => (error as { code?: string }).code === 'ENGINE_THREAD_DIED',
          ),
        WAIT_MS,
      );
      await until('daemon killed with its dead thread', () => processesWith(marker).length === 0, WAIT_MS);
    } finally {
      killMarked([marker]);
    }
  });
});

describe('every hierarchy a session uses is covered: its cgroup v1 limit cgroups', () => {
  /** Whether this process can make cgroups in the v1 pids hierarchy (a hybrid host, as root). */
  const v1Pids = (() => {
    const line = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((entry) => entry.split(':')[1]?.split(',').includes('pids'));
    return line === undefined ? undefined : path.join('/sys/fs/cgroup/pids', line.split(':')[2]!);
  })();
  const itV1 = it.skipIf(v1Pids === undefined || !cgroupUsable(v1Pids));

  itV1(
    'without a v2 container, close kills a daemon that left the tree and the session (v1 pids cgroup)',
    async () => {
      const engine = await testEngine({ ...ENGINE, cgroupRoot: workspace });
      const session = await engine.spawn({ cwd: workspace });
      expect(await session.status()).toMatchObject({
        containment: 'process-tree',
        limits: { pids: { enforcedBy: 'cgroup-v1' } },
      });
      const marker = '77819.1';
      try {
        // Out of the shell's tree and POSIX session, so process-tree teardown cannot find it.
        await run(session, `setsid nohup sleep ${marker} >/dev/null 2>&1 &`);
        await until('daemon running', () => processesWith(marker).length > 0, WAIT_MS);
        await session.close();
        expect(processesWith(marker)).toEqual([]);
      } finally {
        killMarked([marker]);
      }
    },
  );

  itV1('an engine thread that dies takes such a daemon along through the host-exit guard', async () => {
    const engine = await testingEngine({ ...ENGINE, cgroupRoot: workspace });
    const session = await engine.spawn({ cwd: workspace });
    const marker = '77820.1';
    await run(session, `setsid nohup sleep ${marker} >/dev/null 2>&1 &`);
    await until('daemon running', () => processesWith(marker).length > 0, WAIT_MS);
    try {
      await engine.crashThread(session, 'throw');
      await until('daemon killed with its dead thread', () => processesWith(marker).length === 0, 2_000);
    } finally {
      killMarked([marker]);
    }
  });
});

describe('limits nothing can enforce are reported, with the reason and the remedy', () => {
  const UNPRIVILEGED_HOST = `
    import { createPtyEngine } from ${JSON.stringify(new URL('../../../../dist/main/index.js', import.meta.url).href)};
    const engine = await createPtyEngine();
    const session = await engine.spawn({ cwd: '/tmp' });
    process.stdout.write(JSON.stringify(await session.status()));
    await engine.close();
  `;

  it.skipIf(process.getuid?.() !== 0)(
    'an engine whose cgroups are not delegated to its user: every limit none',
    async () => {
      // As nobody, neither the v2 tree nor the v1 hierarchies of this (root-run) machine are writable.
      const stdout = await new Promise<string>((resolve, reject) => {
        execFile(
          'setpriv',
          [
            '--reuid=nobody',
            '--regid=nogroup',
            '--clear-groups',
            process.execPath,
            '--input-type=module',
            '-e',
            UNPRIVILEGED_HOST,
          ],
          { env: { ...process.env, HOME: '/tmp' }, cwd: '/tmp' },
          (error, out) => (error === null ? resolve(out) : reject(error)),
        );
      });
      const status = JSON.parse(stdout) as {
        containment: string;
        limits: Record<string, { enforcedBy: string; reason?: string }>;
      };
      expect(status.containment).toBe('process-tree');
      for (const limit of ['memory', 'pids', 'cpu']) {
        expect(status.limits[limit]).toMatchObject({ enforcedBy: 'none' });
        expect(status.limits[limit]!.reason).toMatch(/not writable.*systemd-run --user -p Delegate=yes/);
      }
    },
  );
});

describe('stale limit cgroups of a dead engine process are swept at engine start (cgroup v1)', () => {
  const line = readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .find((entry) => entry.split(':')[1]?.split(',').includes('pids'));
  const pidsHome = line === undefined ? undefined : path.join('/sys/fs/cgroup/pids', line.split(':')[2]!);
  let sleeper: ChildProcess | undefined;
  let stale: string | undefined;

  afterEach(() => {
    sleeper?.kill('SIGKILL');
    sleeper = undefined;
    if (stale === undefined) return;
    for (const dir of [path.join(stale, 'engine-0/session-1-t1'), path.join(stale, 'engine-0'), stale]) {
      try {
        rmdirSync(dir);
      } catch {
        // swept already (the point of the test)
      }
    }
    stale = undefined;
  });

  it.skipIf(pidsHome === undefined || !cgroupUsable(pidsHome))(
    'a dead owner’s v1 directory and the process in it are killed and removed',
    async () => {
      const deadPid = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
      stale = path.join(pidsHome!, `agent-pty.${deadPid}.12345`);
      const session = path.join(stale, 'engine-0/session-1-t1');
      mkdirSync(session, { recursive: true });
      const stray = spawn('sleep', ['77821'], { stdio: 'ignore' });
      sleeper = stray;
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        stray.once('exit', (_code, signal) => resolve(signal)),
      );
      writeFileSync(path.join(session, 'cgroup.procs'), String(stray.pid));
      await testEngine(ENGINE).then((engine) => engine.spawn({ cwd: workspace }));
      await until('stale v1 cgroup swept', () => !existsSync(stale!), WAIT_MS);
      expect(await exited).toBe('SIGKILL');
    },
  );
});
