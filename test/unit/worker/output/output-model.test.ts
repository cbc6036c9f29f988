/**
 * The output model of SPEC §4.3: what the model reads is what a person would see. Streams go through
 * the real sanitizer into the model and the scrollback, exactly as in a session.
 */
import xtermHeadless from '@xterm/headless';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineRing } from '../../../../src/worker/output/line-ring.js';
import { OutputModel } from '../../../../src/worker/output/output-model.js';
import { OutputWindow } from '../../../../src/worker/output/output-window.js';
import { OutputSanitizer, type SanitizerSink } from '../../../../src/worker/output/sanitizer.js';

interface Pipeline {
  push(chunk: string): void;
  /** The scrollback as text (completed lines and the open line, joined with `\n`). */
  text(): string;
  model: OutputModel;
  ring: LineRing;
  window: OutputWindow;
}

function pipeline(rows = 6, cols = 20): Pipeline {
  const ring = new LineRing({ maxLines: 10_000, maxBytes: 1 << 22 });
  const model = new OutputModel({ rows, cols, ring, maxLineChars: 1 << 20 });
  const sanitizer = new OutputSanitizer({ maxPendingChars: 1 << 20, columns: cols });
  const sink: SanitizerSink = {
    text: (s) => model.text(s),
    newline: () => model.newline(),
    rewriteLine: () => model.rewriteLine(),
    textBlock: (block, ascii, lineFeeds) => model.textBlock(block, ascii, lineFeeds),
    osc: () => undefined,
    backspace: () => model.backspace(),
    csi: (params, final) => model.csi(params, final),
    escape: (final) => model.escape(final),
  };
  return {
    push: (chunk) => sanitizer.push(chunk, sink),
    text: () => {
      model.sync();
      return ring.toString();
    },
    model,
    ring,
    window: new OutputWindow(ring, model),
  };
}

function read(stream: string, rows = 6, cols = 20): string {
  const p = pipeline(rows, cols);
  p.push(stream);
  return p.text();
}

describe('output model: overwrite semantics', () => {
  it('a CR returns to column 0 and what follows overwrites', () => {
    expect(read('abc\rxy')).toBe('xyc');
    expect(read('abc\rxy\r\nnext')).toBe('xyc\nnext');
  });

  it('backspaces move left and overwrite', () => {
    expect(read('abc\b\b\bXYZ')).toBe('XYZ');
    expect(read('abc\b\bX')).toBe('aXc');
  });

  it('overstrike bold and underline resolve to the final character (man pages)', () => {
    const bold = (word: string) => [...word].map((c) => `${c}\b${c}`).join('');
    const underline = (word: string) => [...word].map((c) => `_\b${c}`).join('');
    expect(
      read(
        `${bold('NAME')}\r\n       ls - list\r\n${bold('SYNOPSIS')}\r\n       ${bold('ls')} [${underline('OPTION')}]`,
      ),
    ).toBe('NAME\n       ls - list\nSYNOPSIS\n       ls [OPTION]');
  });

  it('a backspace spinner leaves its last frame', () => {
    expect(read('working |\b/\b-\b\\\b|\b/\b-\b\\\bok\r\n')).toBe('working ok\n');
    expect(read('working |\b/\b-\b\\\b \bok')).toBe('working ok');
  });

  it('a \\r progress bar leaves only its final state', () => {
    let stream = '';
    for (let p = 0; p <= 100; p += 10) stream += `\r[${'#'.repeat(p / 10).padEnd(10)}] ${p}%`;
    expect(read(`${stream}\r\ndone`)).toBe('[##########] 100%\ndone');
  });

  it('erase in line', () => {
    expect(read('abcdef\r\x1b[Kxy')).toBe('xy');
    expect(read('abcdef\x1b[3D\x1b[K!')).toBe('abc!');
    expect(read('abcdef\x1b[3D\x1b[1K')).toBe('    ef');
    expect(read('abcdef\x1b[2K\rZ')).toBe('Z');
  });

  it('a CR kept pending across chunks decides before an erase in the next chunk', () => {
    const p = pipeline();
    p.push('100%\r');
    p.push('\x1b[K');
    p.push('\n');
    p.push('next');
    expect(p.text()).toBe('\nnext');
  });

  it('lines longer than cols: a CR returns to the start of the last wrapped row', () => {
    const long = 'x'.repeat(45); // 20 + 20 + 5 columns
    expect(read(`${long}\rAB`, 6, 20)).toBe(`${'x'.repeat(40)}ABxxx`);
    // Soft-wrapped rows are one line again when they are committed (scrolled off).
    const p = pipeline(3, 20);
    p.push(`\r${long}\r\n1\r\n2\r\n3\r\n4\r\n`);
    expect(p.text()).toBe(`${long}\n1\n2\n3\n4\n`);
  });

  it('a one-row screen commits a line that wraps (no row below it to go on in)', () => {
    // Found by the replier's differential property once it drove the session's real pipeline: the
    // row that scrolled off looked at the row below it, which a one-row screen does not have.
    const p = pipeline(1, 18);
    const stream = 'aaaaaaaéaaaaaa\x1b[Kaaaaa\r\nok\r\n';
    for (const char of stream) p.push(char);
    expect(p.text()).toBe('aaaaaaaéaaaaaaaaaaa\nok\n');
  });

  it('a long line redrawn with cursor-up by a line editor reads as its final state', () => {
    // readline redraws a command line wider than the screen: up one row, CR, rewrite both rows.
    const command = `echo ${'a'.repeat(30)}`; // 35 columns on a 20-column screen
    const stream = `$ ${command.slice(0, 10)}\r\n\x1b[A\r$ ${command}`;
    expect(read(stream, 6, 20)).toBe(`$ ${command}`);
  });

  it('docker-pull-like progress redrawn with cursor-up reads as its final lines', () => {
    const layers = ['a1', 'b2', 'c3', 'd4'];
    let stream = '';
    for (const layer of layers) stream += `${layer}: Waiting\r\n`;
    for (let step = 1; step <= 20; step++) {
      stream += `\x1b[${layers.length}A`;
      for (const layer of layers) {
        const state = step === 20 ? 'Pull complete' : `Downloading ${'='.repeat(step)}>`;
        stream += `\r\x1b[2K${layer}: ${state}\r\n`;
      }
    }
    stream += 'Status: Downloaded newer image\r\n';
    const text = read(stream, 24, 80);
    expect(text).toBe(
      [...layers.map((l) => `${l}: Pull complete`), 'Status: Downloaded newer image', ''].join('\n'),
    );
  });

  it('wide characters take two columns; combining marks stay with their base', () => {
    expect(read('中文字\rab')).toBe('ab文字');
    expect(read('中文字\rX')).toBe('X 文字');
    expect(read('e\u0301te\u0301\rE')).toBe('Ete\u0301');
    expect(read('ab\x1b[1D\u0301')).toBe('a\u0301b');
  });

  it('insert and delete line, erase in display', () => {
    expect(read('one\r\ntwo\r\nthree\x1b[2A\x1b[L', 6, 20)).toBe('\none\ntwo\nthree');
    expect(read('one\r\ntwo\r\nthree\x1b[2A\x1b[M', 6, 20)).toBe('two\nthree');
    expect(read('one\r\ntwo\r\nthree\x1b[1A\x1b[J', 6, 20)).toBe('one\ntwo');
    expect(read('one\r\ntwo\r\nthree\x1b[1A\x1b[3D\x1b[J', 6, 20)).toBe('one\ntw');
    expect(read('one\r\ntwo\x1b[H\x1b[2Jnew', 6, 20)).toBe('new');
  });

  it('tabs are kept as tabs where nothing overwrote them', () => {
    expect(read('a\tb\rA')).toBe('A\tb');
    expect(read('a\tb\t\rA')).toBe('A\tb\t');
  });

  it('the alternate screen keeps redraws out of the scrollback and resumes lines after it', () => {
    const p = pipeline();
    p.push('$ vim notes\r\n\x1b[?1049h\x1b[H\x1b[2J~\r\n~\r\n~\x1b[1;1Hhello\x1b[?1049l$ echo ok\r\nok\r\n');
    expect(p.text()).toBe('$ vim notes\n$ echo ok\nok\n');
    expect(p.model.alternateScreen).toBe(false);
  });

  it('a read of plain lines after a redraw goes back to the fast path; single lines keep the grid', () => {
    const flood = pipeline(40, 160);
    flood.push('50%\r100%\r\n');
    expect(flood.model.engaged).toBe(true);
    flood.push('one line\r\n');
    expect(flood.model.engaged).toBe(true);
    flood.push(Array.from({ length: 17 }, (_, i) => `log line ${i}\r\n`).join(''));
    expect(flood.model.engaged).toBe(false);
    expect(flood.text().split('\n').slice(0, 3)).toEqual(['100%', 'one line', 'log line 0']);
    const p = pipeline(4, 20);
    p.push('50%\r100%\r\n');
    const block = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\r\n');
    p.push(`${block}\r\n`);
    expect(p.text()).toBe(`100%\n${block.replaceAll('\r\n', '\n')}\n`);
  });

  it('a reader is shown the lines of the live region again when a redraw changed them', () => {
    const p = pipeline(6, 30);
    p.push('a: 10%\r\nb: 10%\r\n');
    const mark = p.window.mark();
    expect(p.window.since(mark, 10_000).text).toBe('');
    p.push('\x1b[2A\ra: 100%\r\nb: 100%\r\n');
    expect(p.window.since(mark, 10_000).text).toBe('a: 100%\nb: 100%\n');
  });
});

// ---------------------------------------------------------------------------------------------------
// Properties.

const word = fc.string({ unit: fc.constantFrom(...'abcdefgh XYZ-'), minLength: 1, maxLength: 30 });
const wide = fc.string({ unit: fc.constantFrom(...'中文字한글'), minLength: 1, maxLength: 6 });
const small = fc.integer({ min: 0, max: 7 });
/** Streams from the vocabulary of §4.3, with CRLF line ends (the pty's output processing makes them). */
const piece = fc.oneof(
  { weight: 6, arbitrary: word },
  { weight: 2, arbitrary: wide },
  // Runs longer than a screen: the grid scrolls rows past that it never draws (a line without an end).
  {
    weight: 1,
    arbitrary: fc.tuple(fc.integer({ min: 20, max: 400 }), word).map(([n, w]) => w.repeat(n).slice(0, n)),
  },
  { weight: 1, arbitrary: fc.constantFrom('e\u0301', 'a\u0308') },
  { weight: 4, arbitrary: fc.constantFrom('\r\n', '\r', '\b', '\b\b\b') },
  // Progress frames: a line rewritten with CR again and again (collapsed by the sanitizer), some frames
  // wider than the screen.
  {
    weight: 2,
    arbitrary: fc
      .array(fc.oneof(word, fc.constantFrom('[###   ] 10%', '[######] 100%', 'x')), {
        minLength: 1,
        maxLength: 8,
      })
      .map((frames) => frames.map((frame) => `\r${frame}`).join('')),
  },
  // Spinner frames: a character and a backspace, again and again (collapsed by the sanitizer).
  {
    weight: 2,
    arbitrary: fc
      .array(fc.constantFrom(...'|/-\\ab'), { minLength: 1, maxLength: 9 })
      .map((frames) => frames.map((frame) => `${frame}\b`).join('')),
  },
  { weight: 1, arbitrary: fc.constantFrom('\x1b[1;31m', '\x1b[0m') },
  {
    weight: 4,
    arbitrary: fc
      .tuple(small, fc.constantFrom('A', 'B', 'C', 'D', 'G', 'K', 'J', 'L', 'M', 'P', '@', 'X', 'E', 'F'))
      .map(([n, final]) => {
        if (final === 'K' || final === 'J') return `\x1b[${n % 3}${final}`;
        return `\x1b[${n === 0 ? '' : n}${final}`;
      }),
  },
  { weight: 1, arbitrary: fc.tuple(small, small).map(([r, c]) => `\x1b[${r + 1};${c + 1}H`) },
);
const stream = fc.array(piece, { minLength: 1, maxLength: 60 }).map((pieces) => pieces.join(''));
const size = fc.record({ rows: fc.integer({ min: 2, max: 8 }), cols: fc.integer({ min: 3, max: 24 }) });

/** `text` cut at the given offsets (never inside a surrogate pair). */
function split(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const parts: string[] = [];
  let from = 0;
  for (const point of points) {
    parts.push(text.slice(from, point));
    from = point;
  }
  parts.push(text.slice(from));
  return parts;
}

describe('output model: properties', () => {
  it('any split of the stream gives the same text', () => {
    fc.assert(
      fc.property(stream, size, fc.array(fc.nat(), { maxLength: 12 }), (s, { rows, cols }, cuts) => {
        const whole = pipeline(rows, cols);
        whole.push(s);
        const pieces = pipeline(rows, cols);
        for (const part of split(s, cuts)) pieces.push(part);
        expect(pieces.text()).toBe(whole.text());
        // Reading in between (a sync) changes nothing either.
        const reading = pipeline(rows, cols);
        for (const part of split(s, cuts)) {
          reading.push(part);
          reading.text();
        }
        expect(reading.text()).toBe(whole.text());
      }),
      { numRuns: 1000 },
    );
  });

  it('committed text never contains ESC or another control but TAB', () => {
    fc.assert(
      fc.property(stream, size, (s, { rows, cols }) => {
        // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for controls
        expect(read(s, rows, cols)).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
      }),
      { numRuns: 300 },
    );
  });

  it('the final visible lines agree with @xterm/headless fed the same bytes', async () => {
    await fc.assert(
      fc.asyncProperty(stream, size, async (s, { rows, cols }) => {
        const p = pipeline(rows, cols);
        p.push(s);
        const terminal = new xtermHeadless.Terminal({ rows, cols, scrollback: 0, allowProposedApi: true });
        await new Promise<void>((resolve) => terminal.write(s, resolve));
        const buffer = terminal.buffer.active;
        // Trailing blanks and trailing spaces look the same to a reader (text cannot tell them apart).
        const expected = Array.from({ length: rows }, (_, y) =>
          buffer.getLine(y)!.translateToString(true).trimEnd(),
        );
        terminal.dispose();
        expect(p.model.visibleRows().map((row) => row.trimEnd())).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });
});
