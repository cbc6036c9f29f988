/**
 * One end of an execution world's link (SPEC §10): frames in from a readable stream, frames out to a
 * writable one, and heartbeats both ways. Both the server (`serve --stdio`, on its stdin/stdout) and
 * the client (`createRemoteEngine`, on its child's pipes) run one.
 *
 * The link is declared dead — once, with a coded error — when the input ends or fails, the output
 * fails, a frame is malformed, or the peer has been silent for {@link HEARTBEAT.SILENCE_MS}. Silence
 * is the only way to notice a link cut without a clean close (a dropped network path leaves both pipes
 * open) and a peer that hangs (a stopped process keeps its pipes open too).
 */
import type { Readable, Writable } from 'node:stream';
import { describeError, TerminalError } from '../../shared/errors.js';
import { DisposableStore } from '../../shared/lifecycle.js';
import type { Disposable } from '../../shared/types.js';
import { MAX_FRAME_BYTES } from '../../shared/world-protocol.js';
import { FrameDecoder } from './frame-decoder.js';

/** Heartbeat timing (the same on both ends). */
export const HEARTBEAT = {
  /** Each end pings this often: ~12 bytes a second, and a silent peer shows within a few intervals. */
  INTERVAL_MS: 1_000,
  /**
   * Silence this long means the peer or the link is gone. Five intervals: a GC pause, a loaded machine
   * or a briefly congested link is not mistaken for death, yet a cut link or a hung peer is noticed
   * within a few seconds. Any byte received counts as life, so a large frame in transit never expires.
   */
  SILENCE_MS: 5_000,
  /**
   * The check fired this much later than scheduled: this end's own event loop was blocked, and frames
   * may be waiting unread. Silence is then measured from now, not blamed on the peer.
   */
  STALL_MS: 2_000,
} as const;

/**
 * Output written but not yet taken by the peer, at most, before frames stop being read (SPEC §4.8): a
 * peer that never reads cannot grow this end by more than this (plus the answers already under way).
 */
export const MAX_UNSENT_BYTES = 16 * 1024 * 1024;
/**
 * While frames are not read, input is still taken off the stream up to this much, unprocessed: a
 * peer that stopped reading and then closed its end is seen closing (a stream ends only once read).
 */
const MAX_HELD_INPUT_BYTES = 1024 * 1024;

/** What a link reports to its owner. */
export interface WorldLinkHandlers<In> {
  /** A frame from the peer (heartbeats are handled by the link and not passed on). */
  onFrame(frame: In): void;
  /** The link is dead; called once. Every later `send` is ignored. */
  onClosed(error: TerminalError): void;
}

/** A framed, heartbeating link over a pair of streams. */
export class WorldLink<In extends { t: string }, Out extends { t: string }> {
  private readonly decoder = new FrameDecoder(MAX_FRAME_BYTES);
  /** The heartbeat's interval (started once the handshake is done). */
  private heartbeat: Disposable | undefined;
  /** The heartbeat and the stream listeners, released when the link closes or dies. */
  private readonly owned = new DisposableStore();
  private lastHeard = Date.now();
  private lastCheck = Date.now();
  private dead = false;
  /** The output is over {@link MAX_UNSENT_BYTES}: frames wait until it drained. */
  private blocked = false;
  /** Input taken off the stream while blocked. */
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** Unsent bytes at the previous heartbeat: a peer that takes output is alive, even unheard. */
  private unsentAtBeat = 0;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly handlers: WorldLinkHandlers<In>,
  ) {
    this.owned.listen('world link input listener', input, 'data', this.onData);
    this.owned.listen('world link input listener', input, 'end', this.onInputEnd);
    this.owned.listen('world link input listener', input, 'close', this.onInputEnd);
    // The error listeners live as long as the streams (not released on close): a late EPIPE or
    // ECONNRESET on a dead link must not become an uncaught error.
    input.on('error', this.onStreamError);
    output.on('error', this.onStreamError);
  }

  /** True once the link is dead or closed. */
  get closed(): boolean {
    return this.dead;
  }

  /** Bytes written but not yet taken by the operating system (the peer, or the link, is slow). */
  get bufferedBytes(): number {
    return this.output.writableLength;
  }

  /**
   * Starts pinging and watching for silence. The client starts it once the handshake is done (before
   * that, connection setup by ssh or kubectl may legitimately take longer than a heartbeat).
   */
  startHeartbeat(): void {
    if (this.dead || this.heartbeat !== undefined) return;
    this.lastHeard = Date.now();
    this.lastCheck = this.lastHeard;
    // Unref'd: the link's owner decides what keeps the process alive (pending calls, a served stdin).
    this.heartbeat = this.owned.interval('world link heartbeat', HEARTBEAT.INTERVAL_MS, this.beat, {
      unref: true,
    });
  }

  /**
   * Sends one frame; ignored once the link is dead. Throws `INVALID_CONFIG` (sending nothing) for a
   * frame the peer would refuse as too large — a result of a raised `maxReadBytes`, say — so the
   * caller can answer with an error instead of ending the link.
   */
  send(frame: Out): void {
    if (this.dead) return;
    const text = JSON.stringify(frame);
    // A UTF-16 unit is at most 3 bytes of UTF-8: only long frames need counting.
    if (text.length * 3 > MAX_FRAME_BYTES && Buffer.byteLength(text) > MAX_FRAME_BYTES) {
      throw new TerminalError(
        'INVALID_CONFIG',
        `a ${frame.t} frame of ${Buffer.byteLength(text)} bytes exceeds the protocol's ${MAX_FRAME_BYTES}; lower maxReadBytes`,
      );
    }
    this.output.write(`${text}\n`);
    if (!this.blocked && this.output.writableLength > MAX_UNSENT_BYTES) {
      this.blocked = true;
      this.owned.listen('world link drain listener', this.output, 'drain', this.onDrain, { once: true });
    }
  }

  private readonly onDrain = (): void => {
    this.blocked = false;
    if (this.dead) return;
    const held = this.held;
    this.held = [];
    this.heldBytes = 0;
    this.input.resume();
    for (let i = 0; i < held.length; i++) {
      if (this.blocked || this.dead) {
        if (!this.dead) this.hold(Buffer.concat(held.slice(i)));
        return;
      }
      this.onData(held[i]!);
    }
  };

  /** Keeps input for later; stops reading the stream once enough is held. */
  private hold(chunk: Buffer): void {
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    if (this.heldBytes >= MAX_HELD_INPUT_BYTES) this.input.pause();
  }

  /**
   * Closes the link from this end (no `onClosed` call): stops the heartbeat and ends the output, so
   * the peer reads end-of-stream after the last frame. Idempotent; also ends a link that died.
   */
  close(): void {
    if (!this.dead) this.detach();
    if (!this.output.writableEnded && !this.output.destroyed) this.output.end();
  }

  private readonly onData = (chunk: Buffer): void => {
    this.lastHeard = Date.now();
    if (this.blocked) {
      // Whole chunks wait: the frames answered so far filled the output, the peer is not reading it.
      this.hold(chunk);
      return;
    }
    let frames: unknown[];
    try {
      frames = this.decoder.push(chunk);
    } catch (error) {
      this.die(error as TerminalError);
      return;
    }
    for (const frame of frames as In[]) {
      if (this.dead) return;
      if (frame.t !== 'ping') this.handlers.onFrame(frame);
    }
  };

  private readonly onInputEnd = (): void => {
    this.die(new TerminalError('TRANSPORT_CLOSED', 'the link closed: the peer ended the stream'));
  };

  private readonly onStreamError = (error: Error): void => {
    this.die(
      new TerminalError('TRANSPORT_CLOSED', `the link failed: ${describeError(error)}`, { cause: error }),
    );
  };

  private readonly beat = (): void => {
    const now = Date.now();
    if (now - this.lastCheck > HEARTBEAT.STALL_MS) this.lastHeard = now;
    this.lastCheck = now;
    // Not reading (blocked), this end hears nothing; a peer that takes output meanwhile is alive.
    const unsent = this.output.writableLength;
    if (this.blocked && unsent < this.unsentAtBeat) this.lastHeard = now;
    this.unsentAtBeat = unsent;
    if (now - this.lastHeard > HEARTBEAT.SILENCE_MS) {
      this.die(
        new TerminalError(
          'TRANSPORT_CLOSED',
          `the link went silent: no heartbeat for ${now - this.lastHeard} ms (the peer hangs or the link was cut)`,
        ),
      );
      return;
    }
    this.send({ t: 'ping' } as Out);
  };

  private die(error: TerminalError): void {
    if (this.dead) return;
    this.detach();
    // A write to a dead pipe would only raise EPIPE again; the owner decides how to end the streams.
    this.handlers.onClosed(error);
  }

  private detach(): void {
    this.dead = true;
    this.owned.dispose(); // the heartbeat, the input and drain listeners; the error listeners stay
    this.held = [];
    this.heldBytes = 0;
  }
}
