/**
 * `signal()` accepts exactly SIGINT, SIGTERM, SIGKILL, SIGTSTP and SIGHUP, by name, at run time (SPEC
 * §4.4): a number, `SIGSTOP` or `SIGSEGV` is refused with INVALID_ARGUMENT before anything is
 * delivered — in the engine, in the harness service and over `serve --stdio`, not only by the types.
 * Real bash with a foreground `sleep`: a refused signal must leave it running (a later cancel still
 * interrupts it, exit 130), where a delivered one would have stopped (148), killed (137) or crashed
 * (139) it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createRemoteEngine,
  type PtyEngine,
  type RemoteEngineInternals,
  type SignalName,
  type TerminalSession,
} from '../../../../dist/main/index.js';
import { SIGNAL_NAMES } from '../../../../dist/shared/signals.js';
import { commandRunning, testEngine } from '../../../support/engine.js';
import { createFakeHost, type FakeHost } from '../../../support/fake-host.js';
import type { FakeSession } from '../../../support/fake-pty-engine.js';

const BIN = new URL('../../../../dist/main/cli/bin.js', import.meta.url).pathname;

/** What `signal()` must refuse: a number (SIGKILL's), two names outside the five, and junk. */
const REFUSED: readonly unknown[] = [9, 'SIGSTOP', 'SIGSEGV', 'sigint', 'INT', '', null, { name: 'SIGINT' }];

const remotes: Array<PtyEngine & RemoteEngineInternals> = [];
afterEach(async () => {
  await Promise.allSettled(remotes.splice(0).map((engine) => engine.close()));
});

/**
 * Runs `sleep` in the foreground, offers it every refused signal, and proves each was refused with
 * INVALID_ARGUMENT and never delivered: cancelling the still-running sleep ends it with exit 130.
 */
async function expectRefusedAndUndelivered(session: TerminalSession, foreground: () => Promise<void>) {
  const running = session.startSend({ text: 'sleep 30' });
  await foreground();
  for (const signal of REFUSED) {
    await expect(session.signal(signal as SignalName), String(signal)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('SIGINT, SIGTERM, SIGKILL, SIGTSTP or SIGHUP'),
    });
  }
  await running.cancel();
  expect(await running.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 130 });
}

describe('signal names are checked at run time', () => {
  it('the five names are the ones SignalName spells', () => {
    expect([...SIGNAL_NAMES]).toEqual(['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGTSTP', 'SIGHUP']);
  });

  it('the engine refuses signal(9), SIGSTOP, SIGSEGV and junk; nothing reaches the foreground', async () => {
    const engine = await testEngine();
    const session = await engine.spawn();
    await expectRefusedAndUndelivered(session, () => commandRunning(session.pid, 'sleep'));
    // A valid name still works.
    const again = session.startSend({ text: 'sleep 30' });
    await commandRunning(session.pid, 'sleep');
    await expect(session.signal('SIGTERM')).resolves.toMatchObject({ delivered: true });
    expect(await again.done).toMatchObject({ exitCode: 128 + 15 });
    await session.close();
  });

  it('serve --stdio refuses them too (the far engine checks what the wire carries)', async () => {
    const engine = await createRemoteEngine({ command: [process.execPath, BIN, 'serve', '--stdio'] });
    remotes.push(engine);
    const session = await engine.spawn();
    // The far pid is this machine's: serve runs locally over a pipe.
    await expectRefusedAndUndelivered(session, () => commandRunning(session.pid, 'sleep'));
    await session.close();
  });

  describe('the harness service', () => {
    let fixture: FakeHost | undefined;
    afterEach(async () => {
      await fixture?.dispose();
      fixture = undefined;
    });

    it('refuses them before the backend session sees anything', async () => {
      fixture = await createFakeHost('signal-names-');
      const pty = fixture.host.service('pty');
      const opened = await pty.spawn('alice', { type: 'shell' });
      for (const signal of REFUSED) {
        await expect(pty.signal('alice', opened.sessionId, signal as SignalName)).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
        });
      }
      await pty.signal('alice', opened.sessionId, 'SIGHUP');
      expect((fixture.engine.spawned[0] as FakeSession).signals).toEqual(['SIGHUP']);
    });
  });
});
