/**
 * The data plane (SPEC §2): live output to host subscribers over a dedicated port, batched and
 * flow-controlled by acknowledgements. Nothing is sent while nobody subscribes. A subscriber that lags
 * (the host stopped acknowledging) makes the engine drop output — counting it — instead of buffering
 * without bound; the scrollback still holds everything.
 */
import type { MessagePort } from 'node:worker_threads';
import {
  LIVE_HIGH_WATERMARK_CHARS,
  LIVE_LOW_WATERMARK_CHARS,
  type LiveOutputAck,
  type LiveOutputMessage,
} from '../shared/protocol.js';

/** Batch window: one message per few ms of output, so a flood crosses the thread boundary in few messages. */
const BATCH_MS = 5;
/** Flush early once a batch reaches this many characters. */
const BATCH_MAX_CHARS = 64 * 1024;
/**
 * A batch of at most this many pieces goes as they are (a flood's batch is ~15 reads); one of more,
 * small pieces from a general-route stream, is joined here, where that costs less than sending each.
 */
const MAX_BATCH_PARTS = 64;

/** Batches sanitized output to the host while enabled. */
export class LiveOutputPublisher {
  private enabled = false;
  private parts: string[] = [];
  private batchChars = 0;
  private unacked = 0;
  private dropped = 0;
  private paused = false;
  private timer: NodeJS.Timeout | undefined;
  private disposed = false;

  constructor(private readonly port: MessagePort) {
    port.on('message', (message: LiveOutputAck) => {
      if (message?.type !== 'ack') return;
      this.unacked = Math.max(0, this.unacked - message.chars);
      if (this.paused && this.unacked <= LIVE_LOW_WATERMARK_CHARS) {
        this.paused = false;
        // Report the gap now, even if no further output comes to carry it.
        if (this.dropped > 0) this.postBatch();
      }
    });
    // Only ack traffic arrives here; it must not keep the engine thread alive on its own.
    port.unref();
  }

  /** Turns publishing on or off. Turning it off discards any pending batch and resets flow control. */
  setEnabled(enabled: boolean): void {
    if (this.disposed) return;
    this.enabled = enabled;
    if (!enabled) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.parts = [];
      this.batchChars = 0;
      this.unacked = 0;
      this.dropped = 0;
      this.paused = false;
    }
  }

  /** Text of the current line. */
  text(s: string): void {
    if (this.enabled) this.push(s);
  }

  /** End of line. */
  newline(): void {
    if (this.enabled) this.push('\n');
  }

  /**
   * Several lines at once, `\n` or `\r\n` ending each. Sent as they are: the host turns CRLF into LF
   * for subscribers (`liveTextForSubscribers`), off this thread, which must get back to reading.
   */
  textBlock(block: string): void {
    if (!this.enabled) return;
    if (this.paused)
      this.dropped += block.length - crlfCount(block); // count as subscribers would
    else this.push(block);
  }

  /** Start of a rewrite of the current line. */
  rewriteLine(): void {
    if (this.enabled) this.push('\r');
  }

  /** Sends what is pending and stops; idempotent. */
  dispose(): void {
    if (this.disposed) return;
    this.flush();
    this.disposed = true;
    this.enabled = false;
    clearTimeout(this.timer);
    this.port.close();
  }

  private push(s: string): void {
    if (this.paused) {
      this.dropped += s.length;
      return;
    }
    this.parts.push(s);
    this.batchChars += s.length;
    if (this.batchChars >= BATCH_MAX_CHARS) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), BATCH_MS);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.disposed || this.batchChars === 0) return;
    this.postBatch();
    if (this.unacked >= LIVE_HIGH_WATERMARK_CHARS) this.paused = true;
  }

  private postBatch(): void {
    const parts = this.parts.length <= MAX_BATCH_PARTS ? this.parts : [this.parts.join('')];
    const message: LiveOutputMessage = {
      type: 'output',
      parts,
      chars: this.batchChars,
      dropped: this.dropped,
    };
    this.parts = [];
    this.unacked += this.batchChars;
    this.batchChars = 0;
    this.dropped = 0;
    this.port.postMessage(message);
  }
}

/** Number of `\r\n` in `text`. */
function crlfCount(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\r\n'); at !== -1; at = text.indexOf('\r\n', at + 2)) count += 1;
  return count;
}
