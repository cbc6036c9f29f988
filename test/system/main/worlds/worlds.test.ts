// Execution worlds over a local pipe (SPEC §10): createRemoteEngine against `node dist/main/cli/bin.js
// serve --stdio`, real bash and python3 on the far side. Covers the protocol's versioned handshake in
// both directions, coded errors across the link, live output flow control on a slow link, and the
// link's death: a killed server, a hung server (SIGSTOP) and a link cut without a clean close (a relay
// that stops relaying) — pending calls reject with TRANSPORT_CLOSED and the far side closes everything.
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createRemoteEngine,
  type PtyEngine,
  type RemoteEngineInternals,
  type TerminalSession,
} from '../../../../dist/main/index.js';
import { abortedSend } from '../../../support/aborted-send.js';
import { isAlive, testEngine } from '../../../support/engine.js';
import { until } from '../../../support/until.js';

const BIN = new URL('../../../../dist/main/cli/bin.js', import.meta.url).pathname;
const RELAY = new URL('../../../fixtures/world-relay.mjs', import.meta.url).pathname;
const OTHER_VERSION = new URL('../../../fixtures/world-other-version.mjs', import.meta.url).pathname;
const VERSION_ONE = new URL('../../../fixtures/world-version-1.mjs', import.meta.url).pathname;
const SERVE = [process.execPath, BIN, 'serve', '--stdio'];

/** SPEC §10: a dead transport rejects pending calls within a second. */
const TRANSPORT_DEATH_MS = 1_000;
/**
 * A hung peer or a cut link is noticed within a few seconds: the heartbeat's 5 s of silence plus its
 * 1 s check period, plus slack for a loaded machine.
 */
const SILENCE_NOTICED_MS = 9_000;

type RemoteEngine = PtyEngine & RemoteEngineInternals;
const engines: RemoteEngine[] = [];

async function world(command = SERVE, config?: Record<string, unknown>): Promise<RemoteEngine> {
  const engine = await createRemoteEngine({ command, ...(config === undefined ? {} : { config }) });
  engines.push(engine);
  return engine;
}

afterEach(async () => {
  await Promise.allSettled(engines.splice(0).map((engine) => engine.close()));
});

/** Parent pid of `pid`, from /proc. */
function ppidOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** Resolves with how long `promise` took to reject, and the error. */
async function rejection(promise: Promise<unknown>): Promise<{ ms: number; error: { code?: string } }> {
  const started = Date.now();
  try {
    await promise;
  } catch (error) {
    return { ms: Date.now() - started, error: error as { code?: string } };
  }
  throw new Error('expected a rejection');
}

/** Starts a foreground `sleep` and waits until it holds the terminal. */
async function startSleep(session: TerminalSession, seconds: number) {
  const op = session.startSend({ text: `sleep ${seconds}`, timeoutMs: 60_000 });
  await until('sleep to run', () => {
    const comm = (() => {
      try {
        return readFileSync(`/proc/${session.pid}/task/${session.pid}/children`, 'utf8');
      } catch {
        return '';
      }
    })();
    return comm.trim() !== '';
  });
  return op;
}

describe('a world over a local pipe', () => {
  it('runs python3 and bash far away and keeps the coded errors', async () => {
    const engine = await world();
    expect(engine.serverPid).toBeGreaterThan(0);
    const session = await engine.spawn({ name: 'far' });
    expect(session.name).toBe('far');
    expect(engine.sessions()).toEqual([session]);
    expect(ppidOf(session.pid)).toBe(engine.serverPid); // the shell is the far engine's, not ours

    const python = await session.startSend({ text: 'python3 -q' }).done;
    expect(python.waitReason).toBe('stdin_read');
    const printed = await session.startSend({ text: 'print(6*7)' }).done;
    expect(printed.viewport.split('\n')).toContain('42');
    const exited = await session.startSend({ text: 'exit()' }).done;
    expect(exited.waitReason).toBe('stdin_read');
    const echoed = await session.startSend({ text: 'echo ok-$((6*7))' }).done;
    expect(echoed.viewport.split('\n')).toContain('ok-42');
    expect(echoed.exitCode).toBe(0);
    expect(await session.status()).toMatchObject({ kind: 'running' });
    const page = await session.read({ count: 3 });
    expect(page.text.split('\n')).toContain('ok-42');

    // Coded errors cross the link with code and message.
    await expect(session.signal('SIGKILL')).rejects.toMatchObject({ code: 'SIGNAL_REFUSED' });
    await expect(engine.spawn({ cwd: '/nonexistent-dir' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('/nonexistent-dir'),
    });
    const running = await startSleep(session, 30);
    const second = session.startSend({ text: 'true' });
    await expect(second.done).rejects.toMatchObject({ code: 'SEND_ACTIVE' });
    await running.cancel();
    const cancelled = await running.done;
    expect(cancelled).toMatchObject({ waitReason: 'stdin_read', exitCode: 130 });

    const outcome = await session.close('done');
    expect(outcome.reason).toBe('done');
    expect(isAlive(session.pid)).toBe(false);
    expect(engine.sessions()).toEqual([]);
    await expect(session.status()).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
  });

  it("forwards a send's AbortSignal and reads a send's output while it runs, as the local engine does", async () => {
    const local = await testEngine();
    const far = await world();
    const [localResult, farResult] = await Promise.all([abortedSend(local), abortedSend(far)]);
    expect(farResult).toEqual(localResult);
  });

  it('delivers live output, and an aborted spawn rejects with the caller’s reason', async () => {
    const engine = await world();
    const session = await engine.spawn();
    const chunks: string[] = [];
    const subscription = session.onOutput((chunk) => chunks.push(chunk.text));
    await session.startSend({ text: 'for i in 1 2 3; do echo line-$((i*11)); done' }).done;
    await until('live output', () => chunks.join('').includes('line-33'));
    subscription.dispose();

    const controller = new AbortController();
    const reason = new Error('caller gave up');
    const spawning = engine.spawn({}, controller.signal);
    controller.abort(reason);
    await expect(spawning).rejects.toBe(reason);
    expect(engine.sessions()).toEqual([session]);
  });

  it('keeps memory bounded on both ends when the link is slower than the output', async () => {
    // 1 MB/s of link against a 40 MB flood: without flow control the server queues the flood in its
    // stdout buffer (measured: RSS +77 MB, and the send's result arrives 22 s late, behind the queued
    // output); with it, output beyond the window is dropped and counted, as for a lagging local
    // subscriber (RSS +20 MB, most of it the engine thread's own flood work).
    const engine = await world([process.execPath, RELAY, '--bytes-per-sec', '1000000', '--', ...SERVE]);
    const session = await engine.spawn();
    const rssOf = (pid: number) =>
      Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    const baseline = rssOf(engine.serverPid);
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssOf(engine.serverPid));
    }, 50);
    let received = 0;
    let dropped = 0;
    const subscription = session.onOutput((chunk) => {
      received += chunk.text.length;
      dropped += chunk.dropped;
    });
    try {
      const flood = await session.startSend({
        text: "head -c 40000000 /dev/zero | tr '\\0' a | fold -w 100; echo; echo end-$((6*7))",
        timeoutMs: 120_000,
      }).done;
      expect(flood.waitReason).toBe('stdin_read');
      expect(flood.truncated).toBe(true);
      expect(flood.viewport.length).toBeLessThanOrEqual(256 * 1024);
      expect(flood.viewport).toContain('end-42');
    } finally {
      clearInterval(sampler);
      subscription.dispose();
    }
    expect(dropped).toBeGreaterThan(0);
    expect(received).toBeLessThan(20_000_000);
    expect(peak - baseline, `server RSS grew from ${baseline} MB to ${peak} MB`).toBeLessThan(48);
    const next = await session.startSend({ text: 'echo clean-$((6*7))' }).done;
    expect(next.viewport.split('\n')).toContain('clean-42');
  }, 120_000);

  it('answers a result too large for a frame with an error, and the link lives on', async () => {
    // maxReadBytes raised to 64 MiB: a page of a 40 MB flood would be a 40 MB frame (the bound is 32 MiB).
    const engine = await world(SERVE, {
      scrollbackLines: 1_000_000,
      scrollbackMaxBytes: 64 * 2 ** 20,
      maxReadBytes: 64 * 2 ** 20,
    });
    const session = await engine.spawn();
    const tooLarge = { code: 'INVALID_CONFIG', message: expect.stringContaining('lower maxReadBytes') };
    const flood = session.startSend({ text: "head -c 40000000 /dev/zero | tr '\\0' a | fold -w 100" });
    await expect(flood.done).rejects.toMatchObject(tooLarge);
    await expect(session.read({ count: 1_000_000 })).rejects.toMatchObject(tooLarge);
    const next = await session.startSend({ text: 'echo alive-$((6*7))' }).done;
    expect(next.viewport.split('\n')).toContain('alive-42');
  }, 60_000);

  it('closes every far session with engine.close(), and the server exits', async () => {
    const engine = await world();
    const sessions = await Promise.all([engine.spawn(), engine.spawn()]);
    const serverPid = engine.serverPid;
    await engine.close();
    for (const session of sessions) expect(isAlive(session.pid)).toBe(false);
    expect(isAlive(serverPid)).toBe(false);
    await expect(engine.spawn()).rejects.toMatchObject({ code: 'ENGINE_CLOSED' });
  });
});

describe('protocol versions', () => {
  it('a client refuses a server of another version, naming both', async () => {
    const failure = createRemoteEngine({ command: [process.execPath, OTHER_VERSION] });
    const error = (await rejection(failure)).error as { code: string; message: string };
    expect(error.code).toBe('PROTOCOL_MISMATCH');
    expect(error.message).toContain('client speaks versions 1 to 2');
    expect(error.message).toContain('server speaks version 999');
  });

  it('a far side of the previous release (version 1) is asked again in its own words, and serves', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'world-v1-'));
    const hellos = join(dir, 'hellos');
    try {
      const engine = await world([process.execPath, VERSION_ONE, hellos]);
      expect(readFileSync(hellos, 'utf8').trim().split('\n')).toEqual(['{"min":1,"max":2}', '1']);
      // Version 1 has no list operation: the client lists its own handles.
      expect(await engine.list()).toEqual([]);
      await engine.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a server refuses a client of another version, naming both, and exits', async () => {
    const server: ChildProcessByStdio<Writable, Readable, Readable> = spawn(SERVE[0]!, SERVE.slice(1), {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    server.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => server.once('exit', resolve));
    server.stdin.write(`${JSON.stringify({ t: 'hello', protocol: 999 })}\n`);
    const code = await exited;
    server.stdin.destroy();
    const frames = stdout
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as { t: string; protocol?: unknown; error?: { code: string; message: string } },
      )
      .filter((frame) => frame.t !== 'ping');
    // The server answers the client's hello with its range (SPEC §12), then refuses naming both.
    expect(frames[0]).toEqual({ t: 'hello', protocol: { min: 1, max: 2 } });
    expect(frames[1]?.t).toBe('fatal');
    expect(frames[1]?.error?.code).toBe('PROTOCOL_MISMATCH');
    expect(frames[1]?.error?.message).toContain('server speaks versions 1 to 2');
    expect(frames[1]?.error?.message).toContain('client speaks version 999');
    expect(code).toBe(2);
  });

  it('a far command that is not the protocol fails with what it printed', async () => {
    const failure = createRemoteEngine({ command: ['sh', '-c', 'echo Welcome to the build box; sleep 5'] });
    const error = (await rejection(failure)).error as { code: string; message: string };
    expect(error.code).toBe('PROTOCOL_MISMATCH');
    expect(error.message).toContain('Welcome to the build box');
  });

  it('a transport that fails says why, with its stderr', async () => {
    const failure = createRemoteEngine({
      command: ['sh', '-c', 'echo host unreachable-$((6*7)) >&2; exit 255'],
    });
    await expect(failure).rejects.toMatchObject({
      code: 'TRANSPORT_CLOSED',
      message: expect.stringContaining('host unreachable-42'),
    });
  });

  it('a command that cannot start fails TRANSPORT_CLOSED', async () => {
    const failure = createRemoteEngine({ command: ['/nonexistent/agent-pty-transport'] });
    await expect(failure).rejects.toMatchObject({
      code: 'TRANSPORT_CLOSED',
      message: expect.stringContaining('ENOENT'),
    });
  });
});

describe('when the link dies', () => {
  it('a killed server rejects the pending send within a second', async () => {
    const engine = await world();
    const session = await engine.spawn();
    const op = await startSleep(session, 60);
    const started = Date.now();
    process.kill(engine.serverPid, 'SIGKILL');
    const { error } = await rejection(op.done);
    expect(error.code).toBe('TRANSPORT_CLOSED');
    expect(Date.now() - started).toBeLessThan(TRANSPORT_DEATH_MS);
    await expect(session.status()).rejects.toMatchObject({ code: 'TRANSPORT_CLOSED' });
    expect(engine.sessions()).toEqual([]);
    // The shell lost its terminal with the server: the kernel's hangup ends it.
    await until('the far shell to go', () => !isAlive(session.pid), 5_000);
    // A close after the link died resolves: there is nothing left to close from here.
    await expect(session.close()).resolves.toMatchObject({ status: { kind: 'exited' } });
  });

  it('a hung server (SIGSTOP) is noticed by the heartbeat; once it runs again it closes everything', async () => {
    const engine = await world();
    const session = await engine.spawn();
    const op = await startSleep(session, 60);
    const serverPid = engine.serverPid;
    process.kill(serverPid, 'SIGSTOP');
    try {
      const { ms, error } = await rejection(op.done);
      expect(error.code).toBe('TRANSPORT_CLOSED');
      expect(ms).toBeLessThan(SILENCE_NOTICED_MS);
      expect((error as Error).message).toContain('silent');
    } finally {
      process.kill(serverPid, 'SIGCONT');
    }
    await engine.close();
    expect(isAlive(serverPid)).toBe(false);
    expect(isAlive(session.pid)).toBe(false);
  }, 30_000);

  it('a link cut without a clean close is noticed by both ends; the far side closes its sessions', async () => {
    const engine = await world([process.execPath, RELAY, '--', ...SERVE]);
    const session = await engine.spawn();
    const op = await startSleep(session, 60);
    const serverPid = engine.serverPid;
    const relayPid = ppidOf(serverPid);
    process.kill(relayPid, 'SIGUSR1'); // stops relaying; every pipe stays open
    const { ms, error } = await rejection(op.done);
    expect(error.code).toBe('TRANSPORT_CLOSED');
    expect(ms).toBeLessThan(SILENCE_NOTICED_MS);
    // The server's stdin never ended, yet it stopped hearing the client: it closes the shells and exits.
    await until('the far shell to go', () => !isAlive(session.pid), SILENCE_NOTICED_MS);
    await until('the server to exit', () => !isAlive(serverPid), SILENCE_NOTICED_MS);
    await engine.close();
  }, 30_000);
});
