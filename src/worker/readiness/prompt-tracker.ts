/**
 * Tracks prompt evidence (SPEC §4.2 rule 1): a candidate exists only while the terminal shows the
 * latest owned marker followed by exactly the dialect's controlled prompt on its row, with the cursor
 * right after it (read from the terminal model's screen, replies/terminal-model.ts) — also when marker
 * and prompt arrive split across data callbacks. Any further text (echoed input, output) voids it. A
 * repaint of a prompt that was already shown before the write boundary (same shell, same prompt number)
 * is never a candidate: the line editor redraws on SIGWINCH, so a send right after a resize would
 * otherwise be answered by the repaint before the shell even read the command.
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
  /** When the current marker's prompt was first seen complete (0: not yet). */
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
    /** Whether the screen shows the latest marker followed by exactly `prompt`, the cursor after it. */
    private readonly shown: (prompt: string) => boolean,
  ) {}

  /** The current candidate, or undefined. */
  get candidate(): PromptCandidate | undefined {
    if (this.marker === undefined || !this.shown(this.prompt)) return undefined;
    if (this.completedAt === 0) this.completedAt = performance.now();
    return { ...this.marker, at: this.completedAt, reported: this.reported };
  }

  /** A result carried the current marker's exit code and cwd. */
  markReported(): void {
    this.reported = true;
  }

  /** Forget everything (the write boundary: evidence from before a write never counts). */
  reset(): void {
    this.marker = undefined;
    this.completedAt = 0;
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
    this.completedAt = 0;
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
}

/** Whether two markers come from the same prompt of the same shell (one is a repaint of the other). */
function samePrompt(a: PromptMarker, b: PromptMarker | undefined): boolean {
  return b !== undefined && a.shellPid === b.shellPid && a.promptNumber === b.promptNumber;
}
