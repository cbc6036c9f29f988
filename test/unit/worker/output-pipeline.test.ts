/**
 * The output pipeline with its one terminal model (docs/decisions/0005-terminal-model.md): what a reader
 * gets is what a person would see (SPEC §4.3), replies come from xterm through the reply port with the
 * markers parsed before them, prompt evidence is read from the screen, and the three traps of 0005.
 * The cases of the deleted sanitizer, output-model and replier tests that still mean something, driven
 * through the real pipeline.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { marker, type PipelineHarness, pipelineHarness } from './pipeline-harness.js';

const open: PipelineHarness[] = [];
afterEach(() => {
  for (const h of open.splice(0)) h.dispose();
});

function harness(rows = 6, cols = 20, follow = false): PipelineHarness {
  const h = pipelineHarness(rows, cols, follow);
  open.push(h);
  return h;
}

/** The scrollback after `reads`, one pty read each. */
function read(reads: string[], rows = 6, cols = 20): string {
  const h = harness(rows, cols);
  for (const data of reads) h.write(data);
  return h.text();
}

describe('output pipeline: what a reader sees', () => {
  it('a CR returns to column 0 and what follows overwrites; backspaces move left', () => {
    expect(read(['abc\rxy'])).toBe('xyc');
    expect(read(['abc\rxy\r\nnext'])).toBe('xyc\nnext');
    expect(read(['abc\b\bX'])).toBe('aXc');
  });

  it('keeps only the final content of a 1000-step carriage-return progress loop', () => {
    const loop = Array.from({ length: 1001 }, (_, i) => `\rstep ${String(i).padStart(4)}`).join('');
    expect(read([`${loop}\r\ndone\r\n`])).toBe('step 1000\ndone');
  });

  it("tells a listening send a read's progress redraws in one call, every redraw in it as written", () => {
    const h = harness(6, 40, true);
    h.write('a\r\n'); // the row is open and ASCII from here: the redraws take the fast path
    const steps = Array.from({ length: 50 }, (_, i) => `\rp ${i * 2}%`).join('');
    h.write(`${steps}\b\b\b99%\r\n`);
    expect(h.heard.calls.rowEdits).toBe(1);
    expect(h.heard.calls.rewriteLine).toBe(50); // split by the listener, one per redraw
    expect(h.heard.text).toBe(`a\n${Array.from({ length: 50 }, (_, i) => `\rp ${i * 2}%`).join('')}99%\n`);
    expect(h.text()).toBe('a\np 99%');
  });

  it('turns a CRLF split across reads, and CR CR LF, into one line end', () => {
    expect(read(['a\r', '\nb'])).toBe('a\nb');
    expect(read(['a\r\r\nb'])).toBe('a\nb');
  });

  it('removes colours, cursor controls, charset designations and DCS/APC strings', () => {
    expect(read(['a\x1b[31mb\x1b[0mc\r\n'])).toBe('abc');
    expect(read(['x\x1bP1$r0m\x1b\\y\x1b_apc\x1b\\z\x1b(Bw\r\n'])).toBe('xyzw');
  });

  it('drops BEL, NUL and DEL; a sequence cancelled by CAN or SUB prints nothing of itself', () => {
    expect(read(['a\x07b\x00c\x7fd\r\n'])).toBe('abcd');
    expect(read(['a\x1b[3\x18b\x1b]0;t\x1ac\r\n'])).toBe('abc');
  });

  it('hands a surrogate pair split across reads over whole', () => {
    expect(read(['x\ud83d', '\ude00y\r\n'])).toBe('x😀y');
  });

  it('an unterminated OSC followed by a flood stays bounded; text after a later BEL is visible', () => {
    const h = harness();
    h.write('\x1b]0;');
    for (let i = 0; i < 50; i++) h.write('a'.repeat(10_000));
    h.write('\x07visible\r\n');
    expect(h.text()).toBe('visible');
  });

  it('a cursor-up redraw reads as its final frame, and rewrittenSince makes a mark read it again', () => {
    const h = harness(6, 20);
    h.write('a 0%\r\nb 0%\r\n');
    const mark = h.pipeline.output.mark();
    expect(h.pipeline.output.since(mark, 1000).text).toBe('');
    h.write('\x1b[2A\ra 50%\x1b[K\r\nb 50%\x1b[K\r\n');
    expect(h.text()).toBe('a 50%\nb 50%');
    // The lines before the mark were redrawn: a reader of the mark gets them again.
    expect(h.pipeline.output.since(mark, 1000).text).toBe('a 50%\nb 50%\n');
  });

  it('lines that scroll off a full screen stay in the scrollback while the screen is redrawn', () => {
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i}`);
    const h = harness(3, 20);
    h.write(`\x1b[K${lines.join('\r\n')}\r\n`);
    h.write('\x1b[2Aredrawn\x1b[K\r\n');
    expect(h.text()).toBe(`${lines.slice(0, 8).join('\n')}\nredrawn\nline 9`);
  });
});

describe('output pipeline: the three traps of 0005', () => {
  it("a reader's view during a full-screen program ends with the main screen waiting underneath", () => {
    const h = harness(4, 20);
    h.write('one\r\ntwo\r\n$ vim\r\n');
    h.write('\x1b[?1049h\x1b[H\x1b[2Jvim screen\x1b[3;1Hmore');
    expect(h.pipeline.alternateScreen).toBe(true);
    expect(h.text()).toBe('one\ntwo\n$ vim');
    h.write('\x1b[?1049l');
    h.write('after\r\n');
    expect(h.text()).toBe('one\ntwo\n$ vim\nafter');
  });

  it("none of our own sequences is parsed while the program's is open (a read ending in ESC [ 3)", () => {
    // Enough lines to scroll rows off (their harvest drops xterm's scrollback) while the SGR is open.
    const h = harness(2, 20);
    h.write('\x1b[Ka\r\nb\r\nc\r\nd\r\n\x1b[3');
    h.write('1mred\x1b[0m\r\n');
    expect(h.text()).toBe('a\nb\nc\nd\nred');
    expect(h.pipeline.snapshot().ansi).toContain('red');
    expect(h.text()).not.toContain('1m');
  });

  it("pass-through resumes only in the parser's ground state (a read ending in ESC, then a plain one)", () => {
    const h = harness(4, 20);
    h.write('x\x1b[K\r\n\x1b');
    h.write('Mplain\r\n'); // ESC M (reverse index) then text: not the text "Mplain"
    expect(h.text()).not.toContain('Mplain');
    expect(h.text()).toContain('plain');
  });
});

describe('output pipeline: replies and prompt evidence', () => {
  it('answers DA, DSR, CPR and the window size, with the markers parsed before each query', () => {
    const h = harness(6, 20);
    h.write(`ab\x1b[6n${marker(1)}$ \x1b[c`);
    h.write('\x1b[5n\x1b[18t');
    expect(h.replies.map((r) => r.markersBefore)).toEqual([0, 1, 1, 1]);
    expect(h.replies[0]!.data).toBe('\x1b[1;3R');
    expect(h.replies[2]!.data).toBe('\x1b[0n');
    expect(h.replies[3]!.data).toBe('\x1b[8;6;20t');
    expect(h.pipeline.markersParsed).toBe(1);
  });

  it('past its burst, the query budget neutralizes queries instead of answering them', () => {
    const h = harness();
    h.write('\x1b[6n'.repeat(3000));
    // 512 at once, then a few more as the rate refills the budget during the parse.
    expect(h.replies.length).toBeGreaterThanOrEqual(512);
    expect(h.replies.length).toBeLessThan(1000);
    expect(h.text()).toBe('');
  });

  it('prompt evidence: the marker, then exactly the prompt on its row, the cursor after it', () => {
    const h = harness();
    h.write(`out\r\n${marker(1)}$`);
    expect(h.pipeline.prompt.candidate).toBeUndefined();
    h.write(' ');
    expect(h.pipeline.prompt.candidate).toMatchObject({ exitCode: 0, shellPid: 4242, promptNumber: 1 });
    h.write('ls');
    expect(h.pipeline.prompt.candidate).toBeUndefined();
    h.write(`\r\nfile\r\n${marker(2, 3)}$ `);
    expect(h.pipeline.prompt.candidate).toMatchObject({ exitCode: 3, promptNumber: 2 });
  });

  it('an owned marker while a full-screen program has the alternate screen: the program is gone', () => {
    const h = harness();
    h.write('\x1b[?1049h\x1b[Hvim');
    expect(h.pipeline.alternateScreen).toBe(true);
    h.write(`${marker(2)}$ `);
    expect(h.pipeline.alternateScreen).toBe(false);
    expect(h.pipeline.prompt.candidate).toMatchObject({ promptNumber: 2 });
    h.write('echo hi\r\nhi\r\n');
    expect(h.text()).toContain('hi\n');
  });

  it('tells the send what is printed: rewrites as CR, line ends, redraws again as new text', () => {
    const h = harness(6, 20, true);
    h.write('p 10%\rp 99%\r\n');
    h.write('\x1b[Ka\r\nb\x1b[1A\rA\r\n');
    h.write(`${marker(3)}$ `);
    expect(h.heard.text).toBe('p 10%\rp 99%\na\nb\rA\n$ ');
    expect(h.heard.markers).toBe(1);
  });
});
