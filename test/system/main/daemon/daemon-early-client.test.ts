// A client that connects to the daemon (SPEC §12) while its engine is still being created — the
// socket already listens, so a probe already counts the daemon live and `mcp --daemon` connects at
// once — is served once the engine is up, not left unanswered until its handshake bound.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { probe, startDaemon } from '../../../../dist/main/daemon/daemon.js';
import { createPtyEngine, createRemoteEngine } from '../../../../dist/main/index.js';
import { scratchDirectory } from '../../../support/daemon.js';
import { until } from '../../../support/until.js';

describe('a client early to a starting daemon', () => {
  it('is answered once the engine is up (before: its hello was dropped and it waited out the bound)', async () => {
    const socket = join(scratchDirectory(), 'run', 'engine.sock');
    let engineAsked!: () => void;
    const creating = new Promise<void>((resolve) => {
      engineAsked = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const starting = startDaemon({
      socketPath: socket,
      log: () => undefined,
      createEngine: async (config) => {
        engineAsked();
        await released; // the engine takes its time: the socket listens meanwhile
        return createPtyEngine(config);
      },
    });
    await creating;
    await until('the socket to answer', async () => (await probe(socket)) === 'live');
    const connecting = createRemoteEngine({ socket });
    // Its connection is accepted while the engine is being created; then the engine comes up.
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    const daemon = await starting;
    const client = await connecting;
    const session = await client.spawn();
    const result = await session.startSend({ text: 'echo early-$((6*7))' }).done;
    expect(result.viewport.split('\n')).toContain('early-42');
    await client.shutdown();
    await daemon.stop('test done');
  });
});
