/**
 * Tracks prompt evidence in the sanitized stream (SPEC §4.2 rule 1): a candidate exists only while the
 * printable text after the latest owned marker equals the dialect's controlled prompt exactly — also
 * when marker and prompt arrive split across data callbacks. Any further text (echoed input, output)
 * voids it. A repaint of a prompt that was already shown before the write boundary (same shell, same
 * prompt number) is never a candidate: the line editor redraws on SIGWINCH, so a send right after a
 * resize would otherwise be answered by the repaint before the shell even read the command.
 */
import { type PromptMarker, parseOwnedMarker } from './prompt-marker.js';

/** A marker followed by exactly the controlled prompt. */
export interface PromptCandidate extends PromptMarker {
  /** `performance.now()` when the prompt text completed. */
  at: number;
  /** True once a result carried this marker's exit code (a later wait-only send does not repeat it). */
  reported: boolean;
}

/**
 * Follows markers and prompt text; `candidate` is set while the stream ends in marker + PS1. One per
 * session, fed all the time (also between sends), so a wait-only send sees a prompt that arrived after
 * the previous result; a send with input resets it at its write boundary.
 */
export class PromptTracker {
  private marker: PromptMarker | undefined;
  private tail = '';
  private completedAt = 0;
  private reported = false;
  /** The last marker seen (kept across `reset`), to tell a repaint from a new prompt. */
  private lastSeen: PromptMarker | undefined;
  /** The prompt that was current at the last write boundary: its repaints are not new prompts. */
  private staleAtBoundary: PromptMarker | undefined;
  /** New prompts (not repaints) since the last write boundary. */
  private newPrompts = 0;

  constructor(
    private readonly nonce: string,
    /** The controlled prompt text that must follow the marker exactly. */
    readonly prompt: string,
  ) {}

  /** The current candidate, or undefined. */
  get candidate(): PromptCandidate | undefined {
    if (this.marker === undefined || this.tail !== this.prompt) return undefined;
    return { ...this.marker, at: this.completedAt, reported: this.reported };
  }

  /** A result carried the current marker's exit code and cwd. */
  markReported(): void {
    this.reported = true;
  }

  /** Forget everything (the write boundary: evidence from before a write never counts). */
  reset(): void {
    this.marker = undefined;
    this.tail = '';
    this.staleAtBoundary = this.lastSeen;
    this.newPrompts = 0;
  }

  /** How many new prompts (repaints not counted) arrived since the last write boundary. */
  get promptsSinceBoundary(): number {
    return this.newPrompts;
  }

  /** An OSC payload arrived. Returns true when it was one of ours. */
  osc(payload: string): boolean {
    const marker = parseOwnedMarker(payload, this.nonce);
    if (marker === undefined) return false;
    this.tail = '';
    if (samePrompt(marker, this.staleAtBoundary)) {
      this.marker = undefined; // a repaint of the prompt the input was typed at: no news
      return true;
    }
    // A repaint between sends keeps `reported`: its exit code was already given.
    if (!samePrompt(marker, this.lastSeen)) {
      this.reported = false;
      this.newPrompts += 1;
    }
    this.marker = marker;
    this.lastSeen = marker;
    return true;
  }

  /** Printable text arrived. */
  text(s: string): void {
    if (this.marker === undefined) return;
    if (this.tail.length + s.length > this.prompt.length) {
      this.marker = undefined; // more than a prompt follows the marker: not at our prompt
      return;
    }
    this.tail += s;
    if (this.tail === this.prompt) this.completedAt = performance.now();
    else if (!this.prompt.startsWith(this.tail)) this.marker = undefined;
  }

  /** A line ended: whatever follows the marker is not a bare prompt any more. */
  newline(): void {
    this.marker = undefined;
  }

  /** Several lines at once: only what follows the last line end can still be a prompt. */
  textBlock(block: string): void {
    if (this.marker === undefined) return; // no marker to follow (a flood's usual case): nothing to look at
    const lastEnd = block.lastIndexOf('\n');
    if (lastEnd !== -1) this.newline();
    const rest = lastEnd === -1 ? block : block.slice(lastEnd + 1);
    if (rest !== '') this.text(rest);
  }

  /** A carriage-return rewrite of the current line restarts the prompt text after the marker. */
  rewriteLine(): void {
    this.tail = '';
  }
}

/** Whether two markers come from the same prompt of the same shell (one is a repaint of the other). */
function samePrompt(a: PromptMarker, b: PromptMarker | undefined): boolean {
  return b !== undefined && a.shellPid === b.shellPid && a.promptNumber === b.promptNumber;
}
