/**
 * The data plane (SPEC §2): live output to host subscribers, batched into records of the shared ring
 * (live-ring.ts) with a wake-up on the data port, and flow-controlled by the host's read position.
 * Nothing is sent while nobody subscribes. A subscriber that lags (the host stopped reading) makes the
 * engine drop output — counting it — instead of buffering without bound; the scrollback still holds
 * everything.
 */
import type { MessagePort } from 'node:worker_threads';
import { DisposableOwner, DisposableSlot } from '../../shared/lifecycle.js';
import {
  LIVE_HIGH_WATERMARK_BYTES,
  LIVE_LOW_WATERMARK_BYTES,
  LiveRingWriter,
} from '../../shared/live-ring.js';
import type { LiveOutputMessage, LiveOutputResume } from '../../shared/protocol.js';
import { utf8WithoutCrlf } from './crlf-to-lf.js';

/** Batch window: output becomes a record at most this long after it was read. */
const BATCH_MS = 5;
/** A batch becomes a record early once it reaches this many characters (~15 reads of a flood). */
const BATCH_MAX_CHARS = 64 * 1024;
/**
 * A batch of at most this many pieces is encoded piece by piece (a flood's batch is ~15 reads); one of
 * more, small pieces from a general-route stream, is joined first, which costs less than a call each.
 */
const MAX_BATCH_PARTS = 64;

/**
 * How a publisher writes its text into the ring: the live plane's sanitized lines turn CRLF into LF
 * (`lf`); the raw channel (raw-channel.ts) carries the pty's text as it was written (`as-written`).
 */
export type LiveLineEnds = 'lf' | 'as-written';

/** Batches output into the live ring while enabled. Disposing it publishes what is pending. */
export class LiveOutputPublisher extends DisposableOwner {
  /** Created on the first subscription: a session nobody watches allocates no ring. */
  private ring: LiveRingWriter | undefined;
  private enabled = false;
  private parts: string[] = [];
  private batchChars = 0;
  /** Whether every part of the batch is known to be ASCII (then it is copied, not encoded). */
  private batchAscii = true;
  /** Characters dropped since the last record (as subscribers count them). */
  private dropped = 0;
  private paused = false;
  /** Publishes the batch when its window ends. */
  private readonly batchTimer = this.owned.add(new DisposableSlot());

  constructor(
    private readonly port: MessagePort,
    private readonly lineEnds: LiveLineEnds = 'lf',
  ) {
    super();
    const onResume = (message: LiveOutputResume): void => {
      const ring = this.ring;
      if (message?.type !== 'resume' || !this.paused || ring === undefined) return;
      // Report the gap now, even if no further output comes to carry it.
      if (this.resumeIfRead()) this.publish();
      // A late answer to an earlier request (the engine resumed on its own and paused again since, and
      // the host took the new request for the old one): ask again, or nobody would answer this pause.
      else this.pause(ring);
    };
    this.owned.listen('live output resume listener', port, 'message', onResume);
    // Only resume messages arrive here; they must not keep the engine thread alive on their own.
    port.unref();
  }

  /** Turns publishing on or off. Turning it off discards any pending batch and the count of dropped output. */
  /** Whether output is published now (while not, nothing need be computed for it). */
  get active(): boolean {
    return this.enabled;
  }

  setEnabled(enabled: boolean): void {
    if (this.disposed) return;
    if (enabled && this.ring === undefined) {
      this.ring = new LiveRingWriter();
      this.post({ type: 'ring', buffer: this.ring.buffer });
    }
    this.enabled = enabled;
    if (!enabled) {
      this.batchTimer.clear();
      this.resetBatch();
      this.dropped = 0;
      this.paused = false;
    }
  }

  /** Text of the current line. */
  text(s: string): void {
    if (this.enabled) this.push(s, false, s.length);
  }

  /** End of line. */
  newline(): void {
    if (this.enabled) this.push('\n', true, 1);
  }

  /** Several lines at once, `\n` or `\r\n` ending each; `ascii` when all of it is. */
  textBlock(block: string, ascii: boolean): void {
    if (this.enabled) this.push(block, ascii, -1);
  }

  /** Start of a rewrite of the current line. */
  rewriteLine(): void {
    if (this.enabled) this.push('\r', true, 1);
  }

  /** Text as written (an `as-written` publisher: the raw channel). */
  raw(data: string): void {
    if (this.enabled) this.push(data, false, data.length);
  }

  /** Publishes what is pending and stops; idempotent. */
  override dispose(): void {
    if (this.disposed) return;
    this.publish();
    super.dispose();
    this.enabled = false;
    this.ring = undefined; // the host keeps the memory as long as it reads it
    this.port.close();
  }

  /** The batch as the ring's payload. */
  private encode(parts: string[]): { payload: Uint8Array; ascii: boolean } {
    if (this.lineEnds === 'lf')
      return { payload: utf8WithoutCrlf(parts, this.batchAscii), ascii: this.batchAscii };
    const text = parts.length === 1 ? parts[0]! : parts.join('');
    const payload = Buffer.from(text, 'utf8');
    // One byte per character only when every character is ASCII: then the host copies, not decodes.
    return { payload, ascii: payload.length === text.length };
  }

  /** What `s` is to subscribers, in characters (on the live plane CRLF is one character to them). */
  private subscriberChars(s: string): number {
    return this.lineEnds === 'lf' ? s.length - crlfCount(s) : s.length;
  }

  /** `subscriberChars`: what `s` is to subscribers, -1 to count it (see {@link subscriberChars}). */
  private push(s: string, ascii: boolean, subscriberChars: number): void {
    if (this.paused && !this.resumeIfRead()) {
      this.dropped += subscriberChars >= 0 ? subscriberChars : this.subscriberChars(s);
      return;
    }
    this.parts.push(s);
    this.batchChars += s.length;
    if (!ascii) this.batchAscii = false;
    if (this.batchChars >= BATCH_MAX_CHARS) this.publish();
    else this.armBatchTimer();
  }

  /** Publishes the batch once its window ends, unless a publish is already due. */
  private armBatchTimer(): void {
    if (this.batchTimer.value === undefined) {
      this.batchTimer.value = this.owned.timeout('live output batch', BATCH_MS, this.publish);
    }
  }

  /** Publishes the batch (or only the count of dropped output) as one record, waking the host if it sleeps. */
  private readonly publish = (): void => {
    this.batchTimer.clear();
    const ring = this.ring;
    if (this.disposed || ring === undefined || (this.batchChars === 0 && this.dropped === 0)) return;
    const parts = this.parts.length <= MAX_BATCH_PARTS ? this.parts : [this.parts.join('')];
    const { payload, ascii } = this.encode(parts);
    if (ring.append(payload, ascii, this.dropped)) {
      this.dropped = 0;
      if (ring.claimWake()) this.post({ type: 'output' });
      if (ring.unread() >= LIVE_HIGH_WATERMARK_BYTES) this.pause(ring);
    } else {
      // No room (the host is behind): the batch is dropped, and counted.
      for (const part of parts) this.dropped += this.subscriberChars(part);
      this.pause(ring);
    }
    this.resetBatch();
  };

  /** Stops publishing until the host has read down to the low watermark. */
  private pause(ring: LiveRingWriter): void {
    this.paused = true;
    if (ring.requestResume()) {
      // The host read it all in the meantime: no resume message will come.
      this.paused = false;
      if (this.dropped > 0) this.armBatchTimer();
    }
  }

  /** Resumes when the host has read down to the low watermark; returns whether it did. */
  private resumeIfRead(): boolean {
    if (this.ring !== undefined && this.ring.unread() <= LIVE_LOW_WATERMARK_BYTES) this.paused = false;
    return !this.paused;
  }

  private resetBatch(): void {
    this.parts = [];
    this.batchChars = 0;
    this.batchAscii = true;
  }

  private post(message: LiveOutputMessage): void {
    this.port.postMessage(message);
  }
}

/** Number of `\r\n` in `text`. */
function crlfCount(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\r\n'); at !== -1; at = text.indexOf('\r\n', at + 2)) count += 1;
  return count;
}
