/**
 * The raw channel (SPEC §2): what a person's terminal (`attach`, the watch page) and a recording draw
 * from — the pty's output as node-pty decoded it (streaming UTF-8: a character split across reads
 * arrives whole), the private prompt marker removed (readiness/private-marker-filter.ts). Each subscriber has
 * its own data port and ring, with the live plane's batching and acknowledgement watermarks
 * (live-output.ts): a subscriber that stops reading costs the engine a bounded ring and a count of
 * dropped characters, never unbounded memory. With no subscriber, nothing is filtered or copied.
 *
 * Where a subscriber's chunks begin is decided by the session: at a point of the stream where the
 * terminal model's snapshot is exact (session.ts, `openRaw`).
 */
import type { MessagePort } from 'node:worker_threads';
import { DisposableOwner } from '../../shared/lifecycle.js';
import { LiveOutputPublisher } from './live-output.js';

/** Removes the session's private marker from a stream of chunks (readiness/private-marker-filter.ts). */
export interface MarkerFilter {
  /** `chunk` without the markers it completes; the start of a possible marker is held back. */
  filter(chunk: string): string;
  /** Whether the start of a possible marker is held back. */
  readonly holding: boolean;
  /** Forgets what is held. */
  reset(): void;
}

/** The raw channel of one session: its subscribers and the marker filter they share. */
export class RawChannel extends DisposableOwner {
  private readonly subscribers = new Set<LiveOutputPublisher>();

  constructor(private readonly filter: MarkerFilter) {
    super();
  }

  /** Whether anyone subscribes (else {@link write} is not worth a call). */
  get active(): boolean {
    return this.subscribers.size > 0;
  }

  /** Whether the filter holds back the start of a possible marker (a new subscriber would miss it). */
  get holding(): boolean {
    return this.filter.holding;
  }

  /**
   * Starts publishing on `port` from the next {@link write} on. The subscription ends when either side
   * closes the port (the host's `RawView.dispose()`), or with the channel.
   */
  subscribe(port: MessagePort): void {
    const publisher = new LiveOutputPublisher(port, 'as-written');
    if (this.disposed) {
      publisher.dispose();
      return;
    }
    publisher.setEnabled(true);
    this.subscribers.add(publisher);
    const unsubscribe = this.owned.own('raw channel subscriber', () => {
      this.subscribers.delete(publisher);
      if (this.subscribers.size === 0) this.filter.reset();
      publisher.dispose(); // publishes what is pending and closes the port
    });
    this.owned.listen('raw channel port close listener', port, 'close', () => unsubscribe.dispose(), {
      once: true,
    });
  }

  /** A processed chunk of pty output, in stream order. */
  write(data: string): void {
    if (this.subscribers.size === 0) return;
    const text = this.filter.filter(data);
    if (text.length === 0) return;
    for (const subscriber of this.subscribers) subscriber.raw(text);
  }
}
