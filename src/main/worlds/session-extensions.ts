/**
 * The operations of SPEC §13 over the daemon's protocol (version 2): raw channels, snapshots and
 * keyboard holds, forwarded to the local session's own `openRaw()`, `snapshot()` and `takeKeyboard()`.
 * An engine whose sessions lack a method refuses its operation with `INVALID_ARGUMENT`, so a client of
 * a newer protocol learns what this daemon cannot do instead of waiting.
 *
 * Raw chunks are sent within a credit window as live output is (live-output-flow.ts): past it they are
 * dropped and the next chunk says how many characters were lost — a viewer then redraws from a fresh
 * snapshot (SPEC §2).
 */
import { TerminalError } from '../../shared/errors.js';
import type {
  KeyboardHold,
  RawChunk,
  RawView,
  TakeKeyboardOptions,
  TerminalSession,
  TerminalSnapshot,
} from '../../shared/types.js';
import type { ServerFrame } from '../../shared/world-protocol.js';

/** The server frames of the given kinds. */
type ServerFrameOf<K extends ServerFrame['t']> = Extract<ServerFrame, { t: K }>;

/** Unacknowledged raw characters per channel at most (the live-output window's size and reason). */
const RAW_WINDOW_CHARS = 1 << 20;

/** The §13 methods, which a session of an older engine (or a harness's own session) may lack. */
type ExtendedSession = Omit<TerminalSession, 'openRaw' | 'snapshot' | 'takeKeyboard'> & {
  openRaw?(listener: (chunk: RawChunk) => void): Promise<RawView>;
  snapshot?(): Promise<TerminalSnapshot>;
  takeKeyboard?(options: TakeKeyboardOptions): Promise<KeyboardHold>;
};

interface RawChannel {
  readonly session: string;
  view: RawView | undefined;
  unacknowledged: number;
  dropped: number;
}

interface Hold {
  readonly session: string;
  readonly hold: KeyboardHold;
}

/** One connection's raw channels and keyboard holds. */
export class SessionExtensions {
  private readonly channels = new Map<number, RawChannel>();
  private readonly holds = new Map<number, Hold>();

  constructor(private readonly send: (frame: ServerFrameOf<'raw' | 'hold-ended'>) => void) {}

  /** Runs one §13 operation on the session `sessionOf(args.session)` returns (it throws for a stranger's). */
  async invoke(
    op: string,
    args: Record<string, unknown>,
    sessionOf: (id: unknown) => TerminalSession,
  ): Promise<unknown> {
    switch (op) {
      case 'snapshot':
        return this.method(sessionOf(args.session), 'snapshot').call(sessionOf(args.session));
      case 'raw-open':
        return this.openRaw(String(args.session), Number(args.channel), sessionOf(args.session));
      case 'raw-close':
        this.closeRaw(Number(args.channel));
        return undefined;
      case 'keyboard-take': {
        const session = sessionOf(args.session);
        const take = this.method(session, 'takeKeyboard');
        const hold = await take.call(session, args.options as TakeKeyboardOptions);
        const number = Number(args.hold);
        this.holds.set(number, { session: String(args.session), hold });
        void hold.ended.then((end) => {
          if (this.holds.delete(number)) this.send({ t: 'hold-ended', hold: number, end });
        });
        return { since: hold.since };
      }
      case 'keyboard-write':
        return this.holdOf(args).write(String(args.data));
      case 'keyboard-heartbeat':
        this.holdOf(args).heartbeat();
        return undefined;
      case 'keyboard-release':
        return this.holdOf(args).release();
      default:
        throw new TerminalError('INVALID_ARGUMENT', `unknown operation '${op}'`);
    }
  }

  /** The client delivered `chars` characters of channel `channel`: that much credit returns. */
  acknowledgeRaw(channel: number, chars: number): void {
    const open = this.channels.get(channel);
    if (open === undefined || !Number.isSafeInteger(chars) || chars < 0) return;
    open.unacknowledged = Math.max(0, open.unacknowledged - chars);
  }

  /** The connection let go of `session`: its channels close, its holds are released. */
  dropSession(session: string): void {
    for (const [number, channel] of this.channels) if (channel.session === session) this.closeRaw(number);
    for (const [number, held] of this.holds) {
      if (held.session !== session) continue;
      this.holds.delete(number);
      void held.hold.release().catch(() => undefined);
    }
  }

  /** The connection ended: everything closes, every hold is handed back. */
  dispose(): void {
    for (const number of [...this.channels.keys()]) this.closeRaw(number);
    for (const held of this.holds.values()) void held.hold.release().catch(() => undefined);
    this.holds.clear();
  }

  private async openRaw(session: string, number: number, target: TerminalSession): Promise<TerminalSnapshot> {
    const open = this.method(target, 'openRaw');
    const channel: RawChannel = { session, view: undefined, unacknowledged: 0, dropped: 0 };
    this.channels.set(number, channel);
    const view = await open.call(target, (chunk) => {
      if (this.channels.get(number) !== channel) return;
      channel.dropped += chunk.dropped;
      if (channel.unacknowledged + chunk.data.length > RAW_WINDOW_CHARS) {
        channel.dropped += chunk.data.length;
        return;
      }
      channel.unacknowledged += chunk.data.length;
      this.send({ t: 'raw', channel: number, chunk: { data: chunk.data, dropped: channel.dropped } });
      channel.dropped = 0;
    });
    if (this.channels.get(number) !== channel) {
      view.dispose(); // closed while opening
    } else {
      channel.view = view;
    }
    return view.snapshot;
  }

  private closeRaw(number: number): void {
    const channel = this.channels.get(number);
    this.channels.delete(number);
    channel?.view?.dispose();
  }

  private holdOf(args: Record<string, unknown>): KeyboardHold {
    const held = this.holds.get(Number(args.hold));
    if (held === undefined)
      throw new TerminalError('INVALID_ARGUMENT', `no keyboard hold ${String(args.hold)}`);
    return held.hold;
  }

  private method<K extends 'openRaw' | 'snapshot' | 'takeKeyboard'>(
    session: TerminalSession,
    name: K,
  ): NonNullable<ExtendedSession[K]> {
    const found = (session as ExtendedSession)[name];
    if (typeof found !== 'function') {
      throw new TerminalError(
        'INVALID_ARGUMENT',
        `this daemon's sessions have no ${name}(); upgrade the daemon`,
      );
    }
    return found as NonNullable<ExtendedSession[K]>;
  }
}
