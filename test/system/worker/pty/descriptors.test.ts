/**
 * Descriptors (SPEC §4.1): a shell holds its own terminal and nothing else. No pty master of another
 * session reaches it (so no shell can type into another session), no descriptor the host left
 * inheritable reaches it, and no child process the host starts holds a pty master. All of it rests
 * on the node-pty patch (docs/decisions/0003-node-pty-patch.md) that agent-pty builds into its own pty
 * addon at install (docs/decisions/0004-own-pty-build.md): real shells, real /proc. Run against an
 * installed copy by scripts/package-smoke.mjs (test/support/package-under-test.ts).
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bwrapIt } from '../../../support/bwrap.js';
import {
  type EngineOptions,
  type SandboxMode,
  type TerminalSendResult,
  type TerminalSession,
  testEngine,
  ttyOf,
  underTest,
} from '../../../support/engine.js';

const itBwrap = bwrapIt('descriptor');
const HOST_FIXTURE = fileURLToPath(new URL('../../../fixtures/inherited-fd-host.mjs', import.meta.url));
const ENGINE: EngineOptions = { sandbox: underTest.createBubblewrapSandbox(), disposeGraceMs: 300 };
/** What an idle interactive bash holds: its terminal on 0-2 and the copy bash keeps on 255. */
const IDLE_BASH_FDS = [0, 1, 2, 255];

let root: string;

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'descriptors-'));
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Sends `text` and expects proven readiness. */
async function run(session: TerminalSession, text: string): Promise<TerminalSendResult> {
  const result = await session.startSend({ text }).done;
  expect(result.waitReason, result.viewport).toBe('stdin_read');
  return result;
}

/** The value of the output line `name=<value>` (the shell computes it, so no typed line matches). */
function field(result: TerminalSendResult, name: string): string | undefined {
  return new RegExp(`^${name}=(\\S*)\\s*$`, 'm').exec(result.viewport)?.[1];
}

/**
 * Host pid of the shell itself, as the result names it in the foreground (`$$` would be a pid in the
 * sandbox's PID namespace for a confined session).
 */
async function shellPid(session: TerminalSession): Promise<number> {
  const { foreground } = await run(session, 'true');
  expect(foreground?.command).toBe('bash');
  return foreground!.pid;
}

/** Descriptor numbers a process holds, ascending. */
function descriptorsOf(pid: number): number[] {
  return readdirSync(`/proc/${pid}/fd`)
    .map(Number)
    .sort((a, b) => a - b);
}

/** This process's descriptor on the pty master of terminal `ttyPath` (e.g. /dev/pts/3). */
function masterFdOf(ttyPath: string): number {
  const index = ttyPath.slice('/dev/pts/'.length);
  for (const name of readdirSync('/proc/self/fd')) {
    let info: string;
    try {
      if (readlinkSync(`/proc/self/fd/${name}`) !== '/dev/ptmx') continue;
      info = readFileSync(`/proc/self/fdinfo/${name}`, 'utf8');
    } catch {
      continue; // closed while scanning
    }
    if (new RegExp(`^tty-index:\\s*${index}$`, 'm').test(info)) return Number(name);
  }
  throw new Error(`no pty master for ${ttyPath} in this process`);
}

async function openSessions(modes: (SandboxMode | 'unconfined')[]): Promise<TerminalSession[]> {
  const engine = await testEngine(ENGINE);
  const sessions: TerminalSession[] = [];
  for (const mode of modes) {
    sessions.push(
      await engine.spawn(mode === 'unconfined' ? {} : { sandbox: { mode, workspaceRoot: root } }),
    );
  }
  return sessions;
}

/** Checks every shell holds exactly its own terminal, seen from the host and from inside the shell. */
async function expectOnlyOwnTerminal(sessions: TerminalSession[]): Promise<void> {
  for (const session of sessions) {
    const pid = await shellPid(session);
    expect(descriptorsOf(pid)).toEqual(IDLE_BASH_FDS);
    const tty = ttyOf(pid);
    for (const fd of IDLE_BASH_FDS) expect(readlinkSync(`/proc/${pid}/fd/${fd}`)).toBe(tty);
    // The same, computed by the shell: its listing goes to a file first so that no pipe of a pipeline
    // or command substitution is open in the shell while `ls` reads its descriptor table.
    const listing = path.join('/tmp', `fds-${pid}`);
    const inside = await run(
      session,
      `ls /proc/$$/fd >${listing}; echo fds=$(tr '\\n' , <${listing}); rm ${listing}`,
    );
    expect(field(inside, 'fds')).toBe('0,1,2,255,');
  }
}

describe('a shell inherits no descriptor but its terminal', () => {
  it('several unconfined sessions: each shell holds exactly 0, 1, 2 (and 255) on its own terminal', async () => {
    await expectOnlyOwnTerminal(await openSessions(['unconfined', 'unconfined', 'unconfined']));
  });

  itBwrap('mixed modes (unconfined, read-only, workspace-write) open together: the same', async () => {
    await expectOnlyOwnTerminal(
      await openSessions(['unconfined', 'read-only', 'workspace-write', 'unconfined', 'read-only']),
    );
  });

  it('a child process the host starts while sessions are open holds no pty master', async () => {
    const sessions = await openSessions(['unconfined', 'unconfined']);
    // Precondition: the masters are open in this process (the engine threads share its table).
    for (const session of sessions) masterFdOf(ttyOf(session.pid));
    const listing = execFileSync('sh', ['-c', 'ls -l /proc/$$/fd'], { encoding: 'utf8' });
    expect(listing).toContain(' 0 -> ');
    expect(listing).not.toContain('/dev/ptmx');
  });

  itBwrap('a read-only session cannot type into another session through its master fd number', async () => {
    const [first, second] = await openSessions(['unconfined', 'read-only']);
    const masterFd = masterFdOf(ttyOf(first!.pid));
    const marker = path.join(root, 'escaped');
    const attempt = await run(second!, `printf 'echo escaped > ${marker}\\r' >&${masterFd}; echo status=$?`);
    expect(field(attempt, 'status')).toBe('1');
    expect(attempt.viewport).toMatch(new RegExp(`${masterFd}: Bad file descriptor`));
    // Had the text reached the first terminal, its shell would run it before this command.
    expect(field(await run(first!, 'echo sum=$((2+3))'), 'sum')).toBe('5');
    expect(existsSync(marker)).toBe(false);
  });
});

describe('descriptors the host leaves inheritable', () => {
  itBwrap('do not reach the shells of any mode: fd 50 (a file) and 51 (a directory)', async () => {
    const file = openSync(path.join(root, 'host-file'), 'w');
    const directory = openSync(root, 'r');
    const stdio: (number | 'ignore' | 'pipe')[] = ['ignore', 'pipe', 'pipe'];
    while (stdio.length < 50) stdio.push('ignore');
    stdio.push(file, directory);
    const child = spawn(
      process.execPath,
      [HOST_FIXTURE, root, 'unconfined', 'read-only', 'workspace-write'],
      {
        stdio,
      },
    );
    closeSync(file);
    closeSync(directory);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(0);
    const report = JSON.parse(stdout);
    // Precondition: the host really holds both, inheritable (no close-on-exec).
    expect(report.host).toEqual({
      50: { target: path.join(root, 'host-file'), cloexec: false },
      51: { target: root, cloexec: false },
    });
    expect(report.shells).toEqual(
      ['unconfined', 'read-only', 'workspace-write'].map((mode) => ({
        mode,
        waitReason: 'stdin_read',
        fds: IDLE_BASH_FDS,
        write50: '1',
        read51: '1',
      })),
    );
  });
});
