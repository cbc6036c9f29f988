/**
 * The sandbox through the public engine API (SPEC §4.1, docs/sandbox.md): real bash sessions under
 * bubblewrap, spawned with `engine.spawn({ sandbox })`. What is allowed and denied in each mode,
 * that readiness (prompt marker, stdin waits), cancel and close keep working through the bwrap
 * launcher, and that a confined mode that cannot be enforced fails before anything runs — never
 * unconfined. bubblewrap.test.ts covers the provider's argv on its own; this file covers the engine
 * wiring.
 */
import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createBubblewrapSandbox } from '../../../../dist/main/sandbox/bubblewrap.js';
import { bwrapIt } from '../../../support/bwrap.js';
import {
  type EngineOptions,
  isAlive,
  type SandboxMode,
  type TerminalSendResult,
  type TerminalSession,
  testEngine,
} from '../../../support/engine.js';
import { hostPidOf } from '../../../support/namespace.js';

const itBwrap = bwrapIt('engine sandbox');

/** One provider for the file: its availability probe runs once. */
const sandbox = createBubblewrapSandbox();
/** Short grace: nothing here needs a long one, and a failing test should not wait seconds. */
const ENGINE: EngineOptions = { sandbox, disposeGraceMs: 300 };
/** Bound on waiting for a process state seen through /proc (milliseconds in practice). */
const WAIT_MS = 8_000;

let root: string;
let workspace: string;
let outside: string;
let listener: net.Server;
let port: number;
let connections = 0;
let onConnection: (() => void) | undefined;
/** File name no run has used: finding it on the host proves a write got through. */
let token: string;

beforeAll(async () => {
  listener = net.createServer((socket) => {
    connections++;
    socket.destroy();
    onConnection?.();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as net.AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => listener.close(() => resolve()));
});

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'sandbox-engine-'));
  workspace = path.join(root, 'workspace');
  mkdirSync(workspace);
  // Outside /tmp, so the sandbox sees it (read-only) rather than the private /tmp hiding it.
  outside = mkdtempSync(path.join(existsSync('/var/tmp') ? '/var/tmp' : homedir(), 'sandbox-engine-out-'));
  token = `agent-pty-probe-${randomUUID()}`;
  connections = 0;
});

afterEach(() => {
  onConnection = undefined;
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
  // Present only if a sandbox failed to stop a write; removed so a failing run leaves no litter.
  for (const leftover of [`/etc/${token}`, path.join(homedir(), token)]) rmSync(leftover, { force: true });
});

/** Shell checks, each printing `name=ok` or `name=denied`. */
function checks(names: string[]): string {
  const all: Record<string, string> = {
    workspace: `touch "${workspace}/${token}"`,
    etc: `touch "/etc/${token}"`,
    home: `touch "$HOME/${token}"`,
    outside: `touch "${outside}/${token}"`,
    tmp: `touch "/tmp/${token}"`,
    network: `(exec 3<>/dev/tcp/127.0.0.1/${port})`,
  };
  return names
    .map((name) => `if ${all[name]} 2>/dev/null; then echo ${name}=ok; else echo ${name}=denied; fi`)
    .join('; ');
}

/** Runs the named checks in the session; returns `{ name: 'ok' | 'denied' }`. */
async function probe(session: TerminalSession, names: string[]): Promise<Record<string, string>> {
  const result = await run(session, checks(names));
  return Object.fromEntries(
    [...result.viewport.matchAll(/^(\w+)=(ok|denied)\s*$/gm)].map((match) => [match[1], match[2]]),
  );
}

/** Sends `text` and expects proven readiness. */
async function run(session: TerminalSession, text: string): Promise<TerminalSendResult> {
  const result = await session.startSend({ text }).done;
  expect(result.waitReason, result.viewport).toBe('stdin_read');
  return result;
}

async function confined(mode: SandboxMode, options: EngineOptions = ENGINE): Promise<TerminalSession> {
  const engine = await testEngine(options);
  return engine.spawn({ sandbox: { mode, workspaceRoot: workspace } });
}

interface Stat {
  pid: number;
  comm: string;
  state: string;
  session: number;
}

/** The POSIX session id of `pid` (for a confined shell: that of bwrap, the pty child that leads it). */
function sessionIdOf(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[3]);
}

/** Live (non-zombie) processes whose session id is `sid`: bwrap, the shell and its children. */
function liveInSession(sid: number): Stat[] {
  const found: Stat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch (_gone) {
      continue;
    }
    const close = text.lastIndexOf(')');
    const [state, , , session] = text.slice(close + 2).split(' ');
    if (Number(session) === sid && state !== 'Z' && state !== 'X') {
      found.push({
        pid: Number(name),
        comm: text.slice(text.indexOf('(') + 1, close),
        state: state!,
        session: sid,
      });
    }
  }
  return found;
}

/** Polls a /proc condition (no event exists for it), bounded by {@link WAIT_MS}. */
async function until(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('filesystem and network through the engine', () => {
  itBwrap(
    'workspace-write: the workspace is writable (and the cwd), $HOME privately; /etc, other folders and TCP are not',
    async () => {
      const session = await confined('workspace-write');
      expect(session.sandbox).toEqual({ mode: 'workspace-write', workspaceRoot: workspace });
      expect((await run(session, 'pwd')).viewport.split('\n')).toContain(workspace);
      expect(await probe(session, ['workspace', 'etc', 'home', 'outside', 'tmp', 'network'])).toEqual({
        workspace: 'ok',
        etc: 'denied',
        home: 'ok', // the private home, gone at close: the host's stays untouched (below)
        outside: 'denied',
        tmp: 'ok',
        network: 'denied',
      });
      expect(existsSync(path.join(workspace, token))).toBe(true);
      expect(existsSync(`/etc/${token}`)).toBe(false);
      expect(existsSync(path.join(homedir(), token))).toBe(false);
      expect(existsSync(path.join(outside, token))).toBe(false);
      expect(existsSync(path.join('/tmp', token)), 'the sandbox /tmp must be private').toBe(false);
      expect(connections).toBe(0);
      await session.close();
    },
  );

  itBwrap('read-only: the workspace is not writable either', async () => {
    const session = await confined('read-only');
    expect(await probe(session, ['workspace', 'etc', 'home', 'outside', 'network'])).toEqual({
      workspace: 'denied',
      etc: 'denied',
      home: 'denied',
      outside: 'denied',
      network: 'denied',
    });
    expect(existsSync(path.join(workspace, token))).toBe(false);
    expect(connections).toBe(0);
    await session.close();
  });

  itBwrap(
    'danger-full-access (with a provider present): the workspace, other folders and TCP all work',
    async () => {
      const session = await confined('danger-full-access');
      const connected = new Promise<void>((resolve) => {
        onConnection = resolve;
      });
      // Only checks that write into the test's own directories: unconfined, /etc and $HOME are real.
      expect(await probe(session, ['workspace', 'outside', 'network'])).toEqual({
        workspace: 'ok',
        outside: 'ok',
        network: 'ok',
      });
      await connected;
      expect(existsSync(path.join(outside, token))).toBe(true);
      await session.close();
    },
  );
});

describe('a terminal inside the sandbox', () => {
  itBwrap('python3 REPL settles stdin_read inside, and 1+1 gives 2', async () => {
    const session = await confined('workspace-write');
    await run(session, 'python3 -q');
    const sum = await run(session, '1+1');
    expect(sum.viewport.split('\n')).toContain('2');
    const back = await run(session, 'exit()');
    expect(back.exitCode).toBe(0); // the shell's own prompt (marker) settled it
    await session.close();
  });

  itBwrap('`read x` settles stdin_read inside, and the typed line reaches it', async () => {
    const session = await confined('read-only');
    const waiting = await run(session, 'read x');
    expect(waiting.exitCode).toBeUndefined(); // proven by the stdin wait, not by a prompt
    expect((await run(session, 'hello')).exitCode).toBe(0);
    expect((await run(session, 'echo "got=$x"')).viewport.split('\n')).toContain('got=hello');
    await session.close();
  });

  itBwrap('a send settles with its exit code (the prompt marker works through bwrap)', async () => {
    const session = await confined('workspace-write');
    expect((await run(session, 'true')).exitCode).toBe(0);
    expect((await run(session, 'false')).exitCode).toBe(1);
    expect((await run(session, '(exit 7)')).exitCode).toBe(7);
    await session.close();
  });

  itBwrap('cancel of `sleep 100` interrupts it inside and settles at the prompt', async () => {
    const session = await confined('workspace-write');
    const sid = sessionIdOf(session.pid);
    const op = session.startSend({ text: 'sleep 100' });
    await until('sleep 100 runs', () => liveInSession(sid).some((stat) => stat.comm === 'sleep'));
    const sleeper = liveInSession(sid).find((stat) => stat.comm === 'sleep')!;
    await op.cancel();
    const result = await op.done;
    expect(result.waitReason).toBe('stdin_read');
    expect(result.exitCode).toBe(130);
    expect(isAlive(sleeper.pid)).toBe(false);
    await session.close();
  });

  itBwrap('close leaves nothing: bwrap, the shell inside and its children', async () => {
    const session = await confined('workspace-write');
    const result = await run(session, 'echo SHELL=$$; sleep 1000 & echo BG=$!; (sleep 1001 & echo BG=$!)');
    // bwrap, the pty child, leads the POSIX session; the shell runs below it, and `session.pid` is the shell's.
    const sid = sessionIdOf(session.pid);
    expect(sid).not.toBe(session.pid);
    // Pids printed inside are namespace pids: look up the host processes they name (the orphaned
    // `sleep 1001` is bwrap's child, not the shell's).
    const shell = hostPidOf(sid, Number(/^SHELL=(\d+)\s*$/m.exec(result.viewport)![1]));
    const children = [...result.viewport.matchAll(/^BG=(\d+)\s*$/gm)].map((match) =>
      hostPidOf(sid, Number(match[1])),
    );
    expect(children).toHaveLength(2);
    expect(shell).toBe(session.pid);
    const inSession = liveInSession(sid);
    expect(inSession.map((stat) => stat.comm)).toEqual(expect.arrayContaining(['bwrap', 'bash', 'sleep']));
    await session.close();
    expect([sid, shell, ...children, ...inSession.map((stat) => stat.pid)].filter(isAlive)).toEqual([]);
    expect(liveInSession(sid)).toEqual([]);
  });
});

describe('failing closed', () => {
  /** A shell that leaves a mark on the host when it runs, so "never ran unconfined" is observable. */
  function markingShell(): { options: EngineOptions; ran: () => boolean } {
    const script = path.join(root, 'marking-shell');
    const mark = path.join(root, 'ran');
    writeFileSync(script, `#!/bin/sh\ntouch "${mark}"\nexec /bin/bash --noprofile --norc -i\n`);
    chmodSync(script, 0o755);
    return { options: { shellPath: script, disposeGraceMs: 300 }, ran: () => existsSync(mark) };
  }

  it.runIf(process.platform === 'linux')(
    'a missing bubblewrap fails confined spawns with SANDBOX_UNAVAILABLE and never runs the shell',
    async () => {
      const { options, ran } = markingShell();
      const engine = await testEngine({
        ...options,
        sandbox: createBubblewrapSandbox({ bwrapPath: '/nonexistent/bwrap' }),
      });
      for (const mode of ['read-only', 'workspace-write'] as const) {
        await expect(engine.spawn({ sandbox: { mode, workspaceRoot: workspace } })).rejects.toMatchObject({
          code: 'SANDBOX_UNAVAILABLE',
          message: expect.stringContaining('/nonexistent/bwrap'),
        });
      }
      expect(ran()).toBe(false);
      expect(engine.sessions()).toEqual([]);
      // Control: the marking shell does mark when it runs (unconfined on request).
      const open = await engine.spawn({ sandbox: { mode: 'danger-full-access', workspaceRoot: workspace } });
      expect(ran()).toBe(true);
      await open.close();
    },
  );

  it.runIf(process.platform === 'linux')(
    'a confined mode without any provider fails the same way',
    async () => {
      const { options, ran } = markingShell();
      const engine = await testEngine(options);
      for (const mode of ['read-only', 'workspace-write'] as const) {
        await expect(engine.spawn({ sandbox: { mode, workspaceRoot: workspace } })).rejects.toMatchObject({
          code: 'SANDBOX_UNAVAILABLE',
        });
      }
      expect(ran()).toBe(false);
      expect(engine.sessions()).toEqual([]);
    },
  );
});
