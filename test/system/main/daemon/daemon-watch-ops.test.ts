// The operations of SPEC §13 through the daemon's socket (SPEC §12: defined in protocol version 2):
// snapshot(), the raw channel and the keyboard hold of a daemon's session, forwarded to the session's
// own methods, against real bash.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRemoteEngine, type RawChunk } from '../../../../dist/main/index.js';
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
