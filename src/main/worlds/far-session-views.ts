/**
 * The client's side of SPEC §13 over a world's link (protocol version 2): a far session's raw channel
 * and keyboard hold as `RawView` and `KeyboardHold` objects. Shared by a client's attached session
 * (world-session.ts) and a watcher's view of any session (daemon-viewer.ts): both call the same
 * operations, naming the session in each call.
 */
import type { HoldEnd, KeyboardHold, RawChunk, RawView, TakeKeyboardOptions } from '../../shared/types.js';
import type { WorldOperation } from '../../shared/world-protocol.js';
import type { WorldClient } from './world-client.js';

/** A raw channel's client acknowledges once it delivered this many characters (a quarter of the window). */
const RAW_ACK_EVERY_CHARS = 1 << 18;

/** One call about the session (the caller adds the session's id to `args`). */
export type FarSessionCall = <T>(op: WorldOperation, args: Record<string, unknown>) => Promise<T>;

/** `session.openRaw(listener)` of the far session: its snapshot, then its raw chunks. */
export async function openFarRaw(
  client: WorldClient,
  call: FarSessionCall,
  listener: (chunk: RawChunk) => void,
): Promise<RawView> {
  const channel = client.nextChannelNumber();
  let delivered = 0;
  client.rawChannels.set(channel, (frame) => {
    try {
      listener(frame.chunk);
    } finally {
      delivered += frame.chunk.data.length;
      if (delivered >= RAW_ACK_EVERY_CHARS) {
        client.notify({ t: 'raw-ack', channel, chars: delivered });
        delivered = 0;
      }
    }
  });
  client.hold();
  let open = true;
  const dispose = () => {
    if (!open) return;
    open = false;
    client.rawChannels.delete(channel);
    client.release();
    if (client.closedWith === undefined) call('raw-close', { channel }).catch(() => undefined);
  };
  try {
    const snapshot = await call<RawView['snapshot']>('raw-open', { channel });
    return { snapshot, dispose };
  } catch (error) {
    dispose();
    throw error;
  }
}

/** `session.takeKeyboard(options)` of the far session; the hold's end arrives as a `hold-ended` frame. */
export async function takeFarKeyboard(
  client: WorldClient,
  call: FarSessionCall,
  options: TakeKeyboardOptions,
): Promise<KeyboardHold> {
  const hold = client.nextChannelNumber();
  let settle!: (end: HoldEnd) => void;
  const ended = new Promise<HoldEnd>((resolve) => {
    settle = resolve;
  });
  client.holds.set(hold, (frame) => {
    client.holds.delete(hold);
    settle(frame.end);
  });
  try {
    const { since } = await call<{ since: number }>('keyboard-take', { hold, options });
    return {
      since,
      ended,
      write: async (data) => {
        await call('keyboard-write', { hold, data });
      },
      heartbeat: () => void call('keyboard-heartbeat', { hold }).catch(() => undefined),
      release: async () => {
        await call('keyboard-release', { hold });
      },
    };
  } catch (error) {
    client.holds.delete(hold);
    throw error;
  }
}
