/**
 * The interactive CLI's view of a session's live output (SPEC §7): while a send runs, its output is
 * printed as it arrives, like a terminal would; between sends, complete lines (a background job, the
 * rest of a command that returned `running`) are printed above the CLI's prompt. Results are then shown
 * as their status lines only, so no text is printed twice.
 */
import { DisposableStore } from '../../shared/lifecycle.js';
import type { OutputChunk } from '../../shared/types.js';
import { finalStateOfLine } from '../tools/live-lines.js';

/**
 * Longest wait, after a send settled, for its last output line to come through the live stream (which
 * is batched for ~5 ms in the engine and read every ~5 ms by the host, apart from the result's path):
 * the status lines then follow the output instead of cutting into it.
 */
const TAIL_WAIT_MS = 300;
/** Room after the result's last line for the partial line that follows it (the shell's prompt). */
const TAIL_SCAN_EXTRA_CHARS = 4096;
/** Streamed text kept to recognise the result's last line in (characters, newest kept). */
const STREAM_WINDOW_CHARS = 64 * 1024;

/** What the echo needs from the CLI around it. */
export interface LiveEchoTarget {
  /** Writes text to the person's terminal. */
  write(text: string): void;
  /** Erases the CLI's own prompt line, before output is printed between sends. */
  clearPrompt(): void;
  /** Shows the CLI's prompt again (with what the person typed so far). */
  redrawPrompt(): void;
}

/** Prints live output; `push` is the session's `onOutput` listener. */
export class LiveEcho {
  private sending = false;
  /**
   * Text printed since the previous result (tail window), to find the next result's last line in: a
   * result may end with lines printed between sends (the rest of a command that returned `running`).
   */
  private streamed = '';
  /** Between sends: a line that has not ended yet. */
  private idlePartial = '';
  private atLineStart = true;
  private dropped = 0;
  private tailSeen: (() => void) | undefined;
  private tailLine = '';

  constructor(private readonly target: LiveEchoTarget) {}

  /** Takes one chunk of live output. */
  readonly push = (chunk: OutputChunk): void => {
    this.dropped += chunk.dropped;
    if (this.sending) this.print(chunk.text);
    else this.holdBetweenSends(chunk.text);
  };

  /** A send starts: output from here on is printed as it arrives. */
  beginSend(): void {
    this.sending = true;
    this.dropped = 0;
    const partial = this.idlePartial;
    this.idlePartial = '';
    if (partial !== '') this.print(partial);
  }

  /**
   * The send settled with `viewport`: waits (briefly) until its last line has been printed, ends the
   * current line, and says if live output was dropped. Then the caller prints the status lines.
   */
  async endSend(viewport: string): Promise<void> {
    const lastLine = viewport.replace(/\n+$/, '').split('\n').at(-1) ?? '';
    if (lastLine !== '' && !this.hasPrinted(lastLine)) {
      await new Promise<void>((resolve) => {
        const wait = new DisposableStore();
        wait.timeout('live echo tail wait', TAIL_WAIT_MS, () => this.tailSeen?.());
        this.tailLine = lastLine;
        this.tailSeen = () => {
          wait.dispose();
          this.tailSeen = undefined;
          resolve();
        };
      });
    }
    this.sending = false;
    if (!this.atLineStart) this.print('\n');
    if (this.dropped > 0) {
      this.print(`[live output: ${this.dropped} characters dropped; :read pages the scrollback]\n`);
      this.dropped = 0;
    }
    this.streamed = '';
  }

  private print(text: string): void {
    if (text === '') return;
    this.target.write(text);
    this.atLineStart = text.endsWith('\n');
    this.streamed = (this.streamed + text).slice(-STREAM_WINDOW_CHARS);
    if (this.tailSeen !== undefined && this.hasPrinted(this.tailLine)) this.tailSeen();
  }

  /**
   * Whether the stream has reached `line`: it is the line being written, or the last complete one (the
   * shell's prompt may follow it). An earlier occurrence (the echo of the command) does not count.
   */
  private hasPrinted(line: string): boolean {
    // Only the end matters: the line and the partial line after it (a prompt).
    const lines = this.streamed
      .slice(-(line.length + TAIL_SCAN_EXTRA_CHARS))
      .split('\n')
      .map(finalStateOfLine);
    return lines.at(-1) === line || lines.at(-2) === line;
  }

  private holdBetweenSends(text: string): void {
    const pending = this.idlePartial + text;
    const end = pending.lastIndexOf('\n');
    if (end === -1) {
      this.idlePartial = pending.slice(-STREAM_WINDOW_CHARS);
      return;
    }
    this.idlePartial = pending.slice(end + 1);
    this.target.clearPrompt();
    this.print(pending.slice(0, end + 1));
    this.target.redrawPrompt();
  }
}
