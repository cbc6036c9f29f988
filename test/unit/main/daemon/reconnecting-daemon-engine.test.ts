// The reconnecting daemon engine of `mcp --daemon` (SPEC §12) when the daemon's death is seen only by
// the failure of the call that went out on its dead link. Fakes pin the race (which of two events of
// the process comes first); mcp-daemon.test.ts drives the same path with a real daemon killed by SIGKILL.
import { describe, expect, it } from 'vitest';
import { createReconnectingDaemonEngine } from '../../../../src/main/daemon/reconnecting-daemon-engine.js';
import type { RemoteEngine } from '../../../../src/main/worlds/remote-engine.js';
import { TerminalError } from '../../../../src/shared/errors.js';

/** A remote engine whose link is alive until its first call, which fails as a dead link's call does. */
function engineOn(serverPid: number, diesAtFirstCall: boolean, calls: string[]): RemoteEngine {
  let transportError: TerminalError | undefined;
  const answer = async (what: string, value: unknown) => {
    calls.push(`${what}@${serverPid}`);
    if (diesAtFirstCall && transportError === undefined) {
      // The end of the socket is read only now: the call already went out on the dead link.
      transportError = new TerminalError('TRANSPORT_CLOSED', 'the link closed: the peer ended the stream');
      throw transportError;
    }
    return value;
  };
  return {
    get serverPid() {
      return serverPid;
    },
    get transportError() {
      return transportError;
    },
    spawn: () => answer('spawn', { id: `session-of-${serverPid}` }),
    list: () => answer('list', []),
    attach: () => answer('attach', { id: 'attached' }),
    close: async () => undefined,
    sessions: () => [],
  } as unknown as RemoteEngine;
}

describe('the reconnecting daemon engine', () => {
  it('a spawn that fails on a link that just died is sent again to the new daemon', async () => {
    const calls: string[] = [];
    const engines = [engineOn(100, true, calls), engineOn(200, false, calls)];
    const engine = await createReconnectingDaemonEngine(async () => engines.shift()!);
    await expect(engine.spawn({})).resolves.toEqual({ id: 'session-of-200' });
    expect(calls).toEqual(['spawn@100', 'spawn@200']);
  });

  it('a spawn is not sent again over a link cut to the same daemon (it may have run there)', async () => {
    const calls: string[] = [];
    const engines = [engineOn(100, true, calls), engineOn(100, false, calls)];
    const engine = await createReconnectingDaemonEngine(async () => engines.shift()!);
    await expect(engine.spawn({})).rejects.toMatchObject({ code: 'TRANSPORT_CLOSED' });
    expect(calls).toEqual(['spawn@100']);
    // The next call uses the reconnected link.
    await expect(engine.list()).resolves.toEqual([]);
    expect(calls).toEqual(['spawn@100', 'list@100']);
  });

  it('a listing or an attach is sent again whatever daemon answers the reconnect', async () => {
    for (const run of [
      (engine: Awaited<ReturnType<typeof createReconnectingDaemonEngine>>) => engine.list(),
      (engine: Awaited<ReturnType<typeof createReconnectingDaemonEngine>>) => engine.attach({ name: 'x' }),
    ]) {
      const calls: string[] = [];
      const engines = [engineOn(100, true, calls), engineOn(100, false, calls)];
      const engine = await createReconnectingDaemonEngine(async () => engines.shift()!);
      await expect(run(engine)).resolves.toBeDefined();
      expect(calls).toHaveLength(2);
      expect(new Set(calls).size).toBe(1); // the same call, twice: once on the dead link, once on the new
    }
  });

  it('other failures pass through untouched, without a reconnect', async () => {
    const calls: string[] = [];
    const failing = {
      ...engineOn(100, false, calls),
      serverPid: 100,
      transportError: undefined,
      spawn: async () => {
        throw new TerminalError('NAME_TAKEN', 'taken');
      },
    } as unknown as RemoteEngine;
    let connects = 0;
    const engine = await createReconnectingDaemonEngine(async () => {
      connects++;
      return failing;
    });
    await expect(engine.spawn({ name: 'x' })).rejects.toMatchObject({ code: 'NAME_TAKEN' });
    expect(connects).toBe(1);
  });
});
