// An execution world over a real OpenSSH link (SPEC §10): the test starts its own sshd on 127.0.0.1
// (temporary host key, authorized key and config), and createRemoteEngine runs
// `ssh -p PORT 127.0.0.1 node …/bin.js serve --stdio`. Through it: python3, cancel, a 100 MB flood,
// sandbox denial, teardown, and the ssh client killed mid-send — the pending call rejects with
// TRANSPORT_CLOSED within a second and the far shells are gone within a few seconds.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createRemoteEngine,
  type PtyEngine,
  type RemoteEngineInternals,
  type TerminalSession,
} from '../../../../dist/main/index.js';
import { isAlive } from '../../../support/engine.js';
import { liveDescendants } from '../../../support/leaks.js';
import { startTestSshd, type TestSshd } from '../../../support/sshd.js';
import { until } from '../../../support/until.js';

const BIN = new URL('../../../../dist/main/cli/bin.js', import.meta.url).pathname;
/** SPEC §10: a dead transport rejects pending calls within a second. */
const TRANSPORT_DEATH_MS = 1_000;
/** The far side notices a closed link at once (stdin ends); teardown of its shells takes a moment. */
const FAR_TEARDOWN_MS = 8_000;

let sshd: TestSshd;
let workspace: string;
type RemoteEngine = PtyEngine & RemoteEngineInternals;
const engines: RemoteEngine[] = [];

beforeAll(async () => {
  sshd = await startTestSshd();
  workspace = mkdtempSync(join(tmpdir(), 'worlds-ssh-'));
});

afterAll(async () => {
  await sshd.stop();
  expect(isAlive(sshd.pid), 'sshd left running').toBe(false);
  rmSync(workspace, { recursive: true, force: true });
});

afterEach(async () => {
  await Promise.allSettled(engines.splice(0).map((engine) => engine.close()));
  // Nothing of a test may keep running on the far side: sshd's sessions, servers and shells all end.
  const survivors = await waitForNoFarProcesses();
  expect(survivors, 'far processes left behind').toEqual([]);
});

async function world(): Promise<RemoteEngine> {
  const engine = await createRemoteEngine({
    command: sshd.ssh(process.execPath, BIN, 'serve', '--stdio'),
    config: { timeoutMs: 60_000 },
  });
  engines.push(engine);
  return engine;
}

async function waitForNoFarProcesses(): Promise<string[]> {
  const deadline = Date.now() + FAR_TEARDOWN_MS;
  for (;;) {
    const alive = liveDescendants(sshd.pid).map((entry) => `${entry.pid} ${entry.comm}`);
    if (alive.length === 0 || Date.now() > deadline) return alive;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Pids of live processes whose command line contains `marker` (a unique argument). */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv.includes(marker) && isAlive(Number(name))) found.push(Number(name));
    } catch {
      // exited while scanning
    }
  }
  return found;
}

/** A `sleep` argument no other process has: its presence in /proc marks this test's sleeper. */
function uniqueSleepSeconds(): string {
  return `${900_000 + Math.floor(Math.random() * 99_999)}`;
}

async function startSleep(session: TerminalSession, seconds: string) {
  const op = session.startSend({ text: `sleep ${seconds}` });
  await until('the sleep to run', () => processesWith(seconds).length > 0);
  return op;
}

describe('a world over ssh to 127.0.0.1', () => {
  it('runs python3 and cancels a running command', async () => {
    const engine = await world();
    const session = await engine.spawn({ cwd: workspace });
    expect((await session.startSend({ text: 'python3 -q' }).done).waitReason).toBe('stdin_read');
    const printed = await session.startSend({ text: 'print(6*7)' }).done;
    expect(printed.viewport.split('\n')).toContain('42');
    await session.startSend({ text: 'exit()' }).done;

    const seconds = uniqueSleepSeconds();
    const op = await startSleep(session, seconds);
    await op.cancel();
    expect(await op.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 130 });
    expect(processesWith(seconds)).toEqual([]);
  });

  it('carries a 100 MB flood: the result stays bounded and the next command is clean', async () => {
    const engine = await world();
    const session = await engine.spawn({ cwd: workspace });
    const flood = await session.startSend({
      text: "head -c 100000000 /dev/zero | tr '\\0' a | fold -w 100; echo; echo end-$((6*7))",
    }).done;
    expect(flood.waitReason).toBe('stdin_read');
    expect(flood.truncated).toBe(true);
    expect(Buffer.byteLength(flood.viewport)).toBeLessThanOrEqual(256 * 1024);
    expect(flood.viewport.split('\n').at(-1)).toBe('end-42');
    const next = await session.startSend({ text: 'echo clean-$((6*7))' }).done;
    expect(next.viewport.split('\n').slice(1)).toEqual(['clean-42']);
  }, 120_000);

  it('enforces the sandbox next to the shell: read-only cannot write the workspace', async () => {
    const engine = await world();
    const session = await engine.spawn({ sandbox: { mode: 'read-only', workspaceRoot: workspace } });
    const target = join(workspace, 'denied.txt');
    const result = await session.startSend({ text: `echo x > ${target}` }).done;
    expect(result.exitCode).not.toBe(0);
    expect(result.viewport).toMatch(/Read-only file system/);
    expect(existsSync(target)).toBe(false);
  });

  it('tears down on close: the far processes are gone', async () => {
    const engine = await world();
    const session = await engine.spawn({ cwd: workspace });
    const seconds = uniqueSleepSeconds();
    await session.startSend({ text: `sleep ${seconds} & sleep ${seconds} &` }).done;
    // The prompt can come back before a forked job has exec'd sleep: wait for both.
    await until('both sleeps running', () => processesWith(seconds).length === 2);
    await session.close();
    expect(processesWith(seconds)).toEqual([]);
    expect(isAlive(session.pid)).toBe(false);
    const serverPid = engine.serverPid;
    await engine.close();
    expect(isAlive(serverPid)).toBe(false);
  });

  it('a killed ssh client rejects the pending send within a second; the far shells go', async () => {
    const engine = await world();
    const sessions = [await engine.spawn({ cwd: workspace }), await engine.spawn({ cwd: workspace })];
    const seconds = uniqueSleepSeconds();
    await sessions[1]!.startSend({ text: `sleep ${seconds} &` }).done;
    const op = await startSleep(sessions[0]!, seconds);
    const ssh = liveDescendants().find((entry) => entry.comm === 'ssh');
    expect(ssh).toBeDefined();
    const killed = Date.now();
    process.kill(ssh!.pid, 'SIGKILL');
    await expect(op.done).rejects.toMatchObject({ code: 'TRANSPORT_CLOSED' });
    expect(Date.now() - killed).toBeLessThan(TRANSPORT_DEATH_MS);
    await until(
      'the far shells to go',
      () => sessions.every((session) => !isAlive(session.pid)),
      FAR_TEARDOWN_MS,
    );
    await until('the far sleeps to go', () => processesWith(seconds).length === 0, FAR_TEARDOWN_MS);
  }, 30_000);
});
