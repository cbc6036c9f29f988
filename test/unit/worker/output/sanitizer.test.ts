import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TerminalError } from '../../../../src/shared/errors.js';
import { LineFeeds } from '../../../../src/worker/output/line-feeds.js';
import { LineTextKind, lineTextKind } from '../../../../src/worker/output/line-text.js';
import {
  cutOffStyleAt,
  OutputSanitizer,
  type SanitizerSink,
  withoutStyles,
} from '../../../../src/worker/output/sanitizer.js';

/** Characters `text()` must never carry: C0 except TAB, DEL, C1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for controls
const FORBIDDEN_IN_TEXT = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/;

/** Characters `textBlock()` must never carry: as for `text()`, but LF (or CRLF) ends a line. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for controls
const FORBIDDEN_IN_BLOCK = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)/;

/** An OSC payload with where it arrived: completed lines so far and the open line's content. */
interface OscEvent {
  payload: string;
  lines: number;
  open: string;
}

/** A sink that materializes the stream the way the scrollback does, and checks the text contract. */
class MaterializingSink implements SanitizerSink {
  readonly lines: string[] = [];
  open = '';
  readonly oscs: OscEvent[] = [];
  textCalls = 0;
  blockCalls = 0;
  blocksWithLineFeeds = 0;
  styledChunks = 0;

  /** A rewrite was the last call: text must come next (the live stream relies on it, protocol.ts). */
  private rewriting = false;

  text(s: string): void {
    expect(s.length).toBeGreaterThan(0);
    expect(FORBIDDEN_IN_TEXT.test(s)).toBe(false);
    this.textCalls += 1;
    this.open += s;
    this.rewriting = false;
  }
  newline(): void {
    expect(this.rewriting, 'a rewrite is followed by text, never by a line end').toBe(false);
    this.lines.push(this.open);
    this.open = '';
  }
  rewriteLine(): void {
    expect(this.rewriting, 'a rewrite is followed by text').toBe(false);
    this.open = '';
    this.rewriting = true;
  }
  /**
   * By the contract's equivalence: text + newline per `\n`-terminated piece (without the CR of a
   * CRLF), then text of the rest.
   */
  textBlock(block: string, ascii: boolean, lineFeeds?: LineFeeds): void {
    expect(block).toContain('\n');
    if (lineFeeds !== undefined) {
      // The contract: the indices of the block's line feeds, all of them, in order.
      const expected = [...block.matchAll(/\n/g)].map((match) => match.index);
      expect(Array.from(lineFeeds.positions.subarray(0, lineFeeds.count))).toEqual(expected);
      this.blocksWithLineFeeds += 1;
    }
    expect(FORBIDDEN_IN_BLOCK.test(block)).toBe(false);
    if (ascii) expect(block).toMatch(/^\p{ASCII}*$/u); // a sink may trust the flag and encode as Latin-1
    expect(block.startsWith('\n') && this.rewriting, 'a rewrite is followed by text').toBe(false);
    this.blockCalls += 1;
    const pieces = block
      .split('\n')
      .map((piece, i, all) => (i < all.length - 1 ? piece.replace(/\r$/, '') : piece));
    const rest = pieces.pop()!;
    for (const piece of pieces) {
      if (piece !== '') this.text(piece);
      this.newline();
    }
    if (rest !== '') this.text(rest);
    this.textCalls -= pieces.filter((p) => p !== '').length + (rest === '' ? 0 : 1);
  }
  osc(payload: string): void {
    this.oscs.push({ payload, lines: this.lines.length, open: this.open });
  }
  /** Completed lines each followed by `\n`, then the open line. */
  get materialized(): string {
    return this.lines.map((line) => `${line}\n`).join('') + this.open;
  }
}

/**
 * Pushes `chunks` through a fresh sanitizer, checking the pending bound after every push. `routed`:
 * each chunk goes the way the session sends it, through `pushLineText` when it is line text —
 * `'session'` also with the line feeds its scan found, as the session passes them.
 */
function run(
  chunks: readonly string[],
  maxPendingChars = 1024,
  routed: false | 'lineText' | 'session' = false,
): MaterializingSink & { pending: number } {
  const sanitizer = new OutputSanitizer({ maxPendingChars });
  const sink = new MaterializingSink();
  const lineFeeds = new LineFeeds();
  for (const chunk of chunks) {
    const kind = lineTextKind(chunk, lineFeeds);
    const known = routed === 'session' ? lineFeeds.known : undefined;
    if (routed && kind !== LineTextKind.None)
      sanitizer.pushLineText(chunk, sink, kind === LineTextKind.Ascii, known);
    else if (routed === 'session') {
      // Not line text: styled line text (SGRs only) where it can, as the session routes it.
      if (sanitizer.pushStyled(chunk, sink, lineFeeds) !== 'none') sink.styledChunks += 1;
    } else sanitizer.push(chunk, sink);
    expect(sanitizer.pendingLength).toBeLessThanOrEqual(maxPendingChars);
  }
  return Object.assign(sink, { pending: sanitizer.pendingLength });
}

/** Splits `input` at the given positions (taken modulo its length + 1). */
function splitAt(input: string, positions: readonly number[]): string[] {
  const cuts = [...new Set(positions.map((p) => p % (input.length + 1)))].sort((a, b) => a - b);
  const chunks: string[] = [];
  let from = 0;
  for (const cut of cuts) {
    chunks.push(input.slice(from, cut));
    from = cut;
  }
  chunks.push(input.slice(from));
  return chunks;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the test strips controls
const CONTROL_CHARS = /[\x00-\x1f\x7f-\x9f]/g;

/** Printable text: any graphemes (multi-byte, astral), controls removed. */
const printable = fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => s.replace(CONTROL_CHARS, ''));
const csiParams = fc.string({ unit: fc.constantFrom(...'0123456789;:<=>? !"#'), maxLength: 8 });
const csi = fc
  .tuple(fc.constantFrom('\x1b[', '\x9b'), csiParams, fc.constantFrom(...'@ABCDHJKmhlsu~'))
  .map(([intro, params, final]) => intro + params + final);
const oscTerminator = fc.constantFrom('\x07', '\x1b\\', '\x9c');
const osc = fc
  .tuple(fc.constantFrom('\x1b]', '\x9d'), printable, oscTerminator)
  .map(([intro, payload, end]) => ({ raw: intro + payload + end, payload }));
const stringSequence = fc
  .tuple(fc.constantFrom('\x1bP', '\x1bX', '\x1b^', '\x1b_', '\x90', '\x98', '\x9e', '\x9f'), printable)
  .chain(([intro, body]) => fc.constantFrom(`${intro}${body}\x1b\\`, `${intro}${body}\x9c`));
const shortEscape = fc.constantFrom(
  '\x1b(B',
  '\x1b)0',
  '\x1b7',
  '\x1b8',
  '\x1b=',
  '\x1b>',
  '\x1b#8',
  '\x1bc',
  '\x1bM',
);

/** Anything: well-formed and broken sequences, controls, garbage, surrogate halves. */
const anyToken = fc.oneof(
  printable,
  fc.constantFrom('\r', '\n', '\r\n', '\r\r\n', '\n\r', '\t', '\x07', '\x08', '\x00', '\x7f', '\x18', '\x1a'),
  fc.constantFrom(
    '\x0b',
    '\x0c',
    '\x85',
    '\x9c',
    '\x1b',
    '\x1b[',
    '\x1b]',
    '\x1bP',
    '\x1b\\',
    '\x1b(',
    '\x1b[1',
  ),
  fc.constantFrom('\x1b]133;D;0;nonce\x07', '\x1b]0;title', '\x1b]8;;http://x\x1b\\', '\x1b]2;a\x1b[31m'),
  fc.constantFrom('\uD83D', '\uDE00', '😀', 'é', '日本'),
  csi,
  osc.map((o) => o.raw),
  stringSequence,
  shortEscape,
  fc.string({ unit: 'binary', maxLength: 8 }),
);
const anyInput = fc.array(anyToken, { maxLength: 40, size: 'max' }).map((tokens) => tokens.join(''));

describe('OutputSanitizer properties', () => {
  it('gives the same lines and OSC payloads however the input is split', () => {
    fc.assert(
      fc.property(
        anyInput,
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.integer({ min: 1, max: 48 }),
        (input, positions, maxPending) => {
          const whole = run([input], maxPending);
          const split = run(splitAt(input, positions), maxPending);
          const perChar = run([...input.split('')], maxPending);
          const routed = run(splitAt(input, positions), maxPending, 'lineText');
          for (const other of [split, perChar, routed]) {
            expect(other.materialized).toBe(whole.materialized);
            expect(other.oscs).toEqual(whole.oscs);
            expect(other.pending).toBe(whole.pending);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('gives the same result through pushLineText as through push, for line text split anywhere', () => {
    // Mostly line text, so most chunks take the fast route; the rare control sends some the general way.
    const lineEnd = fc.constantFrom('\r\n', '\n', '\r', '\r\r\n', '\t');
    const rare = fc.constantFrom('\x1b[31m', '\x07', '\x0b', '\uD83D', '\x1b]133;D;0;n\x07');
    const lineToken = fc.oneof(
      { weight: 8, arbitrary: printable },
      { weight: 6, arbitrary: lineEnd },
      { weight: 1, arbitrary: rare },
    );
    // ASCII line text, as most floods are: the chunks whose line feeds the scan knows (lone CRs
    // among them must still take the state machine).
    const asciiToken = fc.oneof(
      { weight: 8, arbitrary: fc.string({ unit: fc.constantFrom(...'abc xyz-'), maxLength: 12 }) },
      { weight: 6, arbitrary: lineEnd },
    );
    let fastChunks = 0;
    let blocksWithLineFeeds = 0;
    fc.assert(
      fc.property(
        fc
          .oneof(
            fc.array(lineToken, { maxLength: 60, size: 'max' }),
            fc.array(asciiToken, { maxLength: 60, size: 'max' }),
          )
          .map((tokens) => tokens.join('')),
        fc.array(fc.nat(), { maxLength: 12 }),
        (input, positions) => {
          const chunks = splitAt(input, positions);
          fastChunks += chunks.filter(
            (chunk) => chunk !== '' && lineTextKind(chunk) !== LineTextKind.None,
          ).length;
          const plain = run(chunks, 64);
          for (const route of ['lineText', 'session'] as const) {
            const routed = run(chunks, 64, route);
            expect(routed.materialized, route).toBe(plain.materialized);
            expect(routed.oscs, route).toEqual(plain.oscs);
            expect(routed.pending, route).toBe(plain.pending);
            blocksWithLineFeeds += routed.blocksWithLineFeeds;
          }
        },
      ),
      { numRuns: 400 },
    );
    expect(fastChunks).toBeGreaterThan(1000);
    expect(blocksWithLineFeeds).toBeGreaterThan(100);
  });

  it('gives the same result for styled line text (a colored log) as through push, split anywhere', () => {
    // Mostly SGRs around text and line ends, so many chunks are line text once their SGRs are gone;
    // other sequences, controls and cut-off SGRs make the rest take the state machine.
    const word = fc.string({ unit: fc.constantFrom(...'abc xyz-é'), maxLength: 10 });
    const sgr = fc.constantFrom(
      '\x1b[31m',
      '\x1b[0m',
      '\x1b[m',
      '\x1b[1;38;5;208m',
      '\x1b[38:2:1:2:3m',
      '\x1b[;4m',
    );
    const other = fc.constantFrom(
      '\x1b]2;', // an OSC left open: SGRs in the next chunk are not in ground state
      '\x1b[2K',
      '\x1b[1;2H',
      '\x9b31m',
      '\x1b]0;t\x07',
      '\x1b[31\x18',
      '\x1b[3 m',
      '\x07',
    );
    const token = fc.oneof(
      { weight: 8, arbitrary: word },
      { weight: 6, arbitrary: sgr },
      { weight: 5, arbitrary: fc.constantFrom('\r\n', '\n', '\r', '\r\x1b[0m\n', '\r\x1b[32mx') },
      { weight: 1, arbitrary: other },
    );
    let styled = 0;
    fc.assert(
      fc.property(
        fc.array(token, { maxLength: 60, size: 'max' }).map((tokens) => tokens.join('')),
        fc.array(fc.nat(), { maxLength: 12 }),
        (input, positions) => {
          const chunks = splitAt(input, positions);
          const plain = run(chunks, 64);
          const routed = run(chunks, 64, 'session');
          expect(routed.materialized).toBe(plain.materialized);
          expect(routed.oscs).toEqual(plain.oscs);
          expect(routed.pending).toBe(plain.pending);
          styled += routed.styledChunks;
        },
      ),
      { numRuns: 600 },
    );
    expect(styled).toBeGreaterThan(500);
  });

  it('a read that cuts an SGR in two leaves both reads on the styled route', () => {
    expect(cutOffStyleAt('ok\r\n\x1b[3')).toBe(4);
    expect(cutOffStyleAt('ok\x1b')).toBe(2);
    expect(cutOffStyleAt('ok\x1b[1;38:5')).toBe(2);
    expect(cutOffStyleAt('ok\x1b[31m')).toBe(7); // complete: nothing cut off
    expect(cutOffStyleAt('ok\x1b[2')).toBe(2); // may still become an SGR
    expect(cutOffStyleAt('ok\x1b[?25')).toBe(7); // a private mode, not a style
    expect(cutOffStyleAt('ok\x1b]0;ti')).toBe(8);
    expect(cutOffStyleAt('\uD83D\x1b[3')).toBe(4); // kept with the surrogate half before it
    const line = (i: number) => `\x1b[2m[${i}]\x1b[0m \x1b[32mINFO\x1b[0m step ${i} done\r\n`;
    const log = Array.from({ length: 200 }, (_, i) => line(i)).join('');
    // Inside every `ESC[32m`.
    const cuts = [...log.matchAll(/\[32m/g)].map((match) => match.index! + 2);
    const chunks = splitAt(
      log,
      cuts.filter((_, k) => k % 10 === 0),
    );
    const routed = run(chunks, 64, 'session');
    expect(routed.materialized).toBe(run([log], 64).materialized);
    expect(routed.styledChunks).toBe(chunks.length); // every read, both halves of each cut included
  });

  it('strips only complete SGRs, and only from text that holds one', () => {
    expect(withoutStyles('\x1b[32mok\x1b[0m done\r\n')).toBe('ok done\r\n');
    expect(withoutStyles('\x1b[38:2:1:2:3mx\x1b[m')).toBe('x');
    expect(withoutStyles('plain text\r\n')).toBeUndefined();
    expect(withoutStyles('\x1b[2Kline')).toBeUndefined(); // erase in line is not a style
    expect(withoutStyles('cut \x1b[3')).toBeUndefined(); // the rest arrives later
    expect(withoutStyles('\x1b[1m\x1b[2K')).toBe('\x1b[2K'); // the scan then sends it the general way
    // Not after a high surrogate, which the ESC keeps apart from what follows (found by the property
    // above: stripping it made the session route hold a lone high half that push had sent on).
    expect(withoutStyles('\uD83D\x1b[31m')).toBeUndefined();
    expect(withoutStyles('a\uD83D\x1b[31m\x1b[0m\uDE00')).toBe('a\uD83D\x1b[31m\uDE00');
    for (const chunks of [['\uD83D\x1b[31m'], ['x\uD83D\x1b[1m\r\n', '\uDE00'], ['\uD83D\x1b[31m\uDE00']]) {
      const plain = run(chunks, 64);
      const routed = run(chunks, 64, 'session');
      expect(routed.materialized).toBe(plain.materialized);
      expect(routed.pending).toBe(plain.pending);
      expect(routed.textCalls).toBe(plain.textCalls);
    }
  });

  it('never materializes ESC, CR or another control except TAB and LF', () => {
    fc.assert(
      fc.property(anyInput, fc.array(fc.nat(), { maxLength: 8 }), (input, positions) => {
        const sink = run(splitAt(input, positions), 16);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for controls
        expect(sink.materialized).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
      }),
      { numRuns: 300 },
    );
  });

  it('removes well-formed sequences exactly and delivers every OSC payload in order', () => {
    type Token = { raw: string; text: string; payload?: string };
    const token: fc.Arbitrary<Token> = fc.oneof(
      printable.map((s) => ({ raw: s, text: s })),
      fc.constantFrom('\n', '\r\n').map((raw) => ({ raw, text: '\n' })),
      csi.map((raw) => ({ raw, text: '' })),
      stringSequence.map((raw) => ({ raw, text: '' })),
      shortEscape.map((raw) => ({ raw, text: '' })),
      osc.map((o) => ({ raw: o.raw, text: '', payload: o.payload })),
    );
    fc.assert(
      fc.property(
        fc.array(token, { maxLength: 30, size: 'max' }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (tokens, positions) => {
          const input = tokens.map((t) => t.raw).join('');
          const sink = run(splitAt(input, positions), 4096);
          expect(sink.materialized).toBe(tokens.map((t) => t.text).join(''));
          expect(sink.oscs.map((o) => o.payload)).toEqual(
            tokens.filter((t) => t.payload !== undefined).map((t) => t.payload),
          );
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('OutputSanitizer examples', () => {
  it('keeps only the final content of a 1000-step carriage-return progress loop', () => {
    let input = '';
    for (let i = 1; i <= 1000; i++) input += `\rprogress ${i}/1000 \x1b[32m${'#'.repeat(i % 40)}\x1b[0m`;
    input += '\r\ndone\r\n';
    const sink = run(splitAt(input, [7, 500, 501, 9000, 20_000]));
    expect(sink.lines).toEqual([`progress 1000/1000 ${'#'.repeat(1000 % 40)}`, 'done']);
    expect(sink.open).toBe('');
  });

  it('folds CR rewrites: the text after a lone CR replaces the line', () => {
    expect(run(['abc\rX']).materialized).toBe('X');
    expect(run(['abc\r', '\x1b[K', 'X\n']).materialized).toBe('X\n');
    expect(run(['keep\r\x1b[0m\n']).materialized).toBe('keep\n'); // CR then LF: no rewrite
  });

  it('turns a CRLF split across pushes, and CR CR LF, into one newline', () => {
    const sink = run(['one\r', '\ntwo\r', '\r', '\nthree']);
    expect(sink.lines).toEqual(['one', 'two']);
    expect(sink.open).toBe('three');
  });

  it('carries a trailing CR as pending until the next push decides it', () => {
    const sanitizer = new OutputSanitizer({ maxPendingChars: 8 });
    const sink = new MaterializingSink();
    sanitizer.push('line\r', sink);
    expect(sanitizer.pendingLength).toBe(1);
    expect(sink.lines).toEqual([]);
    sanitizer.push('\n', sink);
    expect(sanitizer.pendingLength).toBe(0);
    expect(sink.lines).toEqual(['line']);
  });

  it('delivers an OSC split across pushes once, in order with the text around it', () => {
    const input = 'out\n\x1b]133;D;0;n0nce;/tmp\x07$ ';
    for (let cut = 0; cut <= input.length; cut++) {
      const sink = run([input.slice(0, cut), input.slice(cut)]);
      expect(sink.oscs).toEqual([{ payload: '133;D;0;n0nce;/tmp', lines: 1, open: '' }]);
      expect(sink.materialized).toBe('out\n$ ');
    }
    expect(run(['\x1b]0;ti', 'tle\x1b', '\\x']).oscs.map((o) => o.payload)).toEqual(['0;title']);
    expect(run(['\x9d0;c1\x9cx']).oscs.map((o) => o.payload)).toEqual(['0;c1']);
  });

  it('keeps controls a terminal ignores inside an OSC out of its payload and out of the text', () => {
    const sink = run(['a\x1b]0;x\x00y\nz\r\x07b']);
    expect(sink.oscs.map((o) => o.payload)).toEqual(['0;xyz']);
    expect(sink.materialized).toBe('ab');
  });

  it('bounds an unterminated OSC followed by 10 MB of text, and shows text after a later BEL', () => {
    const maxPendingChars = 4096;
    const sanitizer = new OutputSanitizer({ maxPendingChars });
    const sink = new MaterializingSink();
    sanitizer.push('before\n\x1b]0;never terminated ', sink);
    const block = 'flood of text that belongs to the broken OSC 0123456789\n'.repeat(1170); // ~64 KiB
    let pushed = 0;
    while (pushed < 10 * 1024 * 1024) {
      sanitizer.push(block, sink);
      pushed += block.length;
      expect(sanitizer.pendingLength).toBeLessThanOrEqual(maxPendingChars);
    }
    expect(sanitizer.pendingLength).toBe(0); // overflowed: nothing is held any more
    expect(sink.materialized).toBe('before\n');
    sanitizer.push('tail\x07after the BEL\n', sink);
    expect(sink.materialized).toBe('before\nafter the BEL\n');
    expect(sink.oscs).toEqual([]); // the overflowed payload is discarded, never delivered cut short
  });

  it('delivers an OSC that fits the bound and discards one that does not', () => {
    // Held while incomplete: ESC, ']' and the payload (the terminator completes it).
    expect(run(['\x1b]0;123456\x07x'], 10).oscs.map((o) => o.payload)).toEqual(['0;123456']);
    const sink = run(['\x1b]0;1234567\x07x'], 10);
    expect(sink.oscs).toEqual([]);
    expect(sink.materialized).toBe('x');
  });

  it('discards an over-long CSI through its final byte', () => {
    const sink = run([`a\x1b[${'1;'.repeat(500)}mb`], 16);
    expect(sink.materialized).toBe('ab');
  });

  it('removes CSI colors, cursor controls, charset designations and DCS/APC strings', () => {
    const input =
      '\x1b[1;31mred\x1b[0m plain \x1b[?25l\x1b[2K\x1b(Bascii\x1b)0 \x1b7\x1b8' +
      '\x1bPq#0;2;0;0;0#1~\x1b\\dcs-gone \x1b_Gf=24\x1b\\apc-gone \x9b32mc1-csi\x9b0m';
    expect(run([input]).materialized).toBe('red plain ascii dcs-gone apc-gone c1-csi');
  });

  it('drops BEL, BS, NUL, DEL and stray C1 controls; keeps TAB', () => {
    expect(run(['a\x07b\x08c\x00d\x7fe\x85f\tg']).materialized).toBe('abcdef\tg');
  });

  it('treats VT and FF as line ends', () => {
    expect(run(['a\x0bb\x0cc']).lines).toEqual(['a', 'b']);
  });

  it('cancels a sequence on CAN/SUB and lets ESC interrupt an OSC', () => {
    expect(run(['\x1b[12\x18x']).materialized).toBe('x');
    const sink = run(['\x1b]0;title\x1b[31mX']);
    expect(sink.materialized).toBe('X');
    expect(sink.oscs).toEqual([]);
  });

  it('ends a malformed sequence without swallowing the text or line end after it', () => {
    expect(run(['\x1b[12\nabc']).materialized).toBe('\nabc');
    expect(run(['\x1b\nabc']).materialized).toBe('\nabc');
    expect(run(['\x1b[1é']).materialized).toBe('é');
  });

  it('hands a surrogate pair split across pushes to the sink in one piece', () => {
    const sanitizer = new OutputSanitizer({ maxPendingChars: 8 });
    const texts: string[] = [];
    const sink: SanitizerSink = {
      text: (s) => texts.push(s),
      newline() {},
      rewriteLine() {},
      textBlock: (s) => texts.push(s),
      osc() {},
    };
    sanitizer.push('a\uD83D', sink);
    expect(sanitizer.pendingLength).toBe(1);
    sanitizer.push('\uDE00b', sink);
    expect(texts).toEqual(['a', '😀', 'b']);
  });

  it('emits a plain run with one call, not per character or per line', () => {
    const line = 'x'.repeat(100_000);
    expect(run([line])).toMatchObject({ textCalls: 1, blockCalls: 0 });
    const sink = run([`${line}\n${'y'.repeat(100_000)}`]);
    expect(sink).toMatchObject({ textCalls: 0, blockCalls: 1 });
    expect(sink.lines).toHaveLength(1);
  });

  it('hands a CRLF flood to the sink as one block per push, CRLFs as written', () => {
    const lines = Array.from({ length: 5_000 }, (_, i) => `log line ${i} é`);
    const blocks: string[] = [];
    const sink: SanitizerSink = {
      text: () => expect.unreachable('text'),
      newline: () => expect.unreachable('newline'),
      rewriteLine: () => expect.unreachable('rewriteLine'),
      textBlock: (block) => blocks.push(block),
      osc() {},
    };
    const sanitizer = new OutputSanitizer({ maxPendingChars: 16 });
    const input = lines.map((l) => `${l}\r\n`).join('');
    const cut = input.indexOf('\n', 40_000); // second push starts with the LF of a split CRLF
    sanitizer.push(input.slice(0, cut), sink);
    sanitizer.push(input.slice(cut), sink);
    expect(blocks).toHaveLength(2);
    // Not copied to drop the CRs; the CR of the split CRLF was held and its LF ends the line.
    expect(blocks[0]).toBe(input.slice(0, cut - 1));
    expect(blocks[1]).toBe(input.slice(cut));
    expect(blocks.join('').replaceAll('\r\n', '\n')).toBe(lines.map((l) => `${l}\n`).join(''));
  });

  it('stops a multi-line run at a lone CR, ESC and other controls', () => {
    const sink = run(['a\r\nb\nc\rd\r\ne\x1b[1mf\r\ng\x07h\n']);
    expect(sink.materialized).toBe('a\nb\nd\nef\ngh\n');
    expect(sink.blockCalls).toBe(4); // "a\nb\nc", "d\ne", "f\ng", "h\n"
  });

  it('rejects a bound below one character', () => {
    expect(() => new OutputSanitizer({ maxPendingChars: 0 })).toThrow(TerminalError);
    expect(() => new OutputSanitizer({ maxPendingChars: 1.5 })).toThrow(/maxPendingChars/);
  });
});
