/**
 * Which terminal replies reach the pty (SPEC §4.3 "Terminal replies"). A real terminal answers every
 * query, but a reply nobody reads is typed into whatever reads the terminal next: `cat` of a file full
 * of `ESC[6n` used to leave `R1;2c…` at the shell's prompt, in front of the next command. So a reply is
 * held here and written only when a program can be waiting for it:
 *
 * - no prompt marker follows its query in the stream already read (the shell printed its prompt after
 *   the query: whoever asked has finished). The replier counts the markers it parses, in stream order
 *   with the replies, so "markers parsed now > markers parsed when the reply was made" is exactly "a
 *   marker follows the query". Once the terminal model has parsed every byte read, that count is final;
 * - within {@link REPLY_WAIT_MS} of the query, a sample of the foreground group shows a thread blocked
 *   reading the terminal that is not the shell waiting in its own line editor. bash at its prompt waits
 *   in readline's `pselect6`; bash's `read -sdR -p $'\e[6n'` waits in `read(0)` and is answered. A
 *   dialect whose line editor itself asks (PSReadLine) counts its shell's wait too.
 *
 * A reply that meets neither within the wait is dropped. Volume is bounded twice: the replies held here
 * ({@link MAX_HELD_REPLY_CHARS}) and the rate at which they are written ({@link REPLY_BYTES_PER_SECOND}
 * with a burst of {@link REPLY_BURST_CHARS}); everything past either is dropped and counted.
 */
import { performance } from 'node:perf_hooks';
import { DisposableOwner, DisposableSlot } from '../../shared/lifecycle.js';
import type { ForegroundSample, ThreadWait } from '../proc/stdin-wait.js';

/** How long after its query a reply may wait for a reader (SPEC §4.3). */
export const REPLY_WAIT_MS = 200;

/**
 * Reply characters held at most. Real programs ask a handful of questions at a time (vim asks about
 * five at startup, ~100 characters of answers); more than this is query spam.
 */
const MAX_HELD_REPLY_CHARS = 4 * 1024;

/**
 * Sustained reply rate, in characters per second. A program asking back to back (a cursor request per
 * send, ~1000 sends a second at most here) needs about 10 KB/s; spam gets no more than this.
 */
const REPLY_BYTES_PER_SECOND = 64 * 1024;

/** Replies written at once before the rate applies: several full-screen programs starting together. */
const REPLY_BURST_CHARS = 16 * 1024;

/** Longest pause between two looks at a held reply: keeps a reader waiting for its answer ≤ this long. */
const MAX_CHECK_INTERVAL_MS = 8;

/** What the gate needs from its session. */
export interface ReplyGateEnvironment {
  /** Processes output already read, so the terminal model is fed every byte (and marker) read so far. */
  flushOutput(): void;
  /** True while the terminal model has fed output left to parse: its marker count is not final yet. */
  replierBusy(): boolean;
  /** Prompt markers the terminal model has parsed so far. */
  markersParsed(): number;
  /** A sample of the terminal's foreground group; undefined when it cannot be read. */
  sample(): ForegroundSample | undefined;
  /**
   * Whether `wait` is the shell waiting in its own line editor, which does not count as a reader
   * (always false when the dialect's line editor asks questions itself: then every wait counts).
   */
  isShellLineEditorWait(wait: ThreadWait): boolean;
  /** Writes a reply; false when it was dropped (the writer is full or closed). */
  write(data: string): boolean;
}

/** Counters for tests and benchmarks. */
export interface ReplyGateStats {
  /** Replies handed to the writer. */
  written: number;
  /** Replies dropped: no reader in time, a marker followed, or over a bound. */
  dropped: number;
}

interface HeldReply {
  data: string;
  /** Markers the terminal model had parsed when it made this reply (all of them before the query). */
  markersBefore: number;
  /** `performance.now()` when the reply was made. */
  madeAt: number;
}

/** Holds terminal replies until a reader is proven or their wait ends. Disposing it closes it. */
export class ReplyGate extends DisposableOwner {
  private held: HeldReply[] = [];
  private heldChars = 0;
  /** The next look at the held replies, after a delay or on the next turn: at most one is armed. */
  private readonly checkTimer = this.owned.add(new DisposableSlot());
  private readonly checkImmediate = this.owned.add(new DisposableSlot());
  private checks = 0;
  private tokens = REPLY_BURST_CHARS;
  private tokensAt = performance.now();
  private waiters: (() => void)[] = [];
  private readonly counters: ReplyGateStats = { written: 0, dropped: 0 };

  constructor(private readonly env: ReplyGateEnvironment) {
    super();
  }

  /** True while a reply is held (a program may be blocked until it is written). */
  get pending(): boolean {
    return this.held.length > 0;
  }

  /** A snapshot of the counters. */
  get stats(): ReplyGateStats {
    return { ...this.counters };
  }

  /** A reply the terminal model made while `markersBefore` markers had been parsed. */
  offer(data: string, markersBefore: number): void {
    if (this.disposed || this.heldChars + data.length > MAX_HELD_REPLY_CHARS) {
      this.counters.dropped += 1;
      return;
    }
    this.held.push({ data, markersBefore, madeAt: performance.now() });
    this.heldChars += data.length;
    this.checkSoon();
  }

  /** The replier parsed a prompt marker: the replies held so far are answered by nobody. */
  markerParsed(): void {
    if (this.held.length > 0) this.checkSoon();
  }

  /** Resolves once no reply is held (written or dropped), or the gate is closed. */
  whenSettled(): Promise<void> {
    if (this.held.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Drops everything held and stops its checks; later offers are dropped. Idempotent. */
  override dispose(): void {
    if (this.disposed) return;
    super.dispose();
    this.counters.dropped += this.held.length;
    this.clearHeld();
    this.settle();
  }

  private checkSoon(): void {
    if (this.checkImmediate.value !== undefined || this.disposed) return;
    this.checkTimer.clear();
    this.checkImmediate.value = this.owned.immediate('reply check', this.check);
  }

  private readonly check = (): void => {
    this.checkTimer.clear();
    this.checkImmediate.clear();
    if (this.disposed || this.held.length === 0) return;
    this.env.flushOutput();
    const markers = this.env.markersParsed();
    this.dropWhere((reply) => reply.markersBefore < markers);
    // While the terminal model has output left, a marker may still follow: decide once it caught up.
    if (this.held.length > 0 && !this.env.replierBusy() && this.readerWaiting()) this.writeHeld();
    const now = performance.now();
    this.dropWhere((reply) => now - reply.madeAt >= REPLY_WAIT_MS);
    if (this.held.length === 0) {
      this.checks = 0;
      this.settle();
      return;
    }
    // Look again soon (a reader calls read() just after printing its question), then less often.
    this.checks += 1;
    const delay = Math.min(2 ** (this.checks - 1), MAX_CHECK_INTERVAL_MS);
    this.checkTimer.value = this.owned.timeout('reply check', delay, this.check);
  };

  /**
   * A thread of the foreground group is blocked reading the terminal, other than the shell in its line
   * editor — or polls it with a short timeout: a program waiting for its answer often polls (vim on its
   * way out polls for the replies to its queries, and does not exit until they came).
   */
  private readerWaiting(): boolean {
    const sample = this.env.sample();
    if (sample === undefined) return false;
    return sample.members.some(
      (member) =>
        member.pollsTerminal === true ||
        (member.verdict === 'waiting' && !this.env.isShellLineEditorWait(member)),
    );
  }

  private writeHeld(): void {
    const now = performance.now();
    this.tokens = Math.min(
      REPLY_BURST_CHARS,
      this.tokens + ((now - this.tokensAt) * REPLY_BYTES_PER_SECOND) / 1000,
    );
    this.tokensAt = now;
    for (const reply of this.held) {
      if (reply.data.length <= this.tokens && this.env.write(reply.data)) {
        this.tokens -= reply.data.length;
        this.counters.written += 1;
      } else {
        this.counters.dropped += 1;
      }
    }
    this.clearHeld();
  }

  private dropWhere(predicate: (reply: HeldReply) => boolean): void {
    if (!this.held.some(predicate)) return;
    const kept = this.held.filter((reply) => !predicate(reply));
    this.counters.dropped += this.held.length - kept.length;
    this.held = kept;
    this.heldChars = kept.reduce((sum, reply) => sum + reply.data.length, 0);
  }

  private clearHeld(): void {
    this.held = [];
    this.heldChars = 0;
  }

  private settle(): void {
    if (this.waiters.length === 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
