// The per-user daemon (SPEC §12) as real processes: `agent-pty daemon` on a Unix socket, clients over
// createRemoteEngine({ socket }), real bash on the daemon's side. Covers the socket directory's checks
// (a directory of another uid, a symlink, a loose mode), a second uid that cannot connect, a second
// daemon and a stale socket, --status and --stop, who sees which session, attach/steal/detach, a
// client SIGKILLed mid-send and what the next attach reports, the daemon's own SIGKILL, the client's
// environment as the spawn's base, and the detached TTL.
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRemoteEngine, type RemoteEngine } from '../../../../dist/main/index.js';
import { connectDaemonSocket } from '../../../../dist/main/worlds/remote-engine.js';
import { abortedSend } from '../../../support/aborted-send.js';
import { launchDaemon, runCli, scratchDirectory, startDaemonProcess } from '../../../support/daemon.js';
import { isAlive } from '../../../support/engine.js';
import { until } from '../../../support/until.js';

const CLIENT = new URL('../../../fixtures/daemon-client.mjs', import.meta.url).pathname;
const NOBODY = 65534;

/** A socket path whose directory the daemon creates. */
function socketIn(dir: string): string {
  return join(dir, 'run', 'engine.sock');
}

/** An unconfined client of the daemon on `socket`. */
function client(socket: string): Promise<RemoteEngine> {
  return createRemoteEngine({ socket });
}

/**
 * Connects to `socket` as uid nobody and sends a hello: the first line the far side answers, or the
 * connect error's code.
 */
function helloAsNobody(socket: string): Promise<string> {
  const hello = JSON.stringify({ t: 'hello', protocol: { min: 1, max: 2 } });
  const script = `const c=require('net').connect(${JSON.stringify(socket)});let got='';c.on('connect',()=>c.write(${JSON.stringify(`${hello}\n`)}));c.on('data',(d)=>{got+=d;const end=got.indexOf('\\n');if(end!==-1){console.log(got.slice(0,end));process.exit(0)}});c.on('end',()=>{console.log(got||'ended');process.exit(0)});c.on('error',(e)=>{console.log(e.code);process.exit(0)})`;
  return new Promise<string>((resolve) => {
    const child = spawn('setpriv', [
      '--reuid',
      String(NOBODY),
      '--regid',
      String(NOBODY),
      '--clear-groups',
      process.execPath,
      '-e',
      script,
    ]);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.once('close', () => resolve(out.trim()));
  });
}

async function rejection(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected a rejection');
}

describe('the socket and its directory', () => {
  it('creates a missing directory 0700 and the socket unreadable to others; --status and --stop', async () => {
    const socket = socketIn(scratchDirectory());
    const daemon = await startDaemonProcess(socket);
    expect(lstatSync(join(socket, '..')).mode & 0o777).toBe(0o700);
    expect(lstatSync(socket).isSocket()).toBe(true);
    expect(lstatSync(socket).mode & 0o077).toBe(0);
    const engine = await client(socket);
    const session = await engine.spawn({ name: 'status-probe' });
    const status = await runCli(['daemon', '--socket', socket, '--status']);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`pid: ${daemon.child.pid}`);
    expect(status.stdout).toMatch(/^version: \d+\.\d+\.\d+/m);
    expect(status.stdout).toContain('protocol: 1-2');
    expect(status.stdout).toContain('sessions: 1');
    expect(status.stdout).toContain(`${session.id} "status-probe" pid ${session.pid} running attached`);
    const stop = await runCli(['daemon', '--socket', socket, '--stop']);
    expect(stop.code).toBe(0);
    expect(await daemon.exited).toBe(0);
    await until('the shell to be gone', () => !isAlive(session.pid));
    expect(existsSync(socket)).toBe(false);
    await engine.close();
  });

  it('refuses a directory another uid owns, a symlink and a loose mode, naming the path and the owner (both ends)', async () => {
    const base = scratchDirectory();
    const squatted = join(base, 'squatted');
    mkdirSync(squatted, { mode: 0o700 });
    chownSync(squatted, NOBODY, NOBODY);
    const real = join(base, 'real');
    mkdirSync(real, { mode: 0o700 });
    const linked = join(base, 'linked');
    symlinkSync(real, linked);
    const loose = join(base, 'loose');
    mkdirSync(loose, { mode: 0o700 });
    execFileSync('chmod', ['0755', loose]);
    const cases = [
      { dir: squatted, words: `owned by uid ${NOBODY}` },
      { dir: linked, words: 'is a symbolic link' },
      { dir: loose, words: 'has mode 0755' },
    ];
    for (const { dir, words } of cases) {
      const socket = join(dir, 'engine.sock');
      const daemon = launchDaemon(['--socket', socket]);
      expect(await daemon.exited).toBe(1);
      expect(daemon.stderr()).toContain(`refusing the daemon's socket directory ${dir}`);
      expect(daemon.stderr()).toContain(words);
      const refused = await rejection(createRemoteEngine({ socket }));
      expect(refused.code).toBe('INVALID_CONFIG');
      expect(refused.message).toContain(dir);
      expect(refused.message).toContain(words);
      expect(existsSync(socket)).toBe(false);
    }
    // The squatter's ownership is named, the real directory behind the link stays untouched.
    expect(lstatSync(real).uid).toBe(0);
  });

  it('refuses a socket path longer than sun_path holds, on both ends, before creating anything', async () => {
    const base = scratchDirectory();
    const dir = join(base, 'd'.repeat(Math.max(1, 120 - base.length)));
    const socket = join(dir, 'engine.sock');
    expect(Buffer.byteLength(socket)).toBeGreaterThan(107);
    const daemon = launchDaemon(['--socket', socket]);
    expect(await daemon.exited).toBe(1);
    expect(daemon.stderr()).toContain('may have at most 107 (sun_path)');
    const refused = await rejection(createRemoteEngine({ socket }));
    expect(refused.code).toBe('INVALID_CONFIG');
    expect(refused.message).toContain('at most 107');
    expect(existsSync(dir)).toBe(false);
    expect(readdirSync(base)).toEqual([]);
  });

  it('another uid cannot connect: the 0700 directory of the owner stands between it and the socket', async () => {
    const socket = socketIn(scratchDirectory(0o755));
    await startDaemonProcess(socket);
    expect(await helloAsNobody(socket)).toBe('EACCES');
    // The same uid connects (the check is of the uid, not of a broken socket).
    const engine = await client(socket);
    expect(await engine.list()).toEqual([]);
    await engine.close();
  });

  it('a peer of another uid that reaches the socket anyway is refused by the daemon itself (SO_PEERCRED)', async () => {
    const socket = socketIn(scratchDirectory(0o755));
    const daemon = await startDaemonProcess(socket);
    // What a loosened directory (or a socket passed on) would allow: the filesystem no longer stops it.
    chmodSync(join(socket, '..'), 0o711);
    chmodSync(socket, 0o777);
    const answer = await helloAsNobody(socket);
    const frame = JSON.parse(answer) as { t: string; error: { code: string; message: string } };
    expect(frame.t).toBe('fatal');
    expect(frame.error.code).toBe('TRANSPORT_CLOSED');
    expect(frame.error.message).toContain(`its peer runs as uid ${NOBODY}`);
    expect(daemon.stderr()).toMatch(
      new RegExp(`refused a connection: its peer runs as uid ${NOBODY} \\(pid \\d+\\)`),
    );
    // The daemon's own uid is still served on the same socket (its client checks the directory too).
    chmodSync(join(socket, '..'), 0o700);
    const engine = await client(socket);
    expect(await engine.list()).toEqual([]);
    await engine.close();
  });

  it('a second daemon on a live socket refuses; a stale socket is replaced, by exactly one of five', async () => {
    const socket = socketIn(scratchDirectory());
    const first = await startDaemonProcess(socket);
    const second = launchDaemon(['--socket', socket]);
    expect(await second.exited).toBe(1);
    expect(second.stderr()).toContain(`an agent-pty daemon already listens on ${socket}`);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(lstatSync(socket).isSocket()).toBe(true); // left behind: stale
    const racers = Array.from({ length: 5 }, () => launchDaemon(['--socket', socket]));
    await until(
      'one racer to listen',
      () => racers.some((racer) => racer.stderr().includes('listening on')),
      20_000,
    );
    const losers = racers.filter((racer) => !racer.stderr().includes('listening on'));
    expect(losers).toHaveLength(4);
    for (const loser of losers) expect(await loser.exited).toBe(1);
    const engine = await client(socket);
    expect(engine.serverPid).toBe(racers.find((racer) => losers.indexOf(racer) === -1)!.child.pid);
    await engine.close();
  });

  it('the configuration is the daemon’s own: a client’s hello does not change it', async () => {
    const socket = socketIn(scratchDirectory());
    await startDaemonProcess(socket);
    // A one-millisecond startup bound would make every spawn fail, were it applied.
    const raw = await connectDaemonSocket(socket, { config: { timeoutMs: 1, maxTimeoutMs: 1 } });
    const spawned = await raw.call<{ id: string; pid: number }>('spawn', { options: { baseEnv: {} } });
    expect(isAlive(spawned.pid)).toBe(true);
    await raw.call('shutdown', {});
    await raw.terminate();
    await until('the shell to be gone', () => !isAlive(spawned.pid));
  });
});

describe('protocol versions', () => {
  /** The frames a raw client gets after sending `hello`. */
  async function greet(socket: string, hello: unknown): Promise<Array<Record<string, unknown>>> {
    const conn = connect(socket);
    const frames: Array<Record<string, unknown>> = [];
    let buffered = '';
    conn.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
        const frame = JSON.parse(buffered.slice(0, end)) as Record<string, unknown>;
        if (frame.t !== 'ping') frames.push(frame);
        buffered = buffered.slice(end + 1);
      }
    });
    conn.write(`${JSON.stringify(hello)}\n`);
    await until('an answer', () => frames.some((frame) => frame.t === 'ready' || frame.t === 'fatal'));
    conn.destroy();
    return frames;
  }

  it('answers the highest common version, accepts version 1’s plain number, and names both ranges when they do not overlap', async () => {
    const socket = socketIn(scratchDirectory());
    await startDaemonProcess(socket);
    expect(await greet(socket, { t: 'hello', protocol: { min: 1, max: 7 } })).toMatchObject([
      { t: 'hello', protocol: { min: 1, max: 2 } },
      { t: 'ready', protocol: 2 },
    ]);
    expect(await greet(socket, { t: 'hello', protocol: 1 })).toMatchObject([
      { t: 'hello', protocol: 1 },
      { t: 'ready', protocol: 1 },
    ]);
    const refused = await greet(socket, { t: 'hello', protocol: { min: 3, max: 4 } });
    expect(refused[1]).toMatchObject({ t: 'fatal', error: { code: 'PROTOCOL_MISMATCH' } });
    const message = (refused[1]!.error as { message: string }).message;
    expect(message).toContain('the server speaks versions 1 to 2');
    expect(message).toContain('the client speaks versions 3 to 4');
  });
});

describe('who sees what', () => {
  it('a client sees and attaches only sessions of its own mode and workspace root; others are unknown, worded like missing ones', async () => {
    const socket = socketIn(scratchDirectory());
    await startDaemonProcess(socket);
    const workspace = scratchDirectory();
    const other = scratchDirectory();
    const owner = await createRemoteEngine({
      socket,
      scope: { mode: 'danger-full-access', workspaceRoot: workspace },
    });
    const session = await owner.spawn({ name: 'build' });
    await session.detach();
    const strangers = [
      await createRemoteEngine({ socket, scope: { mode: 'read-only', workspaceRoot: workspace } }),
      await createRemoteEngine({ socket, scope: { mode: 'workspace-write', workspaceRoot: workspace } }),
      await createRemoteEngine({ socket, scope: { mode: 'danger-full-access', workspaceRoot: other } }),
      await createRemoteEngine({ socket }),
    ];
    for (const stranger of strangers) {
      expect(await stranger.list()).toEqual([]);
      const byId = await rejection(stranger.attach({ id: session.id }));
      const missingId = await rejection(stranger.attach({ id: `${session.id}99` }));
      expect(byId.code).toBe('UNKNOWN_SESSION');
      expect(byId.message).toBe(missingId.message.replace(`${session.id}99`, session.id));
      const byName = await rejection(stranger.attach({ name: 'build' }));
      const missingName = await rejection(stranger.attach({ name: 'nothing-here' }));
      expect(byName.code).toBe('UNKNOWN_SESSION');
      expect(byName.message).toBe(missingName.message.replace('nothing-here', 'build'));
      await stranger.close();
    }
    const peer = await createRemoteEngine({
      socket,
      scope: { mode: 'danger-full-access', workspaceRoot: workspace },
    });
    expect(
      (await peer.list()).map((listing) => [listing.id, listing.name, listing.attached, listing.mode]),
    ).toEqual([[session.id, 'build', false, 'danger-full-access']]);
    const attached = await peer.attach({ name: 'build' });
    expect((await attached.startSend({ text: 'echo seen-$((6*7))' }).done).viewport).toContain('seen-42');
    await peer.shutdown();
    await owner.close();
    await until('the shell to be gone', () => !isAlive(session.pid));
  });
});

describe('attaching', () => {
  it('SESSION_ATTACHED unless steal, detach, NAME_TAKEN, names that look like ids, ids that never repeat', async () => {
    const socket = socketIn(scratchDirectory());
    const daemon = await startDaemonProcess(socket);
    const first = await client(socket);
    const second = await client(socket);
    const session = await first.spawn({ name: 'x' });
    expect((await rejection(second.attach({ name: 'x' }))).code).toBe('SESSION_ATTACHED');
    expect((await rejection(second.spawn({ name: 'x' }))).code).toBe('NAME_TAKEN');
    const badName = await rejection(second.spawn({ name: 'pty-0123abcd-7' }));
    expect(badName.code).toBe('INVALID_ARGUMENT');
    const stolen = await second.attach({ name: 'x' }, { steal: true });
    await until('the first handle to be revoked', () => !first.sessions().includes(session));
    expect((await rejection(session.read())).code).toBe('SESSION_CLOSED');
    expect((await stolen.startSend({ text: 'echo mine-$((2*21))' }).done).viewport).toContain('mine-42');
    await stolen.detach();
    expect((await second.list())[0]).toMatchObject({ id: session.id, attached: false, busy: false });
    const again = await first.attach({ id: session.id });
    expect(again.reattach).toMatchObject({ missedLines: 0 });
    await again.close();
    const later = await first.spawn({ name: 'x' });
    expect(later.id).not.toBe(session.id);
    await first.shutdown();
    await second.close();
    daemon.child.kill('SIGTERM');
    await daemon.exited;
    // A new daemon's ids carry another prefix: an old id never names a new session.
    await startDaemonProcess(socket);
    const fresh = await client(socket);
    const renewed = await fresh.spawn();
    expect(renewed.id.split('-')[1]).not.toBe(later.id.split('-')[1]);
    await fresh.shutdown();
  });

  it('a client SIGKILLed mid-send leaves its session running; the next attach reports the orphaned result and the missed lines, and moves the cursor past them', async () => {
    const socket = socketIn(scratchDirectory());
    const config = join(scratchDirectory(), 'daemon.json');
    writeFileSync(config, JSON.stringify({ maxReadBytes: 4096 }));
    await startDaemonProcess(socket, ['--config', config]);
    const command = "sleep 0.5; echo done-$((6*7)); seq -f 'line-%g' 1 20000";
    const killed = spawn(process.execPath, [CLIENT, socket, 'job', command]);
    const id = await new Promise<string>((resolve) => {
      let out = '';
      killed.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /sent (\S+)\n/.exec(out);
        if (match) resolve(match[1]!);
      });
    });
    const watcher = await client(socket);
    await until('the send to be in flight', async () => (await watcher.list())[0]?.busy === true);
    killed.kill('SIGKILL');
    await new Promise((resolve) => killed.once('exit', resolve));
    await until(
      'the session to be detached and its send settled',
      async () => {
        const [listing] = await watcher.list();
        return listing?.attached === false && listing.busy === false;
      },
      20_000,
    );
    const session = await watcher.attach({ name: 'job' });
    expect(session.id).toBe(id);
    const report = session.reattach!;
    expect(report.orphanedResult?.waitReason).toBe('stdin_read');
    expect(report.orphanedResult?.truncated).toBe(true);
    expect(report.orphanedResult?.viewport).toMatch(/line-20000$/);
    expect(report.missedLines).toBeGreaterThan(19_000);
    const next = await session.startSend({ text: 'echo after-$((6*7))' }).done;
    expect(next.viewport).not.toContain('line-');
    expect(next.viewport).toContain('after-42');
    await watcher.shutdown();
  });

  it('a reattach ends the wait of a send still in flight (it settles `running`, the command runs on)', async () => {
    const socket = socketIn(scratchDirectory());
    await startDaemonProcess(socket);
    const killed = spawn(process.execPath, [CLIENT, socket, 'slow', 'sleep 3; echo late-$((6*7))']);
    await new Promise<void>((resolve) => {
      killed.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('sent ')) resolve();
      });
    });
    const watcher = await client(socket);
    await until('the send to be in flight', async () => (await watcher.list())[0]?.busy === true);
    killed.kill('SIGKILL');
    await new Promise((resolve) => killed.once('exit', resolve));
    await until('the session to be detached', async () => (await watcher.list())[0]?.attached === false);
    const attaching = Date.now();
    const session = await watcher.attach({ name: 'slow' });
    // Well before the command's 3 s: the reattach ended the wait, not the command's end.
    expect(Date.now() - attaching).toBeLessThan(2_000);
    expect(session.reattach?.orphanedResult?.waitReason).toBe('running');
    const rest = await session.startSend({ timeoutMs: 10_000 }).done;
    expect(rest.waitReason).toBe('stdin_read');
    expect(rest.viewport.split('\n')).toContain('late-42');
    await watcher.shutdown();
  });

  it("a client's AbortSignal ends a send's wait on the daemon, not the command it typed", async () => {
    const socket = socketIn(scratchDirectory());
    await startDaemonProcess(socket);
    const engine = await client(socket);
    expect(await abortedSend(engine)).toEqual({ waitReason: 'running', rest: 'tock' });
    await engine.shutdown();
  });

  it('output that arrived while detached leads the reattach report as lines', async () => {
    const socket = socketIn(scratchDirectory());
    await startDaemonProcess(socket);
    const flag = join(scratchDirectory(), 'written');
    const first = await client(socket);
    const session = await first.spawn({ name: 'late' });
    await session.startSend({ text: `(sleep 0.3; seq -f 'late-%g' 1 3; touch ${flag}) &` }).done;
    await first.close();
    await until('the background job to write', () => existsSync(flag));
    const second = await client(socket);
    const again = await second.attach({ name: 'late' });
    expect(again.reattach?.lines?.split('\n')).toEqual(
      expect.arrayContaining(['late-1', 'late-2', 'late-3']),
    );
    expect(again.reattach?.orphanedResult).toBeUndefined();
    expect(again.reattach?.missedLines).toBe(0);
    await second.shutdown();
  });
});

describe('lifetimes', () => {
  it('the daemon killed with SIGKILL kills its sessions; clients get TRANSPORT_CLOSED', async () => {
    const socket = socketIn(scratchDirectory());
    const daemon = await startDaemonProcess(socket);
    const engine = await client(socket);
    const session = await engine.spawn();
    const background = await session.startSend({ text: 'sleep 300 & echo bg=$!' }).done;
    const bgPid = Number(/bg=(\d+)/.exec(background.viewport)![1]);
    const pending = session.startSend({ text: 'sleep 100', timeoutMs: 60_000 }).done;
    await until('the sleep to run', async () => (await engine.list())[0]?.busy === true);
    daemon.child.kill('SIGKILL');
    expect((await rejection(pending)).code).toBe('TRANSPORT_CLOSED');
    await until(
      'the shell and its background job to die',
      () => !isAlive(session.pid) && !isAlive(bgPid),
      15_000,
    );
    expect((await rejection(engine.list())).code).toBe('TRANSPORT_CLOSED');
    await engine.close();
  });

  it('a spawn carries the client’s environment and cwd (scrubbed), never the daemon’s', async () => {
    const socket = socketIn(scratchDirectory());
    await startDaemonProcess(socket, [], { ...process.env, DAEMON_ONLY_VAR: 'daemon-side' });
    process.env.CLIENT_ONLY_VAR = 'client-side';
    process.env.GITHUB_TOKEN = 'ghp_not_for_the_shell';
    let engine: RemoteEngine;
    try {
      engine = await client(socket);
      const session = await engine.spawn();
      const result = await session.startSend({
        text: 'echo "[$CLIENT_ONLY_VAR|$DAEMON_ONLY_VAR|$GITHUB_TOKEN|$PWD]"',
      }).done;
      // The daemon's variable and the client's credential are both absent (empty).
      expect(result.viewport).toContain(`[client-side|||${process.cwd()}]`);
    } finally {
      delete process.env.CLIENT_ONLY_VAR;
      delete process.env.GITHUB_TOKEN;
    }
    await engine.shutdown();
  });

  it('a detached session closes detachedTtlMs after its last detach; attaching resets the clock, output does not', async () => {
    // The reattach comes at 0.4 × ttl: a margin of seconds before the first detach's deadline even when
    // the daemon process is slowed by the suite's other files.
    const ttl = 6_000;
    const socket = socketIn(scratchDirectory());
    const config = join(scratchDirectory(), 'daemon.json');
    writeFileSync(config, JSON.stringify({ detachedTtlMs: ttl }));
    await startDaemonProcess(socket, ['--config', config]);
    const engine = await client(socket);
    const session = await engine.spawn({ name: 'ttl' });
    // Output every 100 ms while detached: it must not keep the session alive.
    await session.startSend({ text: 'while :; do echo tick; sleep 0.1; done &' }).done;
    await session.detach();
    const detachedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, ttl * 0.4));
    const again = await engine.attach({ name: 'ttl' });
    await again.detach();
    const reattachedAt = Date.now();
    // Past the first detach's deadline the session still runs: the attach reset it.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, detachedAt + ttl + 500 - Date.now())));
    expect((await engine.list()).map((listing) => listing.name)).toEqual(['ttl']);
    await until('the session to close', async () => (await engine.list()).length === 0, ttl + 10_000);
    expect(Date.now() - reattachedAt).toBeGreaterThanOrEqual(ttl - 50);
    await until('the shell to be gone', () => !isAlive(session.pid));
    await engine.close();
  });
});
