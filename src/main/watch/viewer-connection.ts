/**
 * One viewer of the watch page: a WebSocket, the sessions it shows (a raw view each, started from
 * its snapshot) and the keyboards it holds. Its holds end when its socket closes. What the person
 * types goes to the hold's `write` and nowhere else: no log, no echo from this side.
 */
import type { WebSocket } from 'ws';
import { DisposableStore } from '../../shared/lifecycle.js';
import type { KeyboardHold, RawChunk, RawView, TerminalSession } from '../../shared/types.js';
import { parseViewerMessage, type ServerMessage, type ViewerMessage } from './watch-protocol.js';

/** A session as a viewer sees it: the raw channel, `snapshot()` (SPEC §2) and the keyboard (SPEC §13). */
export type RawSession = Pick<TerminalSession, 'id' | 'openRaw' | 'snapshot' | 'takeKeyboard'>;

/** What a viewer needs of the server. */
export interface ViewerHost {
  /** The live session `id`, if any. */
  session(id: string): RawSession | undefined;
  /** Tells every viewer of `id` who holds its keyboard now. */
  holdChanged(id: string): void;
  /** The viewer currently holding `id`'s keyboard. */
  holderOf(id: string): ViewerConnection | undefined;
  setHolder(id: string, viewer: ViewerConnection | undefined): void;
}

/** One viewer's view of one session. */
interface View {
  raw: RawView | undefined;
  closed: boolean;
}

/** A viewer: its socket, views and holds. */
export class ViewerConnection {
  private readonly views = new Map<string, View>();
  private readonly holds = new Map<string, KeyboardHold>();
  private closed = false;
  /** The socket's listeners; released on close, so a closed viewer takes no more messages. */
  private readonly owned = new DisposableStore();

  constructor(
    private readonly socket: WebSocket,
    private readonly host: ViewerHost,
    /** Shown to a later viewer that is refused ("held by another viewer since …"). */
    readonly label: string,
  ) {
    const onMessage = (data: WebSocket.RawData, isBinary: boolean) => {
      if (isBinary) return;
      const message = parseViewerMessage(data.toString());
      if (message !== undefined) void this.handle(message).catch(() => undefined);
    };
    const onClose = () => this.close();
    this.owned.listen('watch viewer message listener', socket, 'message', onMessage);
    this.owned.listen('watch viewer close listener', socket, 'close', onClose);
  }

  /** Sends `message` if the socket is open. */
  send(message: ServerMessage): void {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return;
    this.socket.send(JSON.stringify(message));
  }

  /** Whether this viewer shows session `id`. */
  watches(id: string): boolean {
    return this.views.has(id);
  }

  /** This viewer's hold of `id`, if it has one. */
  holdOf(id: string): KeyboardHold | undefined {
    return this.holds.get(id);
  }

  /** Ends every view and hands back every keyboard this viewer holds (its socket closed). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.owned.dispose();
    for (const [id] of this.views) this.unwatch(id);
    for (const [, hold] of this.holds) void hold.release();
    this.holds.clear();
  }

  /** A session of this viewer ended. */
  sessionGone(id: string): void {
    if (!this.views.has(id)) return;
    this.unwatch(id);
    this.send({ t: 'gone', id });
  }

  private async handle(message: ViewerMessage): Promise<void> {
    switch (message.t) {
      case 'beat':
        for (const hold of this.holds.values()) hold.heartbeat();
        return;
      case 'watch':
        return this.watch(message.id);
      case 'unwatch':
        this.unwatch(message.id);
        return;
      case 'take':
        return this.take(message.id, message.force === true);
      case 'release':
        await this.holds.get(message.id)?.release();
        return;
      case 'key': {
        // Only the holder's keys are written; anything else is dropped without a word.
        const hold = this.holds.get(message.id);
        if (hold !== undefined) await hold.write(message.data).catch(() => undefined);
        return;
      }
    }
  }

  private async watch(id: string): Promise<void> {
    const session = this.host.session(id);
    if (session === undefined || this.views.has(id)) {
      if (session === undefined) this.send({ t: 'gone', id });
      return;
    }
    const view: View = { raw: undefined, closed: false };
    this.views.set(id, view);
    // Chunks may arrive before the view (and its snapshot) is back: kept until the snapshot is sent.
    let early: string[] | undefined = [];
    const onChunk = (chunk: RawChunk): void => {
      if (view.closed) return;
      if (chunk.dropped > 0) {
        void this.redraw(id, session, view);
        return;
      }
      if (early !== undefined) early.push(chunk.data);
      else this.send({ t: 'out', id, data: chunk.data });
    };
    let raw: RawView;
    try {
      raw = await session.openRaw(onChunk);
    } catch {
      this.views.delete(id);
      this.send({ t: 'gone', id });
      return;
    }
    if (view.closed) {
      raw.dispose();
      return;
    }
    view.raw = raw;
    this.send({ t: 'snapshot', id, snapshot: raw.snapshot });
    for (const data of early) this.send({ t: 'out', id, data });
    early = undefined;
    this.sendHoldState(id);
  }

  /** The viewer lagged past the watermark: it starts again from a fresh snapshot. */
  private async redraw(id: string, session: RawSession, view: View): Promise<void> {
    try {
      const snapshot = await session.snapshot();
      if (!view.closed) this.send({ t: 'snapshot', id, snapshot });
    } catch {
      // The session is gone; the listing says so.
    }
  }

  private unwatch(id: string): void {
    const view = this.views.get(id);
    if (view === undefined) return;
    view.closed = true;
    view.raw?.dispose();
    this.views.delete(id);
  }

  private async take(id: string, force: boolean): Promise<void> {
    const session = this.host.session(id);
    if (session === undefined) {
      this.send({ t: 'gone', id });
      return;
    }
    if (this.holds.has(id)) {
      this.sendHoldState(id);
      return;
    }
    let hold: KeyboardHold;
    try {
      hold = await session.takeKeyboard({ holder: this.label, force });
    } catch (error) {
      this.send({ t: 'refused', id, message: (error as Error).message });
      return;
    }
    if (this.closed) {
      await hold.release();
      return;
    }
    this.holds.set(id, hold);
    this.host.setHolder(id, this);
    this.host.holdChanged(id);
    void hold.ended.then((reason) => {
      if (this.holds.get(id) === hold) this.holds.delete(id);
      if (this.host.holderOf(id) === this) this.host.setHolder(id, undefined);
      this.send({ t: 'hold', id, state: 'free', ended: reason });
      this.host.holdChanged(id);
    });
  }

  /** Tells this viewer who holds `id`'s keyboard. */
  sendHoldState(id: string): void {
    if (!this.views.has(id) && !this.holds.has(id)) return;
    const mine = this.holds.get(id);
    if (mine !== undefined) {
      this.send({ t: 'hold', id, state: 'mine', since: mine.since });
      return;
    }
    const holder = this.host.holderOf(id);
    const since = this.host.session(id) === undefined ? undefined : holder?.holdOf(id)?.since;
    if (holder !== undefined && since !== undefined) this.send({ t: 'hold', id, state: 'other', since });
    else this.send({ t: 'hold', id, state: 'free' });
  }
}
