/**
 * How many terminal columns a character takes (SPEC §4.3): 0 for combining marks and other
 * zero-width characters (they join the character before them), 2 for East Asian wide and fullwidth
 * characters and emoji shown as emoji, 1 for everything else. This is what `wcwidth` answers in a
 * current C library, which is what programs assume when they lay out a line.
 */

/** Zero width: nonspacing and enclosing marks, format characters (ZWSP, ZWJ, bidi marks), Hangul vowels. */
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}\u1160-\u11ff]$/u;

/** Emoji with emoji presentation by default (😀, ✅, 🚀): two columns in current terminals. */
const EMOJI_PRESENTATION = /^\p{Emoji_Presentation}$/u;

/**
 * East Asian Wide and Fullwidth blocks outside the emoji: Hangul Jamo initials, CJK radicals through
 * CJK symbols, kana, CJK ideographs, Yi, Hangul syllables, compatibility ideographs, vertical and
 * small forms, fullwidth forms, and the supplementary ideographic planes. Pairs of [first, last].
 */
// biome-ignore format: one range per pair
const WIDE_RANGES = [
  0x1100, 0x115f, 0x2e80, 0x303e, 0x3041, 0x33ff, 0x3400, 0x4dbf, 0x4e00, 0x9fff, 0xa000, 0xa4cf,
  0xa960, 0xa97f, 0xac00, 0xd7a3, 0xf900, 0xfaff, 0xfe10, 0xfe19, 0xfe30, 0xfe6f, 0xff00, 0xff60,
  0xffe0, 0xffe6, 0x16fe0, 0x16fe4, 0x17000, 0x18aff, 0x1b000, 0x1b2ff, 0x1f200, 0x1f2ff,
  0x20000, 0x2fffd, 0x30000, 0x3fffd,
];

/** Widths of BMP characters as found, plus one (0 = not looked up yet); astral ones are computed each time. */
const bmpWidths = new Uint8Array(0x10000);

/** Columns the character with code point `code` takes: 0, 1 or 2. */
export function charWidth(code: number): number {
  if (code < 0x300) return code >= 0x20 && (code < 0x7f || code >= 0xa0) ? 1 : 0;
  if (code < 0x10000) {
    const known = bmpWidths[code]!;
    if (known !== 0) return known - 1;
    const width = computeWidth(code);
    bmpWidths[code] = width + 1;
    return width;
  }
  return computeWidth(code);
}

function computeWidth(code: number): number {
  const char = String.fromCodePoint(code);
  if (ZERO_WIDTH.test(char)) return 0;
  if (EMOJI_PRESENTATION.test(char)) return 2;
  for (let i = 0; i < WIDE_RANGES.length; i += 2) {
    if (code < WIDE_RANGES[i]!) return 1;
    if (code <= WIDE_RANGES[i + 1]!) return 2;
  }
  return 1;
}
