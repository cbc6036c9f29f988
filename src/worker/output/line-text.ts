/**
 * Line text: output made only of printable characters, TAB, LF and CR — no escape sequence and no other
 * control. A `cat` of a log, plain compiler output and `seq` all look like this, so it is what a flood
 * usually is. The session checks each batch of output once with {@link lineTextKind}, which for ASCII
 * also finds where its line feeds are (line-feeds.ts). The terminal model's pass-through takes a batch
 * that is line text (or is once its colours are removed: a colored log) straight to the scrollback,
 * and xterm parses it only lazily, if ever (replies/terminal-model.ts).
 *
 * The ASCII part of the check is a SIMD scan (ascii-line-scan.ts) where WebAssembly SIMD is available.
 * Otherwise it is a sticky, greedy character-class regex, which V8's irregexp compiles to a tight loop.
 * Measured on 32 KiB chunks of a CRLF log, that regex form scans in about 0.6 ns per character. A
 * search for the first excluded character costs 0.9–1.2 ns, and a `charCodeAt` loop over 2 ns.
 * Characters beyond ASCII continue from where the ASCII scan stopped, with a SIMD scan of UTF-16 units
 * (wide-line-scan.ts) or, without it, a wider class.
 */
import { asciiLineTextEnd } from './ascii-line-scan.js';
import type { LineFeeds } from './line-feeds.js';
import { wideLineTextEnd } from './wide-line-scan.js';

/** Printable ASCII, and TAB, LF, VT, FF, CR (0x09–0x0D); VT and FF are excluded separately. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the class is defined by control codes
const ASCII_LINE_TEXT = /[\x09-\x0d\x20-\x7e]*/y;
/** As above, plus every character from U+00A0 on (C1 controls U+0080–U+009F stay excluded). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the class is defined by control codes
const WIDE_LINE_TEXT = /[\x09-\x0d\x20-\x7e\xa0-\uffff]*/y;

/** What {@link lineTextKind} finds. */
export const LineTextKind = {
  /** Something else: an escape sequence or another control. */
  None: 0,
  /** Line text, all of it ASCII (one UTF-8 byte per character). */
  Ascii: 1,
  /** Line text with characters beyond ASCII. */
  Wide: 2,
} as const;
export type LineTextKind = (typeof LineTextKind)[keyof typeof LineTextKind];

/**
 * Whether `text` holds only printable characters (U+0020–U+007E, U+00A0 and up), TAB, LF and CR, and
 * whether all of it is ASCII — which the scan learns for free and the scrollback uses.
 *
 * With `lineFeeds`, an ASCII answer also leaves there where the line feeds of `text` are (the SIMD scan
 * finds them on its way); otherwise, or without the SIMD scan, their count is left at -1 (not known).
 * `utf8`: the UTF-8 of `text`, when the caller has it: the SIMD scan reads it instead of encoding.
 */
export function lineTextKind(text: string, lineFeeds?: LineFeeds, utf8?: Uint8Array): LineTextKind {
  if (asciiLineTextEnd === undefined) {
    lineFeeds?.invalidate();
    return lineTextKindByRegex(text);
  }
  const end = asciiLineTextEnd(text, lineFeeds, utf8);
  // Everything before `end` is printable ASCII, TAB, LF or CR (VT and FF excluded).
  const kind = kindFrom(text, end, end);
  if (kind !== LineTextKind.Ascii) lineFeeds?.invalidate();
  return kind;
}

/** {@link lineTextKind} without the SIMD scan: the portable path (exported for tests). */
export function lineTextKindByRegex(text: string): LineTextKind {
  ASCII_LINE_TEXT.lastIndex = 0;
  ASCII_LINE_TEXT.test(text);
  return kindFrom(text, 0, ASCII_LINE_TEXT.lastIndex);
}

/**
 * The kind of `text`, knowing `text[0, asciiEnd)` is in the ASCII class, VT and FF included from
 * `from` on (the regex admits them, the SIMD scan does not).
 */
function kindFrom(text: string, from: number, asciiEnd: number): LineTextKind {
  if (!wideLineTextFrom(text, from, asciiEnd)) return LineTextKind.None;
  return asciiEnd === text.length ? LineTextKind.Ascii : LineTextKind.Wide;
}

/**
 * Whether `text[from…]` is line text, knowing `text[from, asciiEnd)` is in the ASCII class (VT and FF
 * included, so they are looked for separately).
 */
function wideLineTextFrom(text: string, from: number, asciiEnd = from): boolean {
  let end = asciiEnd;
  if (end < text.length && text.charCodeAt(end) >= 0xa0) {
    if (wideLineTextEnd !== undefined) end = wideLineTextEnd(text, end);
    else {
      WIDE_LINE_TEXT.lastIndex = end;
      WIDE_LINE_TEXT.test(text);
      end = WIDE_LINE_TEXT.lastIndex;
    }
  }
  // VT and FF share the fast class's range (fewer ranges scan faster); `indexOf` of one character is a
  // memchr, far cheaper than a wider class. Both are line ends a terminal honours, so they are excluded.
  return end === text.length && text.indexOf('\x0b', from) === -1 && text.indexOf('\x0c', from) === -1;
}
