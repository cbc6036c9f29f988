/**
 * The host's end of one session's live output (SPEC §2, data plane): reads the engine's ring
 * (live-ring.ts) and hands each record to the subscribers as an `OutputChunk`.
 *
 * The host reads when the engine wakes it, and then again every {@link READ_EVERY_MS} for as long as
 * records keep coming; once a read finds none, it goes back to sleep. A flood thus costs no message in
 * either direction: the host's own timer paces the reads, and its read position is the acknowledgement.
 */
import type { MessagePort } from 'node:worker_threads';
import { DisposableSlot, DisposableStore } from '../../shared/lifecycle.js';
import { LiveRingReader } from '../../shared/live-ring.js';
import type { LiveOutputMessage, LiveOutputResume } from '../../shared/protocol.js';
import type { OutputChunk } from '../../shared/types.js';

/**
 * While output flows, the host reads the ring this often. At a flood's ~60 MB/s that is ~300 KiB a
 * read, well below the 1 MiB at which the engine would pause; a few ms of delay do not matter to a
 * subscriber, which the engine already batches for 5 ms.
 */
const READ_EVERY_MS = 5;
/**
 * Records handed to subscribers per turn of the event loop at most (a record is up to ~64 KiB): a host
 * that fell behind catches up in turns, so a slow subscriber does not hold the harness's other work
 * for the whole backlog at once.
 */
const RECORDS_PER_TURN = 8;

/** Receives live output on a session's data port and delivers it to `deliver`. */
export class LiveOutputReceiver {
  private ring: LiveRingReader | undefined;
  /** The port listener and the next read's timer. */
  private readonly owned = new DisposableStore();
  /** The next read: on the next turn (more records wait) or after READ_EVERY_MS. At most one. */
  private readonly nextRead = this.owned.add(new DisposableSlot());

  /**
   * `deliver` is called for each record, or null when nobody subscribes (records are then read and
   * dropped undecoded, so the ring never holds stale output for a later subscriber).
   */
  constructor(
    private readonly port: MessagePort,
    private readonly deliver: () => ((chunk: OutputChunk) => void) | null,
  ) {
    const onMessage = (message: LiveOutputMessage): void => {
      if (message?.type === 'ring') this.ring = new LiveRingReader(message.buffer);
      else if (message?.type === 'output') this.read();
    };
    this.owned.listen('live output port listener', port, 'message', onMessage);
  }

  /**
   * Reads what is left, all of it, and stops; idempotent. The caller closes the port. Called when the
   * session has closed (or its thread died): the engine wrote its last batch as it closed, and neither
   * a wake-up nor the read timer may come in time for it.
   */
  dispose(): void {
    if (this.owned.disposed) return;
    this.owned.dispose();
    this.ring?.drain(this.subscribers());
  }

  private readonly read = (): void => {
    this.nextRead.clear();
    const ring = this.ring;
    if (this.owned.disposed || ring === undefined) return;
    const records = ring.drain(this.subscribers(), RECORDS_PER_TURN);
    if (ring.claimResume()) {
      const resume: LiveOutputResume = { type: 'resume' };
      this.port.postMessage(resume);
    }
    // Live output alone must not keep the host process alive (the subscribed port does that).
    const unref = { unref: true };
    if (records === RECORDS_PER_TURN) {
      this.nextRead.value = this.owned.immediate('live output read', this.read, unref); // more may wait
    } else if (records > 0 || !ring.trySleep()) {
      this.nextRead.value = this.owned.timeout('live output read', READ_EVERY_MS, this.read, unref);
    }
  };

  /** What the ring hands records to: the subscribers, or nothing (records skipped) when there are none. */
  private subscribers(): ((text: string, dropped: number) => void) | undefined {
    const deliver = this.deliver();
    return deliver === null ? undefined : (text, dropped) => deliver({ text, dropped });
  }
}
