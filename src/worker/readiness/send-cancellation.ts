/**
 * A send's cancellation (SPEC §4.4): whether it was asked for, the SIGINTs it delivered, and what still
 * stands between the send and a quiet terminal — the write in flight, which the signal waits for, and
 * the signal itself. The send keeps its slot until both settled (`quiesced`), so a successor never
 * receives its bytes or its signal. It also clears a line a cancelled write left half-typed at the
 * prompt (`clearResidue`).
 */
import type { WriteOutcome } from '../pty/pty-input-writer.js';
import type { TerminalPort } from './send-ports.js';

/**
 * SIGINTs a cancel sends at most to foreground groups that took the terminal after its own signal
 * (see {@link SendCancellation.followForeground}).
 */
const MAX_FOLLOW_UPS = 2;
/**
 * How long the group a cancel signalled may keep the terminal, still running, before it is signalled
 * again: a SIGINT that arrives while the command's process is between fork and exec is lost on it
 * (the shell's child ignores it there), and the program it becomes never saw it.
 */
const FOLLOW_UP_AFTER_MS = 250;

/** How long a half-typed line must sit at the prompt, output-free, before a cancel clears it. */
const RESIDUE_CONFIRM_MS = 20;

/** The write of a send as the cancellation sees it: `failed` when it rejected (the send failed). */
export type SendWrite = Promise<WriteOutcome | 'failed'>;

/** The half-typed line a cancelled write may have left, as first seen. */
interface Residue {
  /** The send's output count when it was first seen: any output since voids it. */
  readonly outputSeq: number;
  readonly at: number;
}

/** One send's cancellation. */
export class SendCancellation {
  private write: SendWrite = Promise.resolve('written');
  /** The cancel's signal, once asked for (resolved: none). */
  private signal: Promise<void> | undefined;
  private interrupts = 0;
  /** The process groups this cancel signalled. */
  private readonly signalled = new Set<number>();
  private followUps = 0;
  /** When this cancel last signalled (`performance.now()` ms). */
  private lastSignalAt = 0;
  private residue: Residue | undefined;

  constructor(
    private readonly terminal: Pick<TerminalPort, 'interrupt'>,
    /** The send fails with a signal's transport failure. */
    private readonly fail: (error: unknown) => void,
  ) {}

  /** Whether the send was cancelled: queued input is never written, the line editor's wait is no proof. */
  get requested(): boolean {
    return this.signal !== undefined;
  }

  /** Resolves once the cancel's signal was delivered (or could not be); at once when none was asked for. */
  get delivered(): Promise<void> {
    return this.signal ?? Promise.resolve();
  }

  /** The send's write began: a cancel's signal waits for it, and so does the slot's release. */
  writeStarted(write: SendWrite): void {
    this.write = write;
  }

  /**
   * Asks for the cancel: once the write settled, unless it failed or `stillWanted()` turned false (the
   * send settled meanwhile), one real SIGINT to the foreground group (never `\x03`). Asking again returns
   * the first request's promise.
   */
  request(stillWanted: () => boolean): Promise<void> {
    this.signal ??= (async () => {
      const outcome = await this.write;
      if (outcome === 'failed' || !stillWanted()) return;
      try {
        this.signalled.add(this.terminal.interrupt());
        this.lastSignalAt = performance.now();
        this.interrupts++;
      } catch (error) {
        this.fail(error);
      }
    })();
    return this.signal;
  }

  /**
   * Called by each probe while the cancelled send waits. Its SIGINT can be lost two ways, both seen in
   * the README's example (`sleep 30` cancelled right after it was typed, once in ~25 runs, the send
   * then waiting out the sleep): it reaches the shell's group between reading the line and handing the
   * terminal to the command's new group, or the command's group while its process is between fork and
   * exec. So a group other than the shell's that holds the terminal gets a SIGINT when none of this
   * cancel's reached it, or again when it still holds it {@link FOLLOW_UP_AFTER_MS} after the last one —
   * as a person presses Ctrl-C again when nothing happened. At most {@link MAX_FOLLOW_UPS}, and never
   * the shell's own group (at its prompt there is nothing to interrupt; a half-typed line is the
   * residue rule's). A program that waits for input after the first SIGINT settles the send before.
   */
  followForeground(tpgid: number, shellPgrp: number): void {
    if (this.interrupts === 0 || this.followUps >= MAX_FOLLOW_UPS) return;
    if (tpgid <= 0 || tpgid === shellPgrp) return;
    const now = performance.now();
    if (this.signalled.has(tpgid) && now - this.lastSignalAt < FOLLOW_UP_AFTER_MS) return;
    this.followUps++;
    try {
      this.signalled.add(this.terminal.interrupt());
      this.lastSignalAt = now;
    } catch (gone) {
      // The group left the terminal since the sample (the command ended): nothing is left to interrupt,
      // and the cancel itself was delivered, so the send does not fail for it.
      void gone;
    }
  }

  /** Resolves once neither a byte nor a signal of this send can still reach the terminal. */
  async quiesced(): Promise<void> {
    await this.write;
    await this.signal;
  }

  /**
   * A cancelled write can leave part of a line typed at the prompt (its slice was already in the kernel).
   * One more SIGINT makes the line editor discard it and print a fresh prompt, so the residue never joins
   * the next send's command. Only once the state held, without any output (`outputSeq` unchanged), for
   * RESIDUE_CONFIRM_MS: a prompt still unread in the pty buffer would otherwise look like residue.
   * `holdsPartialLine` is asked only after the cancel's own SIGINT and before this one.
   */
  clearResidue(holdsPartialLine: () => boolean, outputSeq: number): void {
    if (this.interrupts !== 1 || !holdsPartialLine()) {
      this.residue = undefined;
      return;
    }
    const seen = this.residue;
    const now = performance.now();
    if (seen === undefined || seen.outputSeq !== outputSeq) {
      this.residue = { outputSeq, at: now };
    } else if (now - seen.at >= RESIDUE_CONFIRM_MS) {
      try {
        this.terminal.interrupt();
      } catch {
        // The shell vanished; exit handling settles the send.
      }
      this.interrupts++;
    }
  }
}
