/**
 * The input caps of one send (SPEC §4.7): its text (config `maxInputBytes`), checked on the host before
 * the call crosses to the engine thread and again in the engine thread before anything is written; and
 * its `waitFor` expression, bounded alike by the engine (wait-pattern.ts) and the terminal_send tool.
 */
import { TerminalError } from './errors.js';

/** Longest accepted `waitFor` expression: a pattern is a few words, not a program. */
export const MAX_WAIT_PATTERN_CHARS = 4_096;

/** Throws `INPUT_TOO_LARGE` when `text`, encoded as UTF-8, is longer than `maxBytes`. */
export function assertInputWithinLimit(text: string, maxBytes: number): void {
  if (utf8Length(text, maxBytes) > maxBytes) {
    throw new TerminalError(
      'INPUT_TOO_LARGE',
      `the input (${text.length} characters) is larger than the limit of ${maxBytes} bytes per send (maxInputBytes)`,
    );
  }
}

/**
 * UTF-8 length of `text`, counted only as far as needed: every UTF-16 unit is 1 to 3 bytes (a surrogate
 * pair, two units, is 4), so most lengths are decided without a scan. Returns a value > `limit` as soon
 * as the text is known to exceed it.
 */
function utf8Length(text: string, limit: number): number {
  if (text.length > limit) return text.length;
  if (text.length * 3 <= limit) return text.length;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    bytes += unit < 0x80 ? 1 : unit < 0x800 || (unit >= 0xd800 && unit < 0xe000) ? 2 : 3;
    if (bytes > limit) return bytes;
  }
  return bytes;
}
