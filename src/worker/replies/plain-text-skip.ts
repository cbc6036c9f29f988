/**
 * Fast path of the terminal replier (SPEC §4.3, §9 flood target): shortens a long run of plain output to
 * an input that leaves an xterm terminal in the same reply-relevant state as the whole run would.
 *
 * A *plain run* holds only printable characters (U+0020–U+007E, U+00A0 and up), the cursor-local C0
 * controls BEL, BS, HT, LF, VT, FF, CR, and two sequences that neither move the cursor nor change a
 * mode: SGR with plain decimal parameters (`ESC [ 1;31 m`) and EL (`ESC [ K`, `ESC [ 0/1/2 K`).
 *
 * Why skipping part of such a run is sound — given the preconditions the replier checks against the
 * terminal before it writes (parser in GROUND, scroll region = whole screen, reverse wraparound off,
 * a full line ring of exactly the visible rows, reflow off):
 * - Replies read the cursor, the modes, the scroll region, the protection attribute and the cell
 *   content (reverse wraparound reads wrap flags, REP the last cell written). A plain run changes no
 *   mode, no region, no tab stop, no charset; its SGRs change attributes only, and the SGRs kept below
 *   reproduce them.
 * - The suffix starts at a CR. After a CR, x is 0 and the join state is reset whatever came before,
 *   and from there x evolves as a function of the suffix alone (printing, wrapping, tabs, BS without
 *   reverse wraparound and LF never read the row content or y). What the skipped part, a half
 *   surrogate pair or a pending wrap would have done before that CR touches only rows that scroll away.
 * - y only grows (LF/VT/FF and autowrap move down or scroll; nothing in a plain run moves up). From
 *   any start at or below the current row y0 it reaches the bottom row after `rows - 1 - y0` line
 *   feeds, and every later line feed scrolls a fresh blank row in. After `rows` more, every row on
 *   screen was created during the suffix and written only by the suffix, identically in both runs;
 *   one extra row covers a wrap that moves a cell from the row above (grapheme widening).
 * Hence the suffix from the last CR before the last `(rows - 1 - y0) + rows + 1` line feeds, preceded
 * by the SGRs since the last SGR reset before that CR, yields the same cursor, pending-wrap state,
 * screen content, wrap flags and attributes that replies can see. The differential property test in
 * test/unit/worker/replies/terminal-replier.test.ts checks this against an xterm fed every byte.
 */

const ESC = 0x1b;
const LEFT_BRACKET = 0x5b;
const SEMICOLON = 0x3b;
const DIGIT_ZERO = 0x30;
const DIGIT_TWO = 0x32;
const DIGIT_NINE = 0x39;
const LETTER_K = 0x4b;
const LETTER_M = 0x6d;

/** Longest SGR parameter string admitted; a longer SGR is legal but rare and simply ends the run. */
const MAX_SGR_PARAMETER_CHARS = 64;

/**
 * Characters that end a plain run: everything but printable text and BEL, BS, HT, LF, VT, FF, CR
 * (0x07–0x0D). ESC is among them; {@link PlainRunScanner.scan} re-admits SGR and EL sequences.
 * Lone surrogates count as printable: xterm decodes them deterministically.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the class is defined by C0 control codes.
const RUN_BREAK = /[^\x07-\x0d\x20-\x7e\xa0-\uffff]/g;

/** Finds plain runs. Reuses its fields across calls so the per-batch scan allocates nothing. */
export class PlainRunScanner {
  /** End (exclusive) of the run found by the last {@link scan}: a non-plain character or the text end. */
  end = 0;
  /** Index of the first admitted sequence (ESC) in that run, or -1 when the run holds none. */
  firstSequence = -1;
  /**
   * True when the run ends at an ESC whose sequence the text cuts off while it could still become an
   * admitted one (`ESC [ 1 ; 3` at the end): more input decides whether the run goes on.
   */
  openSequence = false;

  /** Scans the plain run starting at `from` (possibly empty) and returns its end. */
  scan(text: string, from: number): number {
    this.firstSequence = -1;
    this.openSequence = false;
    RUN_BREAK.lastIndex = from;
    for (;;) {
      if (!RUN_BREAK.test(text)) {
        this.end = text.length;
        return this.end;
      }
      const at = RUN_BREAK.lastIndex - 1;
      if (text.charCodeAt(at) === ESC) {
        const sequenceEnd = admittedSequenceEnd(text, at);
        if (sequenceEnd > 0) {
          if (this.firstSequence < 0) this.firstSequence = at;
          RUN_BREAK.lastIndex = sequenceEnd;
          continue;
        }
        this.openSequence = sequenceEnd === CUT_OFF;
      }
      this.end = at;
      return at;
    }
  }
}

/**
 * Whether every ESC in `text` from `from` on (the index of its first ESC, or -1 for none) starts a
 * complete sequence a plain run admits (SGR or EL). For text whose other characters are known to be
 * plain, this decides the whole question with a hop from ESC to ESC instead of a scan of every character.
 */
export function holdsOnlyAdmittedSequences(text: string, from: number): boolean {
  for (let at = from; at !== -1; ) {
    const end = admittedSequenceEnd(text, at);
    if (end < 0) return false;
    at = text.indexOf('\x1b', end);
  }
  return true;
}

/** Line feeds a suffix must contain so every row on screen is rewritten (see the module comment). */
export function lineFeedsToRefresh(rows: number, cursorY: number): number {
  return rows - 1 - cursorY + rows + 1;
}

/**
 * Shortens the plain run `text[start, end)` (found by {@link PlainRunScanner}; `firstSequence` as it
 * reported) to an equivalent input: the SGRs that define the attributes at the sync CR, then the run
 * from that CR on, holding at least `lineFeeds` line feeds. Returns undefined when the run has no such
 * CR after its first character, i.e. when nothing can be skipped.
 */
export function reducePlainRun(
  text: string,
  start: number,
  end: number,
  firstSequence: number,
  lineFeeds: number,
): string | undefined {
  // Only LF is counted: VT and FF (rare) are line feeds too, so ignoring them can only lengthen the
  // suffix, never make it too short. `lastIndexOf` hops from line to line, several times faster than a
  // loop over every character (this runs each time a held flood is shortened).
  let at = end;
  for (let seen = 0; seen < lineFeeds; seen++) {
    at = text.lastIndexOf('\n', at - 1);
    if (at <= start) return undefined;
  }
  const sync = text.lastIndexOf('\r', at - 1);
  if (sync <= start) return undefined;
  return keptAttributes(text, firstSequence, sync) + text.slice(sync, end);
}

/**
 * The SGRs in `text[firstSequence, before)` from the last one that starts with a reset (first
 * parameter 0 or empty), in stream order. Admitted sequences are SGR or EL; EL only erases cells of
 * rows that the suffix rewrites, so it is dropped. `firstSequence` < 0 means the run holds none.
 */
function keptAttributes(text: string, firstSequence: number, before: number): string {
  if (firstSequence < 0 || firstSequence >= before) return '';
  const kept: string[] = [];
  // lastIndexOf never goes below firstSequence: that index holds an ESC itself.
  for (let at = text.lastIndexOf('\x1b', before - 1); at >= firstSequence; ) {
    const end = admittedSequenceEnd(text, at);
    if (text.charCodeAt(end - 1) === LETTER_M) {
      kept.push(text.slice(at, end));
      if (startsWithReset(text, at + 2)) break;
    }
    if (at === firstSequence) break;
    at = text.lastIndexOf('\x1b', at - 1);
  }
  return kept.reverse().join('');
}

/** {@link admittedSequenceEnd}: the text ends before it can tell. */
const CUT_OFF = -2;

/**
 * End (exclusive) of the SGR (`ESC [` digits/semicolons `m`) or EL (`ESC [` 0–2 optional, `K`)
 * starting at the ESC at `at`; -1 when no such sequence starts there; {@link CUT_OFF} when the text
 * ends before that is decided.
 */
function admittedSequenceEnd(text: string, at: number): number {
  if (at + 1 >= text.length) return CUT_OFF;
  if (text.charCodeAt(at + 1) !== LEFT_BRACKET) return -1;
  const first = at + 2;
  let close = first;
  while (isParameterByte(text.charCodeAt(close))) {
    close += 1;
    if (close - first > MAX_SGR_PARAMETER_CHARS) return -1;
  }
  if (close >= text.length) return CUT_OFF;
  const final = text.charCodeAt(close);
  if (final === LETTER_M) return close + 1;
  if (final !== LETTER_K || close - first > 1) return -1;
  if (close === first) return close + 1;
  const parameter = text.charCodeAt(first);
  return parameter >= DIGIT_ZERO && parameter <= DIGIT_TWO ? close + 1 : -1;
}

function isParameterByte(code: number): boolean {
  return (code >= DIGIT_ZERO && code <= DIGIT_NINE) || code === SEMICOLON;
}

/** True when the SGR parameters at `from` begin with a field that is empty or all zeros. */
function startsWithReset(text: string, from: number): boolean {
  for (let at = from; ; at += 1) {
    const code = text.charCodeAt(at);
    if (code === DIGIT_ZERO) continue;
    return code === SEMICOLON || code === LETTER_M;
  }
}
