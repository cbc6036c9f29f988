/**
 * A closed viewer (its socket closed, or the server closing) takes no more messages (issue 24): its
 * socket listeners are released with it, so a `take` that arrives between its close and its socket's
 * end never reaches a session's keyboard.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import {
  type RawSession,
  ViewerConnection,
  type ViewerHost,
} from '../../../../src/main/watch/viewer-connection.js';

/** The part of a WebSocket a viewer uses: its events, and a socket that is open but sends nowhere. */
class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  send(): void {}
}

describe('ViewerConnection.close', () => {
  it('releases its socket listeners: a take after close never asks the session for its keyboard', async () => {
    const socket = new FakeSocket();
    const takes: string[] = [];
    const session = {
      id: 's1',
      takeKeyboard: async (request: { holder: string }) => {
        takes.push(request.holder);
        throw new Error('refused');
      },
    } as unknown as RawSession;
    const host: ViewerHost = {
      session: (id) => (id === 's1' ? session : undefined),
      holdChanged: () => undefined,
      holderOf: () => undefined,
      setHolder: () => undefined,
    };
    const viewer = new ViewerConnection(socket as unknown as WebSocket, host, 'viewer 1');
    expect(socket.listenerCount('message')).toBe(1);
    const take = Buffer.from(JSON.stringify({ t: 'take', id: 's1', force: true }));
    socket.emit('message', take, false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(takes).toEqual(['viewer 1']); // an open viewer's take reaches the session

    viewer.close();
    expect(socket.listenerCount('message')).toBe(0);
    expect(socket.listenerCount('close')).toBe(0);
    socket.emit('message', take, false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(takes).toEqual(['viewer 1']);
  });
});
