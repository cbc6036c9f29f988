// The operations of SPEC §13 through the daemon's socket (SPEC §12: defined in protocol version 2):
// snapshot(), the raw channel and the keyboard hold of a daemon's session, forwarded to the session's
// own methods, against real bash.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectDaemonViewer, createRemoteEngine, type RawChunk } from '../../../../dist/main/index.js';
import { connectDaemonSocket } from '../../../../dist/main/worlds/remote-engine.js';
import { BIN, scratchDirectory, startDaemonProcess } from '../../../support/daemon.js';
import { until } from '../../../support/until.js';

async function daemonSession() {
  const socket = join(scratchDirectory(), 'run', 'engine.sock');
  await startDaemonProcess(socket);
  const engine = await createRemoteEngine({ socket });
  return { engine, session: await engine.spawn({ name: 'watched' }) };
}

describe('SPEC §13 over the daemon socket', () => {
  it('snapshot() and the raw channel: the snapshot holds what ran, the chunks what runs next', async () => {
    const { engine, session } = await daemonSession();
    await session.startSend({ text: 'echo before-$((6*7))' }).done;
    expect((await session.snapshot()).lines).toContain('before-42');
    const chunks: RawChunk[] = [];
    const view = await session.openRaw((chunk) => chunks.push(chunk));
    expect(view.snapshot.lines).toContain('before-42');
    expect(view.snapshot.ansi).toContain('before-42');
    await session.startSend({ text: 'echo after-$((6*7))' }).done;
    await until('the raw chunks to carry the new output', () =>
      chunks
        .map((chunk) => chunk.data)
        .join('')
        .includes('after-42'),
    );
    view.dispose();
    await engine.shutdown();
  });

  it('takeKeyboard(): one holder, a forced take tells the first, the person’s keys reach the shell, release hands back', async () => {
    const { engine, session } = await daemonSession();
    let seen = '';
    const sub = session.onOutput((chunk) => {
      seen += chunk.text;
    });
    const first = await session.takeKeyboard({ holder: 'tab-1' });
    expect((await engine.list())[0]?.heldSince).toBe(first.since);
    await expect(session.takeKeyboard({ holder: 'tab-2' })).rejects.toMatchObject({ code: 'HUMAN_HOLDS' });
    const second = await session.takeKeyboard({ holder: 'tab-2', force: true });
    await expect(first.ended).resolves.toBe('forced');
    await second.write('echo typed-$((6*7))\r');
    await until('the person’s command to run', () => /^typed-42\s*$/m.test(seen));
    second.heartbeat();
    await second.release();
    await expect(second.ended).resolves.toBe('handed-back');
    expect((await engine.list())[0]?.heldSince).toBeUndefined();
    sub.dispose();
    await engine.shutdown();
  });

  it('the same operations over serve --stdio (protocol version 2 there too)', async () => {
    const engine = await createRemoteEngine({ command: [process.execPath, BIN, 'serve', '--stdio'] });
    const session = await engine.spawn();
    await session.startSend({ text: 'echo far-$((6*7))' }).done;
    expect((await session.snapshot()).lines).toContain('far-42');
    const chunks: RawChunk[] = [];
    const view = await session.openRaw((chunk) => chunks.push(chunk));
    await session.startSend({ text: 'echo raw-$((6*7))' }).done;
    await until('raw chunks over the pipe', () =>
      chunks
        .map((chunk) => chunk.data)
        .join('')
        .includes('raw-42'),
    );
    view.dispose();
    await engine.close();
  });
});

describe('a watcher connection (agent-pty watch)', () => {
  it('lists every scope’s sessions with mode and workspace, views and holds them, and may not drive them', async () => {
    const dir = scratchDirectory(0o700);
    const socket = join(dir, 'run', 'engine.sock');
    await startDaemonProcess(socket);
    const confined = await createRemoteEngine({
      socket,
      scope: { mode: 'danger-full-access', workspaceRoot: dir },
    });
    const plain = await createRemoteEngine({ socket });
    const a = await confined.spawn({ name: 'a' });
    const b = await plain.spawn({ name: 'b' });
    // The model-facing scoping is unchanged: each client lists only its own scope.
    expect((await confined.list()).map((entry) => entry.id)).toEqual([a.id]);
    expect((await plain.list()).map((entry) => entry.id)).toEqual([b.id]);

    const viewer = await connectDaemonViewer({ socket });
    const listings = await viewer.list();
    expect(listings).toHaveLength(2);
    expect(listings.find((entry) => entry.id === a.id)).toMatchObject({
      name: 'a',
      mode: 'danger-full-access',
      workspaceRoot: dir,
      attached: true,
    });
    expect(listings.find((entry) => entry.id === b.id)).toMatchObject({ name: 'b', mode: 'unconfined' });
    expect(listings.find((entry) => entry.id === b.id)?.workspaceRoot).toBeUndefined();

    await a.startSend({ text: 'echo seen-$((6*7))' }).done;
    expect((await viewer.session(a.id).snapshot()).lines).toContain('seen-42');
    // What held the terminal at the model's last result (the page shows it).
    expect((await viewer.list()).find((entry) => entry.id === a.id)?.foreground).toBe('bash');
    const hold = await viewer.session(b.id).takeKeyboard({ holder: 'page' });
    expect((await plain.list())[0]?.heldSince).toBe(hold.since);
    await expect(b.signal('SIGINT')).rejects.toMatchObject({ code: 'HUMAN_HOLDS' });
    await hold.release();
    await expect(viewer.session('pty-00000000-1').snapshot()).rejects.toMatchObject({
      code: 'UNKNOWN_SESSION',
    });
    await viewer.close();
    // A viewer's end hands back and detaches nothing.
    expect(await plain.list()).toMatchObject([{ id: b.id, attached: true }]);

    const raw = await connectDaemonSocket(socket, { role: 'watcher' });
    for (const [op, args] of [
      ['spawn', { options: {} }],
      ['send', { session: a.id, send: 1, request: { text: 'echo no' } }],
      ['session', { session: a.id, method: 'signal', args: ['SIGINT'] }],
      ['attach', { id: a.id }],
      ['shutdown', {}],
    ] as const) {
      await expect(raw.call(op, args)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    }
    await raw.terminate();
    await expect(
      connectDaemonSocket(socket, { role: 'watcher', scope: { mode: 'read-only', workspaceRoot: dir } }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await confined.shutdown();
    await plain.shutdown();
  });
});
