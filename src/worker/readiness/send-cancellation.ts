/**
 * A send's cancellation (SPEC §4.4): whether it was asked for, the SIGINTs it delivered, and what still
 * stands between the send and a quiet terminal — the write in flight, which the signal waits for, and
 * the signal itself. The send keeps its slot until both settled (`quiesced`), so a successor never
 * receives its bytes or its signal. It also clears a line a cancelled write left half-typed at the
 * prompt (`clearResidue`).
 */
import type { WriteOutcome } from '../pty/pty-input-writer.js';
import type { TerminalPort } from './send-ports.js';

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
        this.terminal.interrupt();
        this.interrupts++;
      } catch (error) {
        this.fail(error);
      }
    })();
    return this.signal;
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
