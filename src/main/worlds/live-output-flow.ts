/**
 * Flow control of live output over a world's link (SPEC §10): credit-based, per session. The server
 * sends a session's output only while less than {@link LIVE_OUTPUT_FLOW.WINDOW_CHARS} of it is
 * unacknowledged; the client acknowledges what it has handed to its subscribers. When the link (or
 * the client) is slower than the shell, the server drops output instead of queueing it, and the next
 * chunk says how much was dropped — the same contract as a lagging local subscriber. Memory stays
 * bounded on both ends: the server holds at most a window per session in its output buffer, the
 * client never more than one frame.
 */
import { TerminalError } from '../../shared/errors.js';
import type { Disposable, OutputChunk, TerminalSession } from '../../shared/types.js';

/** Window and acknowledgement sizes, in characters of sanitized text. */
export const LIVE_OUTPUT_FLOW = {
  /**
   * Unacknowledged characters per session at most. 1 Mi: what a slow link may hold in the server's
   * buffer per subscribed session, and, since an acknowledgement returns within a round trip, enough
   * for hundreds of MB/s at the millisecond round trips of a local pipe or a LAN.
   */
  WINDOW_CHARS: 1 << 20,
  /**
   * The client acknowledges once it delivered this many characters: a quarter of the window, so credit
   * returns long before the window is spent, at one small frame per 256 Ki of output.
   */
  ACK_EVERY_CHARS: 1 << 18,
} as const;

/** Server side: forwards one session's live output within the client's credit. */
export class LiveOutputSender {
  private unacknowledged = 0;
  private dropped = 0;
  private subscription: Disposable | undefined;

  constructor(
    private readonly session: TerminalSession,
    private readonly send: (text: string, dropped: number) => void,
  ) {}

  /** Starts forwarding (idempotent). */
  start(): void {
    this.subscription ??= this.session.onOutput(this.forward);
  }

  /** Stops forwarding (idempotent); output in flight is still acknowledged normally. */
  stop(): void {
    this.subscription?.dispose();
    this.subscription = undefined;
  }

  /**
   * The client delivered `chars` more characters: that much credit returns. Throws PROTOCOL_MISMATCH
   * for an acknowledgement of more than was sent (or of no whole number): credit that was never spent
   * would let the output grow without bound.
   */
  acknowledge(chars: number): void {
    if (!Number.isSafeInteger(chars) || chars < 0 || chars > this.unacknowledged) {
      throw new TerminalError(
        'PROTOCOL_MISMATCH',
        `a live-output acknowledgement of ${String(chars)} characters, but ${this.unacknowledged} are unacknowledged: the client broke the protocol`,
      );
    }
    this.unacknowledged -= chars;
    // Output dropped at the end of a burst would otherwise go unreported until the next chunk.
    if (this.dropped > 0 && this.subscription !== undefined) this.forward({ text: '', dropped: 0 });
  }

  private readonly forward = (chunk: OutputChunk): void => {
    this.dropped += chunk.dropped;
    if (this.unacknowledged + chunk.text.length > LIVE_OUTPUT_FLOW.WINDOW_CHARS) {
      this.dropped += chunk.text.length;
      return;
    }
    this.unacknowledged += chunk.text.length;
    this.send(chunk.text, this.dropped);
    this.dropped = 0;
  };
}

/** Client side: counts delivered characters and says when to acknowledge them. */
export class LiveOutputCredit {
  private delivered = 0;

  /** Records `chars` delivered; returns the count to acknowledge now, or 0 to wait for more. */
  deliver(chars: number): number {
    this.delivered += chars;
    if (this.delivered < LIVE_OUTPUT_FLOW.ACK_EVERY_CHARS) return 0;
    const acknowledged = this.delivered;
    this.delivered = 0;
    return acknowledged;
  }

  /** Characters delivered but not yet acknowledged (sent as a final ack when the subscription ends). */
  flush(): number {
    const acknowledged = this.delivered;
    this.delivered = 0;
    return acknowledged;
  }
}
