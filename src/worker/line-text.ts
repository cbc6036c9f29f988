/**
 * Line text: output made only of printable characters, TAB, LF and CR — no escape sequence and no other
 * control. A `cat` of a log, plain compiler output and `seq` all look like this, so it is what a flood
 * usually is. The session checks each batch of output once with {@link isLineText}. A batch that is
 * line text then takes the cheap route through both consumers, `TerminalReplier.feedLineText` and
 * `OutputSanitizer.pushLineText`, and neither scans it again. A batch that is not line text takes the
 * general route.
 *
 * The check is one sticky, greedy character-class regex, which V8's irregexp compiles to a tight loop.
 * Measured on 32 KiB chunks of a CRLF log, this form scans in about 0.6 ns per character. A search for
 * the first excluded character costs 0.9–1.2 ns, and a `charCodeAt` loop costs over 2 ns. The
 * ASCII-only class is tried first because it has fewer ranges and is measurably faster. Text with
 * other characters continues with the wider class from where the ASCII one stopped.
 */

/** Printable ASCII, and TAB, LF, VT, FF, CR (0x09–0x0D); VT and FF are excluded separately. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the class is defined by control codes
const ASCII_LINE_TEXT = /[\x09-\x0d\x20-\x7e]*/y;
/** As above, plus every character from U+00A0 on (C1 controls U+0080–U+009F stay excluded). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the class is defined by control codes
const WIDE_LINE_TEXT = /[\x09-\x0d\x20-\x7e\xa0-\uffff]*/y;

/** True when `text` holds only printable characters (U+0020–U+007E, U+00A0 and up), TAB, LF and CR. */
export function isLineText(text: string): boolean {
  ASCII_LINE_TEXT.lastIndex = 0;
  ASCII_LINE_TEXT.test(text);
  let end = ASCII_LINE_TEXT.lastIndex;
  if (end < text.length && text.charCodeAt(end) >= 0xa0) {
    WIDE_LINE_TEXT.lastIndex = end;
    WIDE_LINE_TEXT.test(text);
    end = WIDE_LINE_TEXT.lastIndex;
  }
  // VT and FF share the fast class's range (fewer ranges scan faster); `indexOf` of one character is a
  // memchr, far cheaper than a wider class. Both are line ends a terminal honours, so they are excluded.
  return end === text.length && text.indexOf('\x0b') === -1 && text.indexOf('\x0c') === -1;
}
