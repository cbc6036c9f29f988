/**
 * The terminal-protocol replier: answers, order, split queries, idle signalling, batching, disposal,
 * the carriage-return collapse, and a differential property test of the plain-text fast path against
 * an xterm terminal that parses every byte. A real python3 asking through a pty is in
 * test/system/worker/replies/terminal-replier.test.ts.
 */
import xtermHeadless, { type Terminal } from '@xterm/headless';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolveEngineConfig } from '../../../../src/shared/config.js';
import { LineFeeds } from '../../../../src/worker/output/line-feeds.js';
import { LineTextKind, lineTextKind } from '../../../../src/worker/output/line-text.js';
import { OutputPipeline } from '../../../../src/worker/output-pipeline.js';
import { CarriageReturnCollapser } from '../../../../src/worker/replies/carriage-return-collapse.js';
import { FrameCollapser } from '../../../../src/worker/replies/cursor-up-frame-collapse.js';
import {
  holdsOnlyAdmittedSequences,
  lineFeedsToRefresh,
  PlainRunScanner,
  reducePlainRun,
} from '../../../../src/worker/replies/plain-text-skip.js';
import {
  mayReplyBeforeMoreOutput,
  replierTerminalOptions,
  TerminalReplier,
  type TerminalReplierStats,
} from '../../../../src/worker/replies/terminal-replier.js';

/**
 * The session's own output pipeline (output-pipeline.ts) around a terminal model, its replies recorded:
 * what the session does to each pty read — classification, the sanitizer, the fast entries it picks —
 * is the real code, not a copy of it. Disposed after the test.
 */
function sessionPipeline(
  cols = 80,
  rows = 24,
  disposeAfterTest = true,
): { pipeline: OutputPipeline; replier: TerminalReplier; replies: string[] } {
  const replies: string[] = [];
  const pipeline = new OutputPipeline({
    rows,
    cols,
    config: resolveEngineConfig({}),
    nonce: 'feedface',
    prompt: '$ ',
    replies: { offer: (data) => replies.push(data), markerParsed: () => undefined },
    listener: () => undefined,
  });
  if (disposeAfterTest) open.push(pipeline);
  return { pipeline, replier: Reflect.get(pipeline, 'replier') as TerminalReplier, replies };
}

/** Feeds `chunk` through `pipeline` as one pty read, processed at once. */
function feedAsSession(pipeline: OutputPipeline, chunk: string): void {
  pipeline.write(chunk);
  pipeline.flush();
}

const CPR = '\x1b[6n';
const DECXCPR = '\x1b[?6n';
const DA1 = '\x1b[c';
const DA2 = '\x1b[>c';
const WINDOW_SIZE = '\x1b[18t';
/** More than the replier parses synchronously, and not shortenable (no CR): always an xterm write. */
const LARGE_TEXT = 'x'.repeat(9 * 1024);
/** The cursor after LARGE_TEXT on 80 × 24: 9216 = 115 × 80 + 16 characters. */
const CPR_AFTER_LARGE_TEXT = '\x1b[24;17R';

const open: { dispose(): void }[] = [];

afterEach(() => {
  for (const item of open.splice(0)) item.dispose();
});

/** A replier that records its replies and is disposed after the test. */
function replier(cols = 80, rows = 24): { replier: TerminalReplier; replies: string[] } {
  const replies: string[] = [];
  const created = new TerminalReplier({ cols, rows, reply: (data) => replies.push(data) });
  open.push(created);
  return { replier: created, replies };
}

/** An xterm terminal with the replier's options that parses every byte it is given; the caller disposes it. */
function createReference(cols: number, rows: number): { terminal: Terminal; replies: string[] } {
  const terminal = new xtermHeadless.Terminal(replierTerminalOptions(cols, rows));
  const replies: string[] = [];
  terminal.onData((data) => replies.push(data));
  return { terminal, replies };
}

/** {@link createReference}, disposed after the test. */
function referenceTerminal(cols: number, rows: number): { terminal: Terminal; replies: string[] } {
  const reference = createReference(cols, rows);
  open.push(reference.terminal);
  return reference;
}

function written(terminal: Terminal, data: string): Promise<void> {
  return new Promise((resolve) => terminal.write(data, resolve));
}

/** Log-like lines of 40–120 characters, CRLF-terminated as a pty with ONLCR delivers them. */
function logLines(count: number, seed = 7): string {
  let state = seed;
  const next = (): number => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const length = 40 + Math.floor(next() * 81);
    let line = `2024-05-01T12:00:${String(i % 60).padStart(2, '0')}Z worker-${i % 7} `;
    while (line.length < length) line += `req=${Math.floor(next() * 1e6)} `;
    lines.push(line.slice(0, length));
  }
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * A download progress bar as the `progress` benchmark workload prints it: `count` redraws, each file's
 * line redrawn 101 times with `\r` and ended by a line feed. Its redraws are at most 86 cells wide.
 */
function progressBars(count: number): string {
  let text = '';
  for (let i = 0; i < count; i++) {
    const pct = i % 101;
    const bar = '#'.repeat(Math.floor(pct / 2.5)).padEnd(40);
    text += `\rDownloading file-${Math.floor(i / 101)}.tar.gz [${bar}] ${String(pct).padStart(3)}% ${(pct * 1.7).toFixed(1)} MB/s`;
    if (pct === 100) text += '\r\n';
  }
  return text;
}

describe('TerminalReplier answers', () => {
  it('cursor position, extended cursor position, device attributes and window size', async () => {
    const { replier: r, replies } = replier(100, 30);
    r.feed(`abc\r\n\tx${CPR}${DECXCPR}${DA1}${DA2}${WINDOW_SIZE}`);
    await r.whenIdle();
    expect(replies).toEqual(['\x1b[2;10R', '\x1b[?2;10R', '\x1b[?1;2c', '\x1b[>0;276;0c', '\x1b[8;30;100t']);
  });

  it('in stream order, each reply reflecting the cursor at its query', async () => {
    const { replier: r, replies } = replier();
    const queries = Array.from({ length: 20 }, (_, i) => `\x1b[${i + 1};${i + 2}H${CPR}`).join('');
    r.feed(queries);
    await r.whenIdle();
    expect(replies).toEqual(Array.from({ length: 20 }, (_, i) => `\x1b[${i + 1};${i + 2}R`));
  });

  it('a query split across feeds at every position, each part in its own parser write', async () => {
    const move = '\x1b[12;34H';
    for (const query of [CPR, DECXCPR]) {
      for (let cut = 1; cut < query.length; cut++) {
        const { replier: r, replies } = replier();
        r.feed(move + query.slice(0, cut));
        await r.whenIdle();
        r.feed(query.slice(cut));
        await r.whenIdle();
        expect(replies, `${JSON.stringify(query)} cut at ${cut}`).toEqual([
          query === CPR ? '\x1b[12;34R' : '\x1b[?12;34R',
        ]);
        expect(r.stats.parserWrites).toBe(2);
      }
    }
  });

  it('after a resize at its point of the stream', async () => {
    const { replier: r, replies } = replier(40, 10);
    r.feed('x'.repeat(35));
    r.resize(20, 12);
    r.feed(`${CPR}${WINDOW_SIZE}`);
    await r.whenIdle();
    // Written at 40 columns the text leaves the cursor at column 36; narrowing clamps it to column 20
    // (no reflow). Had the resize overtaken the text, it would have wrapped: row 2, column 16.
    expect(replies).toEqual(['\x1b[1;20R', '\x1b[8;12;20t']);
  });
});

describe('TerminalReplier idle signalling and batching', () => {
  it('a small chunk that asks nothing is parsed at once when idle; one with a query waits for its write', async () => {
    const replies: string[] = [];
    const r = new TerminalReplier({
      cols: 80,
      rows: 24,
      reply: (data) => replies.push(data),
      isPromptMarker: (payload) => payload.startsWith('133;'),
    });
    open.push(r);
    // A prompt (marker + PS1): parsed before feed returns, so the session may look at the terminal.
    r.feed('out\r\n\x1b]133;D;0\x07$ ');
    expect(r.markersParsed).toBe(1);
    expect(r.busy).toBe(false);
    expect(r.stats.parserWrites).toBe(1);
    // As xterm, bash wraps its prompt in bracketed-paste mode switches and programs color it: sequences
    // that never reply are parsed at once too.
    r.feed('\x1b[?2004h\x1b[1;32mok\x1b[0m\x1b]133;D;0\x07$ ');
    expect(r.markersParsed).toBe(2);
    expect(r.busy).toBe(false);
    // A private-marker query (`ESC[?6n`), a DA2 (`ESC[>c`) or a sequence split across reads might reply.
    for (const asking of ['\x1b[?6n', '\x1b[>c', '\x1b[?2004']) {
      r.feed(asking);
      expect(r.busy, JSON.stringify(asking)).toBe(true);
      await r.whenIdle();
    }
    r.feed('h'); // completes the split mode switch
    await r.whenIdle();
    expect(replies).toEqual(['\x1b[?2;7R', '\x1b[>0;276;0c']); // both were queries xterm answers
    replies.length = 0;
    // A query keeps xterm's asynchronous write (a stream of them is parsed in batches).
    r.feed(`x${CPR}`);
    expect(r.busy).toBe(true);
    expect(replies).toEqual([]);
    await r.whenIdle();
    expect(replies).toEqual(['\x1b[2;8R']); // row 2, after `$ ok$ x`
  });

  it('whenIdle resolves only after every reply was passed on', async () => {
    const { replier: r, replies } = replier();
    r.feed(`${LARGE_TEXT}${CPR}`);
    expect(r.busy).toBe(true);
    expect(replies).toEqual([]);
    await r.whenIdle();
    expect(replies).toEqual([CPR_AFTER_LARGE_TEXT]);
    expect(r.busy).toBe(false);
    await r.whenIdle();
  });

  it('coalesces 10 000 chunks fed during an active write into one next parser write', async () => {
    const { replier: r, replies } = replier();
    r.feed(`${LARGE_TEXT}${CPR}`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.stats.parserWrites).toBe(1);
    expect(r.busy).toBe(true);
    for (let i = 0; i < 10_000; i++) r.feed(i % 1000 === 999 ? CPR : 'ab\r\n');
    await r.whenIdle();
    expect(r.stats.parserWrites).toBe(2);
    expect(replies).toEqual([CPR_AFTER_LARGE_TEXT, ...Array.from({ length: 10 }, () => '\x1b[24;1R')]);
  });

  it('skips most of a plain flood and still answers exactly like a full parse', async () => {
    const flood = `\x1b[31m${logLines(20_000)}\x1b[0mtail${CPR}`;
    const { replier: r, replies } = replier(160, 40);
    const reference = referenceTerminal(160, 40);
    for (let at = 0; at < flood.length; at += 4096) r.feed(flood.slice(at, at + 4096));
    await r.whenIdle();
    await written(reference.terminal, flood);
    expect(replies).toEqual(reference.replies);
    expect(r.stats.charsFed).toBe(flood.length);
    expect(r.stats.charsParsed).toBeLessThan(flood.length / 20);
  });

  it('holds line text fed through feedLineText, shortening it as it grows, and answers like a full parse', async () => {
    const longLines = logLines(3_000).replaceAll('\r\n', ` ${'x'.repeat(300)}\r\n`);
    const cases = [
      { name: 'plain lines', before: '', flood: logLines(20_000) },
      { name: 'after an SGR held with them', before: '\x1b[1;32mgreen ', flood: logLines(20_000) },
      { name: 'lines too long for the newest chunks alone', before: '', flood: longLines },
    ];
    const lineFeeds = new LineFeeds();
    for (const { name: caseName, before, flood } of cases) {
      // With the line feeds the session's scan found (ASCII chunks), and without (wide text).
      for (const withLineFeeds of [false, true]) {
        const name = `${caseName}${withLineFeeds ? ', line feeds known' : ''}`;
        const { replier: r, replies } = replier(160, 40);
        const reference = referenceTerminal(160, 40);
        r.feed(before);
        for (let at = 0; at < flood.length; at += 4096) {
          const chunk = flood.slice(at, at + 4096);
          expect(lineTextKind(chunk, lineFeeds)).toBe(LineTextKind.Ascii);
          r.feedLineText(chunk, withLineFeeds ? lineFeeds.known : undefined);
        }
        r.feed(`\x1b[0mtail${CPR}`);
        await r.whenIdle();
        await written(reference.terminal, `${before}${flood}\x1b[0mtail${CPR}`);
        expect(replies, name).toEqual(reference.replies);
        expect(screenState(Reflect.get(r, 'terminal') as Terminal), name).toEqual(
          screenState(reference.terminal),
        );
        expect(r.stats.charsParsed, name).toBeLessThan(flood.length / 20);
        expect(r.stats.shortenedRuns, name).toBeGreaterThan(flood.length / (128 * 1024));
      }
    }
  });

  it('holds a colored log routed as styled line text without a scan, and answers like a full parse', async () => {
    const colors = ['\x1b[32m', '\x1b[1;33m', '\x1b[38;5;208m', '\x1b[2m'];
    const flood = logLines(20_000)
      .split('\r\n')
      .map((line, i) => `${colors[i % colors.length]}${line.slice(0, 8)}\x1b[0m${line.slice(8)}`)
      .join('\r\n');
    const { pipeline, replier: r, replies } = sessionPipeline(160, 40);
    const reference = referenceTerminal(160, 40);
    const scan = vi.spyOn(PlainRunScanner.prototype, 'scan');
    for (let at = 0; at < flood.length; at += 4096) feedAsSession(pipeline, flood.slice(at, at + 4096));
    const scannedChars = scan.mock.calls.reduce((sum, [text, from]) => sum + text.length - from, 0);
    scan.mockRestore();
    r.feed(`\x1b[0mtail${CPR}`);
    await r.whenIdle();
    await written(reference.terminal, `${flood}\x1b[0mtail${CPR}`);
    expect(replies).toEqual(reference.replies);
    expect(screenState(Reflect.get(r, 'terminal') as Terminal)).toEqual(screenState(reference.terminal));
    expect(r.stats.charsParsed).toBeLessThan(flood.length / 20);
    // Only the reads that cut an SGR in two are scanned (the sanitizer takes part of those the styled
    // way, so the replier is fed them whole through `feed`).
    expect(scannedChars).toBeLessThan(flood.length / 2);
  });

  it('admits a chunk as styled line text only when every sequence in it is one a plain run admits', () => {
    expect(holdsOnlyAdmittedSequences('ok', -1)).toBe(true);
    expect(holdsOnlyAdmittedSequences('a\x1b[1;31mb\x1b[0mc\x1b[Kd', 1)).toBe(true);
    expect(holdsOnlyAdmittedSequences('a\x1b[1;31mb\x1b[38:2:1:2:3mc', 1)).toBe(false);
    expect(holdsOnlyAdmittedSequences('a\x1b[31mb\x1b[2J', 1)).toBe(false);
    expect(holdsOnlyAdmittedSequences('a\x1b[3', 1)).toBe(false); // cut off
  });

  it('collapses a `\\r` progress flood held back, parsing almost none of it, and answers like a full parse', async () => {
    // 1 500 lines of 101 redraws (13 MB): each line is ~9 000 characters, so 2 × rows of them are far
    // more than is held; collapsed, a line is one redraw or two.
    const flood = progressBars(151_500);
    const lineFeeds = new LineFeeds();
    for (const route of ['feed', 'lineText', 'session'] as const) {
      const {
        pipeline,
        replier: r,
        replies,
      } = route === 'session' ? sessionPipeline(120, 30) : { ...replier(120, 30), pipeline: undefined };
      const reference = referenceTerminal(120, 30);
      const feedOther = (chunk: string) =>
        pipeline === undefined ? r.feed(chunk) : feedAsSession(pipeline, chunk);
      feedOther('\x1b[1;33m');
      for (let at = 0; at < flood.length; at += 4096) {
        const chunk = flood.slice(at, at + 4096);
        if (route === 'feed') r.feed(chunk);
        else if (pipeline !== undefined) feedAsSession(pipeline, chunk);
        else {
          expect(lineTextKind(chunk, lineFeeds)).toBe(LineTextKind.Ascii);
          r.feedLineText(chunk);
        }
      }
      feedOther(`\x1b[0mtail${CPR}`);
      await r.whenIdle();
      await written(reference.terminal, `\x1b[1;33m${flood}\x1b[0mtail${CPR}`);
      expect(replies, route).toEqual(reference.replies);
      expect(screenState(Reflect.get(r, 'terminal') as Terminal), route).toEqual(
        screenState(reference.terminal),
      );
      expect(r.stats.collapsedSegments, route).toBeGreaterThan(145_000);
      expect(r.stats.charsParsed, route).toBeLessThan(20_000);
    }
  });

  it('ends a write before a long plain run so the next write can shorten it, and bounds each write', async () => {
    const { replier: r, replies } = replier(80, 24);
    const flood = logLines(5_000);
    r.feed(`\x1b[2J\x1b[H${flood}${CPR}`);
    await r.whenIdle();
    expect(r.stats.parserWrites).toBe(2);
    expect(r.stats.shortenedRuns).toBe(1);
    expect(r.stats.charsParsed).toBeLessThan(flood.length / 20);
    // Under a scroll region nothing can be skipped; the same output is parsed in bounded writes.
    r.feed(`\x1b[2;20r${flood}${CPR}`);
    await r.whenIdle();
    expect(r.stats.parserWrites).toBeGreaterThanOrEqual(2 + Math.ceil(flood.length / (256 * 1024)));
    expect(replies).toEqual(['\x1b[24;1R', '\x1b[20;1R']);
    // Plain output that cannot be shortened (no CR to restart from) is held only up to a bound.
    r.feed('\x1b[r');
    await r.whenIdle();
    const before = r.stats.charsParsed;
    const lineFeedsOnly = flood.replaceAll('\r', '');
    r.feed(lineFeedsOnly);
    await r.whenIdle();
    expect(r.stats.charsParsed - before).toBe(lineFeedsOnly.length);
  });

  it('disposal during a write does not throw; later feeds are ignored; waiters resolve', async () => {
    const { replier: r, replies } = replier();
    // Observe the parse xterm completes after the disposal (the replier itself ignores it).
    const terminal = Reflect.get(r, 'terminal') as Terminal;
    const write = terminal.write.bind(terminal);
    const parsedAfterDispose = new Promise<void>((resolve) => {
      terminal.write = (data, callback) =>
        write(data, () => {
          callback?.();
          resolve();
        });
    });
    r.feed(`${LARGE_TEXT}${CPR}`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.stats.parserWrites).toBe(1);
    const idle = r.whenIdle();
    r.dispose();
    await idle;
    r.dispose();
    r.feed(CPR);
    r.resize(10, 10);
    await r.whenIdle();
    expect(r.busy).toBe(false);
    expect(r.stats.charsFed).toBe(`${LARGE_TEXT}${CPR}`.length);
    await parsedAfterDispose;
    expect(replies).toEqual([]);
  });

  it('reports a throwing reply sink and keeps answering', async () => {
    const errors: unknown[] = [];
    const replies: string[] = [];
    const r = new TerminalReplier({
      cols: 80,
      rows: 24,
      reply: (data) => {
        if (replies.push(data) === 1) throw new Error('pty closed');
      },
      onReplyError: (error) => errors.push(error),
    });
    open.push(r);
    r.feed(`${CPR}x${CPR}`);
    await r.whenIdle();
    expect(replies).toEqual(['\x1b[1;1R', '\x1b[1;2R']);
    expect(errors).toHaveLength(1);
  });
});

/**
 * Feeds `parts` to a replier, each part its own batch (idle in between), and all of them to a
 * reference xterm (a `{ cols, rows }` part resizes both); returns both sides' replies and screens, and
 * the replier's counters.
 */
async function againstReference(
  cols: number,
  rows: number,
  parts: (string | { cols: number; rows: number })[],
) {
  const { replier: subject, replies } = replier(cols, rows);
  const reference = referenceTerminal(cols, rows);
  for (const part of parts) {
    if (typeof part === 'string') {
      subject.feed(part);
      await written(reference.terminal, part);
    } else {
      subject.resize(part.cols, part.rows);
      reference.terminal.resize(part.cols, part.rows);
    }
    await subject.whenIdle();
  }
  return {
    subject: { replies, screen: screenState(Reflect.get(subject, 'terminal') as Terminal) },
    reference: { replies: reference.replies, screen: screenState(reference.terminal) },
    stats: subject.stats,
  };
}

const lines = (from: number, count: number): string =>
  Array.from({ length: count }, (_, i) => `line${from + i}`).join('\r\n');

describe('TerminalReplier fast path preconditions (each case fails if its check is removed)', () => {
  it('with the line feeds at hand, holds exactly the suffix that shortening keeps', async () => {
    const lineFeeds = new LineFeeds();
    const { replier: r } = replier(80, 6);
    const held = (): string => (Reflect.get(r, 'held') as { plainText(): string }).plainText();
    const needed = lineFeedsToRefresh(6, 0); // a fresh terminal: the cursor is on the top row
    const chunk = logLines(needed + 5);
    expect(lineTextKind(chunk, lineFeeds)).toBe(LineTextKind.Ascii);
    r.feedLineText(chunk, lineFeeds.known);
    expect(held()).toBe(reducePlainRun(chunk, 0, chunk.length, -1, needed));
    expect(r.stats.shortenedRuns).toBe(1);
    // Too few line feeds in the chunk alone: it is held whole (and shortened as it grows).
    const short = logLines(3, 11);
    lineTextKind(short, lineFeeds);
    r.feedLineText(short, lineFeeds.known);
    expect(held()).toBe(reducePlainRun(chunk, 0, chunk.length, -1, needed) + short);
    expect(r.stats.shortenedRuns).toBe(1);
  });

  it('counts the line feeds the cursor needs to reach the bottom row first', async () => {
    // The cursor is homed over a full screen; the rows it walks down must all scroll away.
    const screen = 'AAAAAAA\r\nBBBBBBB\r\nCCCCCCC';
    const run = await againstReference(8, 3, [screen, '\x1b[H', `p\r\n${lines(0, 6)}${CPR}`]);
    expect(run.stats.shortenedRuns).toBe(1);
    expect(run.subject).toEqual(run.reference);
  });

  it('keeps the attributes set before the suffix, including a reset of protection', async () => {
    const decrqssProtection = '\x1bP$q"q\x1b\\';
    const parts = ['\x1b[1"q\x1b[33m', `x\x1b[0m\x1b[1;34m${lines(0, 12)}\r\n${decrqssProtection}`];
    const run = await againstReference(10, 4, parts);
    expect(run.stats.shortenedRuns).toBe(1);
    expect(run.subject).toEqual(run.reference);
  });

  it('holds plain output fed in chunks that cut its sequences apart, and parses it before a query', async () => {
    // One reset (which also lifts the protection set first) with a background, then colors only early on.
    const color = (i: number): string =>
      i === 0 ? '\x1b[0;44;1m' : i < 12 && i % 3 === 0 ? `\x1b[3${i % 8}m` : '';
    const colored = Array.from({ length: 30 }, (_, i) => `${color(i)}line${i}\x1b[K`).join('\r\n');
    const chunks = Array.from({ length: Math.ceil(colored.length / 7) }, (_, i) =>
      colored.slice(i * 7, i * 7 + 7),
    );
    const run = await againstReference(12, 5, ['\x1b[1"q', ...chunks, `\r\n\x1bP$q"q\x1b\\${CPR}`]);
    expect(run.stats.parserWrites).toBe(2);
    expect(run.stats.shortenedRuns).toBeGreaterThan(0);
    expect(run.subject).toEqual(run.reference);
    expect(run.reference.replies[0]).toBe('\x1bP1$r0"q\x1b\\');
  });

  it('parses everything when the output starts inside an escape sequence', async () => {
    // `ESC [ ?` + `7l` turns autowrap off; the text after it must not be mistaken for plain output.
    const run = await againstReference(6, 3, ['\x1b[?', `7l\r\n${lines(0, 12)}\r\n\x1b[?7$p`]);
    expect(run.subject).toEqual(run.reference);
    expect(run.reference.replies).toEqual(['\x1b[?7;2$y']);
  });

  it('parses everything under a scroll region', async () => {
    // DECSTBM homes the cursor above the region: the first line lands on a row that never scrolls.
    const run = await againstReference(8, 4, ['\x1b[2;3r', `p\r\n${lines(0, 12)}${CPR}`]);
    expect(run.subject).toEqual(run.reference);
  });

  it('parses everything while the line ring is larger than the screen', async () => {
    // An alternate screen entered after a shrink keeps the old ring size and grows per line feed.
    const run = await againstReference(4, 4, [{ cols: 4, rows: 1 }, '\x1b[?1049h', `\r\n\r\n\r\n${CPR}`]);
    expect(run.subject).toEqual(run.reference);
  });

  it('collapses no redraws in insert mode, where printing shifts cells right', async () => {
    // Insert mode: `abc`, then `xy` inserted before it, then `d`: `dxyabc`. An overlay would give `dxyc`.
    const run = await againstReference(10, 3, ['\x1b[4h', 'x\r\n\rabc\rxy\rd', CPR]);
    expect(run.subject).toEqual(run.reference);
    expect(run.stats.collapsedSegments).toBe(0);
  });

  it('collapses no redraws under another character set (DEC line drawing)', async () => {
    // Belt and braces: xterm's replacement glyphs are one cell wide, so a collapse would be right here
    // too; the precondition keeps the argument to characters printed as themselves.
    const run = await againstReference(10, 3, ['\x1b(0', 'x\r\n\rqqqq\rxy\rlk', CPR]);
    expect(run.subject).toEqual(run.reference);
    expect(run.stats.collapsedSegments).toBe(0);
  });

  it('parses everything under reverse wraparound', async () => {
    // BS at column 0 climbs back over the rows `abcdefghi` wrapped into; they hold skipped output.
    const parts = ['\x1b[3;1H\x1b[?45h', `\r\nabcdefghi\r\b\b\b\b1\n2\r\n3\r\n4\r\n5${CPR}`];
    const run = await againstReference(3, 3, parts);
    expect(run.subject).toEqual(run.reference);
  });
});

/**
 * A cursor-up frame (cursor-up-frame-collapse.ts): `ESC [ n A`, then each text on its own erased line.
 * `prefix` opens each line (`\r ESC[2K` or `ESC[2K \r`), `end` closes it (`\r\n` or `\n`).
 */
function frame(texts: string[], prefix = '\r\x1b[2K', end = '\r\n', up = `\x1b[${texts.length}A`): string {
  return up + texts.map((text) => `${prefix}${text}${end}`).join('');
}

/** `count` frames of `layers` lines as the `cursorUp` benchmark workload draws them, `width` wide at most. */
function cursorUpFrames(count: number, layers: number, width: number): string {
  let text = '';
  for (let i = 0; i < count; i++) {
    const texts = Array.from({ length: layers }, (_, k) =>
      `${k}: ${'='.repeat(i % 40)}> ${(i * (k + 3)) % 200}MB`.slice(0, width),
    );
    text += i % 60 === 0 ? `${texts.join('\r\n')}\r\n` : frame(texts);
  }
  return text;
}

describe('cursor-up frame collapse (each case fails if its check is removed)', () => {
  const texts = (i: number, n: number): string[] => Array.from({ length: n }, (_, k) => `f${i} l${k}`);
  const frames = (count: number, n: number, prefix?: string, end?: string): string =>
    Array.from({ length: count }, (_, i) => frame(texts(i, n), prefix, end)).join('');

  it('replaces consecutive frames by the last one, in each admitted form', async () => {
    for (const [prefix, end] of [
      ['\r\x1b[2K', '\r\n'],
      ['\x1b[2K\r', '\r\n'],
      ['\r\x1b[2K', '\n'],
    ]) {
      const start = `\x1b[44m${lines(0, 6)}\r\n`; // a background: erased cells carry it
      const run = await againstReference(12, 8, [start, `${frames(20, 3, prefix, end)}tail${CPR}`]);
      expect(run.stats.collapsedFrames).toBe(19);
      expect(run.subject).toEqual(run.reference);
    }
    // `ESC[A` moves up one line; frames with another count start a run of their own.
    const one = frame(['a'], '\r\x1b[2K', '\r\n', '\x1b[A');
    const run = await againstReference(12, 8, ['x\r\n', `${one}${one}${one}${frames(3, 2)}${CPR}`]);
    expect(run.stats.collapsedFrames).toBe(4);
    expect(run.subject).toEqual(run.reference);
  });

  it('collapses frames near the top, where the cursor-up stops at the first row', async () => {
    // The cursor starts on row 1: every frame of 4 climbs to row 0 and ends lower than it started.
    const run = await againstReference(12, 8, ['\x1b[2;1H', `${frames(5, 4)}${CPR}`]);
    expect(run.stats.collapsedFrames).toBe(4);
    expect(run.subject).toEqual(run.reference);
    expect(run.reference.replies).toEqual(['\x1b[5;1R']);
  });

  it('leaves frames as tall as the screen alone', async () => {
    // An alternate screen entered after a shrink keeps the larger ring, which grows per scrolled line.
    const parts = [{ cols: 12, rows: 2 }, '\x1b[?1049h', `${frames(3, 2)}${frames(3, 3)}${CPR}`];
    const run = await againstReference(12, 4, parts);
    expect(run.stats.collapsedFrames).toBe(0);
    expect(run.subject).toEqual(run.reference);
  });

  it('leaves frames alone whose lines are the screen width or wider', async () => {
    const wide = (width: number): string =>
      Array.from({ length: 4 }, (_, i) => frame([`${i}`.repeat(width), `${i}`.repeat(width)])).join('');
    for (const width of [8, 9]) {
      const run = await againstReference(8, 6, ['x\r\n\r\n\r\n', `${wide(width)}${CPR}`]);
      expect(run.stats.collapsedFrames).toBe(0);
      expect(run.subject).toEqual(run.reference);
    }
  });

  it('leaves frames alone that hold another sequence, and stops looking after one', async () => {
    // A background set inside a frame colors the next frame's erased cells.
    const colored = frame(['a\x1b[41m', 'b']);
    const run = await againstReference(10, 6, ['x\r\n\r\n', `${colored}${frames(3, 2)}${CPR}`]);
    expect(run.stats.collapsedFrames).toBe(0);
    expect(run.subject).toEqual(run.reference);
    // After a sequence that changes the state (a scroll region here), frames are not collapsed.
    const region = await againstReference(10, 6, ['x\r\n\r\n', `\x1b[1;3r\x1b[4;1H${frames(3, 2)}${CPR}`]);
    expect(region.stats.collapsedFrames).toBe(0);
    expect(region.subject).toEqual(region.reference);
  });

  it('collapses no frames under a scroll region, in insert mode or another character set', async () => {
    for (const mode of ['\x1b[1;5r\x1b[5;1H', '\x1b[4h', '\x1b(0']) {
      const run = await againstReference(10, 6, ['ab\r\nc\r\nd\r\n', mode, `${frames(4, 2)}${CPR}`]);
      expect(run.stats.collapsedFrames, JSON.stringify(mode)).toBe(0);
      expect(run.subject, JSON.stringify(mode)).toEqual(run.reference);
    }
  });

  it('collapses no frames when a write starts inside a sequence', async () => {
    // The first write ends in `ESC [`; the next completes DECSTBM (rows 3–5, cursor homed above them):
    // the first frame ends on row 3, inside the region, and the next climbs only to its top.
    const run = await againstReference(10, 8, ['x\x1b[H\x1b[', `3;5r${frames(3, 3)}${CPR}`]);
    expect(run.stats.collapsedFrames).toBe(0);
    expect(run.subject).toEqual(run.reference);
  });

  it('holds a frame cut off at the end of a batch open and collapses it with the output after it', async () => {
    const sixth = frame(texts(5, 2));
    const half = sixth.length >> 1;
    const parts = [
      'x\r\n\r\n',
      frames(5, 2) + sixth.slice(0, half),
      `${sixth.slice(half)}${frames(3, 2)}${CPR}`,
    ];
    const run = await againstReference(10, 6, parts);
    expect(run.stats.collapsedFrames).toBe(4 + 3);
    expect(run.subject).toEqual(run.reference);
    // Held open, a cut-off `ESC [ 6` becomes a query with the next output; the screen and a resize parse it.
    const query = await againstReference(10, 6, ['x\r\n\r\n', `${frames(3, 2)}\x1b[6`, 'n']);
    expect(query.subject).toEqual(query.reference);
    expect(query.reference.replies).toEqual(['\x1b[3;1R']);
    const { replier: r } = replier(10, 6);
    const reference = referenceTerminal(10, 6);
    const cut = `x\r\n\r\n${frames(3, 2)}${sixth.slice(0, half)}`;
    r.feed(cut);
    await r.whenIdle();
    expect(r.stats.charsParsed).toBeLessThan(cut.length - half);
    const screen = await r.renderedScreen();
    await written(reference.terminal, cut);
    const { cursorX, cursorY } = reference.terminal.buffer.active;
    expect(screen?.cursor).toEqual({ row: cursorY, col: cursorX });
    expect(screenState(Reflect.get(r, 'terminal') as Terminal)).toEqual(screenState(reference.terminal));
  });

  it('answers a query that follows a redraw cut off inside its frame (issue 20)', async () => {
    // A block redrawn in part, then a cursor position request where the frame's next line would start:
    // the frame is cut off there, and what follows it must not be held open with it.
    const { replier: r, replies } = replier(80, 24);
    r.feed('a\r\nb\r\n\x1b[2A\r\x1b[2Kx\r\n\x1b[6n');
    await r.whenIdle();
    expect(replies).toEqual(['\x1b[2;1R']);
    // Every short query, at every line start of a frame and after its cursor-up, 7-bit and C1.
    const queries = [CPR, DA1, DA2, '\x1b[5n', '\x1b[0c', '\x9b6n', '\x9bc', '\x9b>c'];
    const starts = ['\x1b[2A', '\x1b[2A\r\x1b[2Kx\r\n', '\x1b[A', '\x1b[3A\x1b[2K\rx\n\r\x1b[2Ky\r\n'];
    for (const start of starts) {
      for (const query of queries) {
        const run = await againstReference(10, 6, ['a\r\nb\r\nc\r\n', start + query]);
        const label = JSON.stringify(start + query);
        expect(run.reference.replies, label).toHaveLength(1);
        expect(run.subject, label).toEqual(run.reference);
      }
    }
  });

  it('holds open only output that cannot reply before more arrives', () => {
    const asks = [CPR, DA1, DA2, DECXCPR, WINDOW_SIZE, '\x1b[5n', '\x1b[?6$p', '\x1b[2 q', '\x9b6n', '\x9bc'];
    const strings = ['\x1bP$qm\x1b\\', '\x1bP', '\x90', '\x1b]11;?\x07', '\x9d11;?\x07', '\x1b_x', '\x1bZ'];
    const controls = ['\x05', '\x7f', '\x18', 'x\x1b[?6', '\x1b[>'];
    for (const text of [...asks, ...strings, ...controls]) {
      expect(mayReplyBeforeMoreOutput(text), JSON.stringify(text)).toBe(true);
      expect(mayReplyBeforeMoreOutput(`\x1b[2A\r\x1b[2Kx\r\n${text}`), JSON.stringify(text)).toBe(true);
    }
    // Text, BEL…CR, quiet CSIs, and a lone ESC or a CSI cut off at the very end (it replies only once
    // more output completes it, and is parsed with that output).
    const quiet = ['', 'abc 中😀', '\x1b[2A\r\x1b[2Kx\r\n', '\x1b[1;31mred\x1b[K\t\x07\b\x0b\x0c'];
    for (const text of quiet) {
      for (const end of ['', '\x1b', '\x1b[', '\x1b[6', '\x1b[1;']) {
        expect(mayReplyBeforeMoreOutput(text + end), JSON.stringify(text + end)).toBe(false);
      }
    }
  });

  it('cuts off only the start of a frame, which cannot reply (property)', () => {
    const cutStream = fc.integer({ min: 2, max: 24 }).chain((cols) =>
      fc.record({
        cols: fc.constant(cols),
        rows: fc.integer({ min: 2, max: 9 }),
        text: cursorUpStream(cols),
        inserts: fc.array(fc.tuple(fc.nat(), fc.oneof(query, control)), { maxLength: 4 }),
        to: fc.nat(),
      }),
    );
    fc.assert(
      fc.property(cutStream, ({ cols, rows, text, inserts, to }) => {
        let stream = text;
        for (const [at, piece] of inserts) {
          const index = at % (stream.length + 1);
          stream = stream.slice(0, index) + piece + stream.slice(index);
        }
        const end = to % (stream.length + 1);
        const collapser = new FrameCollapser();
        collapser.collapse(stream, 0, end, rows, cols);
        expect(mayReplyBeforeMoreOutput(stream.slice(collapser.end, end))).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });

  it('leaves frames alone that are cut between writes', async () => {
    const text = `x\r\n\r\n${frames(6, 2)}${CPR}`;
    const parts = Array.from({ length: Math.ceil(text.length / 9) }, (_, i) => text.slice(i * 9, i * 9 + 9));
    const run = await againstReference(10, 6, parts);
    expect(run.stats.collapsedFrames).toBe(0);
    expect(run.subject).toEqual(run.reference);
  });

  it('collapses a cursor-up progress flood, parsing a small part of it, and answers like a full parse', async () => {
    const flood = cursorUpFrames(12_000, 6, 100); // ~6 MB
    for (const route of ['feed', 'session'] as const) {
      const {
        pipeline,
        replier: r,
        replies,
      } = route === 'session' ? sessionPipeline(120, 30) : { ...replier(120, 30), pipeline: undefined };
      const reference = referenceTerminal(120, 30);
      const feedChunk = (chunk: string) =>
        pipeline === undefined ? r.feed(chunk) : feedAsSession(pipeline, chunk);
      for (let at = 0; at < flood.length; at += 65536) feedChunk(flood.slice(at, at + 65536));
      feedChunk(`tail${CPR}`);
      await r.whenIdle();
      await written(reference.terminal, `${flood}tail${CPR}`);
      expect(replies, route).toEqual(reference.replies);
      expect(screenState(Reflect.get(r, 'terminal') as Terminal), route).toEqual(
        screenState(reference.terminal),
      );
      expect(r.stats.collapsedFrames, route).toBeGreaterThan(10_000);
      expect(r.stats.charsParsed, route).toBeLessThan(flood.length / 20);
    }
  });
});

describe('plain-text skip', () => {
  it('a plain run admits SGR and EL and stops at any other control', () => {
    const scanner = new PlainRunScanner();
    const text = 'ab\x1b[1;31mc\x1b[Kd\te\r\n\x1b[2Jrest';
    expect(scanner.scan(text, 0)).toBe(text.indexOf('\x1b[2J'));
    expect(scanner.firstSequence).toBe(2);
    expect(scanner.scan('x\x1b[?25ly', 0)).toBe(1);
    expect(scanner.scan('x\x0ey', 0)).toBe(1);
    expect(scanner.scan('x\x9bmy', 0)).toBe(1);
    expect(scanner.scan('x\x1b[38:2:1:2:3my', 0)).toBe(1);
  });

  it('keeps the suffix from a CR and the SGRs since the last reset before it', () => {
    const text = '\x1b[1m\x1b[0;32mA\x1b[4m\x1b[Kold\r\nl1\r\nl2\r\nl3\r\n';
    // Three line feeds: the suffix starts at the CR before the third line feed from the end.
    const scanner = new PlainRunScanner();
    const end = scanner.scan(text, 0);
    const reduced = reducePlainRun(text, 0, end, scanner.firstSequence, 3);
    expect(reduced).toBe('\x1b[0;32m\x1b[4m\r\nl2\r\nl3\r\n');
  });

  it('skips nothing without a CR before the needed line feeds', () => {
    expect(reducePlainRun('a\nb\nc\nd\n', 0, 8, -1, 2)).toBeUndefined();
    expect(reducePlainRun('a\nb\r\n', 0, 5, -1, 2)).toBeUndefined();
    expect(reducePlainRun('\r\nb\r\n', 0, 5, -1, 2)).toBeUndefined();
    expect(reducePlainRun('a\r\nb\r\n', 0, 6, -1, 2)).toBe('\r\nb\r\n');
    expect(reducePlainRun('a\r\nb\r\nc\r\n', 0, 9, -1, 2)).toBe('\r\nc\r\n');
  });

  it('collapses carriage-return redraws to their overlay and the last redraw, never across anything else', () => {
    const cases: { cols: number; text: string; expected: string }[] = [
      // The overlay of the completed redraws, then the last one as it is.
      { cols: 20, text: '\rone\rtwo-long\rx', expected: '\rtwo-long\rx' },
      { cols: 20, text: '\rabcdef\rxy\rz', expected: '\rxycdef\rz' },
      // The text before the first CR starts at an unknown column: kept, and not part of the overlay.
      { cols: 20, text: 'partial\rxy\rz\rq', expected: 'partial\rzy\rq' },
      { cols: 20, text: '\rabcdef\rxy\rz\rabcdefg\rh\ri', expected: '\rhbcdefg\ri' },
      // A last redraw wider than the overlay covers it; one as wide keeps it (the cell after the overlay).
      { cols: 20, text: '\rab\rabc\rabcd', expected: '\rabcd' },
      { cols: 20, text: '\rabc\rxyz', expected: '\rabc\rxyz' },
      // Exactly `cols` wide: collapses (no wrap), and a last redraw that wide covers the whole row.
      { cols: 5, text: '\rab\rabcde\rxy\n', expected: '\rabcde\rxy\n' },
      { cols: 5, text: '\rabc\rab\rvwxyz', expected: '\rvwxyz' },
      // Wider than `cols`: it wraps, so it ends the window and stays as it is.
      { cols: 5, text: '\rab\rabcdef\rxy\r1\n', expected: '\rabcdef\rxy\r1\n' },
      { cols: 5, text: '\rabcdef\rxy\r1', expected: '\rabcdef\rxy\r1' },
      // Beyond ASCII (wide, combining), an SGR, TAB, BS, BEL, LF: the window ends before it.
      { cols: 20, text: '\r1234\rab\rc中\rxy\rz\n', expected: '\rab34\rc中\rxy\rz\n' },
      { cols: 20, text: '\rabc\rdé\rx\ryz', expected: '\rabc\rdé\ryz' },
      { cols: 20, text: '\rabc\rd\x1b[31mef\rg\rhi\n', expected: '\rabc\rd\x1b[31mef\rhi\n' },
      {
        cols: 20,
        text: '\rabc\rd\tx\rabc\rd\bx\rabc\rd\x07x',
        expected: '\rabc\rd\tx\rabc\rd\bx\rabc\rd\x07x',
      },
      { cols: 20, text: '\rabc\rd\n\rxyz\rw\r\n', expected: '\rabc\rd\n\rwyz\r\n' },
      { cols: 20, text: 'a\r\r\rb\r\r', expected: 'a\rb\r' },
    ];
    for (const { cols, text, expected } of cases) {
      expect(collapsed(text, cols, []), JSON.stringify(text)).toBe(expected);
      // Appended in pieces cut anywhere, the output is the same.
      for (let cut = 0; cut <= text.length; cut++) {
        expect(collapsed(text, cols, [cut]), `${JSON.stringify(text)} cut at ${cut}`).toBe(expected);
        expect(collapsed(text, cols, [cut, cut + 1, cut + 3]), `${JSON.stringify(text)} cut at ${cut}+`).toBe(
          expected,
        );
      }
    }
  });

  it('a collapsed window leaves the row, the cursor and a pending wrap as the redraws did', async () => {
    const cols = 8;
    // Rows that already hold text and wide characters (whose right halves a redraw may end on).
    const before = '\x1b[2J\x1b[H中文字中\r\nabcdefgh\r\n\x1b[H\x1b[7m';
    const texts = [
      '\rabc\rabcde\rx',
      '\rab\rabc\rx',
      '\rabcdefgh\rxy\rz',
      '\rabc\rxyzuvwst',
      '\rabc\rxyzuvwst\x1b[0mQ',
      '\ra\rbc\rd中',
      'xyz\ra\rbcd\re\u0301',
      '\rabcdefgh\rab\r\n\rabc\r\x1b[2b',
    ];
    for (const text of texts) {
      const output = collapsed(text, cols, []);
      expect(output.length, JSON.stringify(text)).toBeLessThan(text.length);
      const original = createReference(cols, 4);
      const replaced = createReference(cols, 4);
      try {
        await written(original.terminal, `${before}${text}${CPR}`);
        await written(replaced.terminal, `${before}${output}${CPR}`);
        expect(screenState(replaced.terminal), JSON.stringify(text)).toEqual(screenState(original.terminal));
        expect(replaced.replies, JSON.stringify(text)).toEqual(original.replies);
      } finally {
        original.terminal.dispose();
        replaced.terminal.dispose();
      }
    }
  });

  it('needs enough line feeds to reach the bottom row and then rewrite every row', () => {
    expect(lineFeedsToRefresh(24, 23)).toBe(25);
    expect(lineFeedsToRefresh(24, 0)).toBe(48);
  });
});

/**
 * What the collapser makes of `text` appended in pieces cut at `cuts`, with the window it still holds
 * back at the end; checks that each append reports the characters it output.
 */
function collapsed(text: string, cols: number, cuts: number[]): string {
  const collapser = new CarriageReturnCollapser();
  const out: string[] = [];
  let from = 0;
  let reported = 0;
  for (const cut of [...cuts.filter((at) => at <= text.length), text.length]) {
    const piece = text.slice(from, cut);
    from = cut;
    reported += collapser.collapse(piece, piece.length, cols, out);
  }
  expect(reported).toBe(out.join('').length);
  expect(collapser.pendingLength).toBe(collapser.pendingText().length);
  return out.join('') + collapser.pendingText();
}

// ---------------------------------------------------------------------------------------------------
// Differential property: the replier (batched, fast path) against xterm parsing every byte.

type Op = { kind: 'data'; data: string } | { kind: 'resize'; cols: number; rows: number };

const wide = ['中', '文', '字', '漢'];
const textPiece = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.string({ unit: fc.constantFrom(...'abcdefghij XYZ.-'), minLength: 1, maxLength: 14 }),
  },
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom(...wide), minLength: 1, maxLength: 5 }) },
  { weight: 1, arbitrary: fc.constantFrom('e\u0301', '\u0308', 'a\u0301\u0302', '😀', '\ufeff', '\ud83d') },
  { weight: 2, arbitrary: fc.constantFrom('\t', '\r', '\n', '\r\n', '\b', '\x07', '\x0b', '\x0c') },
  { weight: 1, arbitrary: fc.integer({ min: 2, max: 30 }).map((count) => '\b'.repeat(count)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('\x1b[0m', '\x1b[1;31m', '\x1b[m', '\x1b[38;5;12m', '\x1b[;4m', '\x1b[K'),
  },
  { weight: 1, arbitrary: fc.constantFrom('\x1b[1K', '\x1b[2K', '\x1b[0K', '\x1b[0;1m', '\x1b[7m') },
);
const plainLine = fc.array(textPiece, { maxLength: 6 }).map((pieces) => pieces.join(''));
/** Many lines of plain output: what the fast path shortens. */
const flood = fc
  .tuple(
    fc.array(plainLine, { minLength: 1, maxLength: 45 }),
    fc.constantFrom('\r\n', '\n', '\r\n', '\n\r'),
    fc.boolean(),
  )
  .map(([lines, end, terminated]) => lines.join(end) + (terminated ? end : ''));
const small = fc.integer({ min: 1, max: 14 });
const control = fc.oneof(
  fc.tuple(small, small).map(([row, col]) => `\x1b[${row};${col}H`),
  fc
    .tuple(small, fc.constantFrom('A', 'B', 'C', 'D', 'E', 'F', 'G', 'd', 'b'))
    .map(([n, f]) => `\x1b[${n}${f}`),
  fc.tuple(small, small).map(([top, bottom]) => `\x1b[${top};${bottom}r`),
  fc.constantFrom(
    '\x1b[r',
    '\x1b7',
    '\x1b8',
    '\x1bD',
    '\x1bM',
    '\x1bE',
    '\x1bH',
    '\x1b[3g',
    '\x1b[2J',
    '\x1b[J',
  ),
  fc.constantFrom(
    '\x1b[?7l',
    '\x1b[?7h',
    '\x1b[?6h',
    '\x1b[?6l',
    '\x1b[4h',
    '\x1b[4l',
    '\x1b[?45h',
    '\x1b[?45l',
  ),
  fc.constantFrom('\x1b[?1049h', '\x1b[?1049l', '\x1b[?47h', '\x1b[?47l', '\x1b[?1047h', '\x1b[?1047l'),
  fc.constantFrom(
    '\x1b[1"q',
    '\x1b[0"q',
    '\x1b[?2K',
    '\x1b[?J',
    '\x1b(0',
    '\x1b(B',
    '\x0e',
    '\x0f',
    '\x1b[2L',
  ),
  fc.constantFrom(
    '\x1b[2M',
    '\x1b[3@',
    '\x1b[2P',
    '\x1b[2X',
    '\x1b[S',
    '\x1b[T',
    '\x1bc',
    '\x1b[!p',
    '\x1b[H',
  ),
  // Openers: output that follows them is a sequence's payload, not text, until it ends.
  fc.constantFrom('\x1b]2;', '\x1bP$q', '\x1b[', '\x1b', '\x1b_', '\x1b[?', '\x1b[1;'),
);
const query = fc.constantFrom(
  CPR,
  DECXCPR,
  DA1,
  DA2,
  WINDOW_SIZE,
  '\x1b[5n',
  '\x1b[?7$p',
  '\x1b[?6$p',
  '\x1b[4$p',
  '\x1b[?45$p',
  '\x1b[?1049$p',
  '\x1bP$qr\x1b\\',
  '\x1bP$q"q\x1b\\',
  '\x07',
  '\x1b\\',
);
/**
 * A redraw for a `cols`-wide terminal: printable ASCII around `cols` wide (the collapse's bound), or a
 * piece that ends a window (wide or combining characters, controls, SGR, EL).
 */
const redrawSegment = (cols: number): fc.Arbitrary<string> =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .oneof(fc.constantFrom(cols - 1, cols, cols + 1), fc.integer({ min: 0, max: cols + 2 }))
        .chain((length) =>
          fc.string({ unit: fc.constantFrom(...'abcdefgh #.-'), minLength: length, maxLength: length }),
        ),
    },
    { weight: 1, arbitrary: textPiece },
  );
/** Lines redrawn with `\r` like a progress bar, after some text that starts at an unknown column. */
const redrawnLines = (cols: number): fc.Arbitrary<string> =>
  fc
    .array(
      fc
        .tuple(
          fc.string({ unit: fc.constantFrom(...'xyz中'), maxLength: 3 }),
          fc.array(redrawSegment(cols), { minLength: 1, maxLength: 12 }),
          fc.constantFrom('\r\n', '\n', '', '\r', '\r\r\n'),
        )
        .map(([before, segments, end]) => `${before}\r${segments.join('\r')}${end}`),
      { minLength: 1, maxLength: 20 },
    )
    .map((lines) => lines.join(''));
/**
 * Cursor-up frames for a `cols`-wide terminal (cursor-up-frame-collapse.ts): runs of frames with one
 * count, lines around `cols` wide, in each admitted form, now and then broken by another piece.
 */
const cursorUpStream = (cols: number): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 3 }) }, fc.integer({ min: 4, max: 10 })),
      fc.constantFrom('\r\x1b[2K', '\x1b[2K\r', '\r\x1b[K', '\x1b[2K'),
      fc.constantFrom('\r\n', '\n', '\r'),
      fc.array(
        fc.oneof(
          {
            weight: 8,
            arbitrary: fc.string({ unit: fc.constantFrom(...'abc #.-'), maxLength: cols - 1 }),
          },
          { weight: 2, arbitrary: redrawSegment(cols).filter((text) => !text.includes('\x1b[')) },
          { weight: 1, arbitrary: textPiece },
        ),
        { minLength: 1, maxLength: 120 },
      ),
      fc.array(fc.oneof({ weight: 6, arbitrary: fc.constant('') }, { weight: 1, arbitrary: textPiece }), {
        maxLength: 20,
      }),
    )
    .map(([count, prefix, end, texts, breaks]) => {
      const n = Math.max(1, count);
      const up = count === 0 ? '\x1b[A' : `\x1b[${count}A`;
      let out = '';
      for (let at = 0, index = 0; at < texts.length; at += n, index++) {
        out +=
          up +
          texts
            .slice(at, at + n)
            .map((text) => `${prefix}${text}${end}`)
            .join('');
        out += breaks[index % Math.max(1, breaks.length)] ?? '';
      }
      return out;
    });
const opFor = (cols: number): fc.Arbitrary<Op> =>
  fc.oneof(
    { weight: 6, arbitrary: cursorUpStream(cols).map((data) => ({ kind: 'data' as const, data })) },
    { weight: 6, arbitrary: flood.map((data) => ({ kind: 'data' as const, data })) },
    { weight: 5, arbitrary: redrawnLines(cols).map((data) => ({ kind: 'data' as const, data })) },
    { weight: 3, arbitrary: plainLine.map((data) => ({ kind: 'data' as const, data })) },
    { weight: 4, arbitrary: control.map((data) => ({ kind: 'data' as const, data })) },
    { weight: 4, arbitrary: query.map((data) => ({ kind: 'data' as const, data })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 2, max: 24 }), fc.integer({ min: 1, max: 9 }))
        .map(([cols, rows]) => ({ kind: 'resize' as const, cols, rows })),
    },
  );
const scenario = fc.integer({ min: 2, max: 24 }).chain((cols) =>
  fc.record({
    cols: fc.constant(cols),
    rows: fc.integer({ min: 1, max: 9 }),
    ops: fc.array(opFor(cols), { minLength: 1, maxLength: 30 }),
    cuts: fc.array(fc.oneof(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 200, max: 3000 })), {
      minLength: 1,
      maxLength: 20,
    }),
    pauses: fc.array(fc.boolean(), { minLength: 1, maxLength: 20 }),
  }),
);

/** Cell attributes as one comparable string (colors, modes, style flags). */
function cellAttributes(
  cell: NonNullable<ReturnType<NonNullable<ReturnType<Terminal['buffer']['active']['getLine']>>['getCell']>>,
): string {
  const flags = [
    cell.isBold(),
    cell.isItalic(),
    cell.isDim(),
    cell.isUnderline(),
    cell.isBlink(),
    cell.isInverse(),
    cell.isInvisible(),
    cell.isStrikethrough(),
    cell.isOverline(),
  ];
  const style = flags.map((on) => (on ? 1 : 0)).join('');
  return `${cell.getFgColorMode()}:${cell.getFgColor()}/${cell.getBgColorMode()}:${cell.getBgColor()}/${style}`;
}

/** Everything a reply could ever depend on that the public buffer API shows, plus cell attributes. */
function screenState(terminal: Terminal): unknown {
  const dump = (buffer: Terminal['buffer']['active']) => {
    const lines: string[] = [];
    for (let y = 0; y < buffer.length; y++) {
      const line = buffer.getLine(y);
      const attributes: string[] = [];
      for (let x = 0; line !== undefined && x < line.length; x++) {
        const cell = line.getCell(x);
        // The code tells an empty cell (a repaired wide-character half, 0) from a printed space.
        if (cell !== undefined)
          attributes.push(`${cell.getWidth()}:${cell.getCode()}${cellAttributes(cell)}`);
      }
      lines.push(`${line?.isWrapped ? 'W' : '-'}${line?.translateToString(false)} ${attributes.join(' ')}`);
    }
    return { x: buffer.cursorX, y: buffer.cursorY, lines };
  };
  return {
    type: terminal.buffer.active.type,
    normal: dump(terminal.buffer.normal),
    alternate: dump(terminal.buffer.alternate),
  };
}

/**
 * How the property feeds chunks: all through `feed`; line text through `feedLineText`; and through the
 * session's own pipeline (its classification picks the entries).
 */
const ROUTES = ['feed', 'lineText', 'session'] as const;

/** A scenario of the differential property: a terminal size, the output and resizes, how it is cut. */
interface Scenario {
  cols: number;
  rows: number;
  ops: Op[];
  /** Chunk sizes, used in turn. */
  cuts: number[];
  /** Per chunk, in turn: whether the replier catches up (`whenIdle`) before the next. */
  pauses: boolean[];
}

/**
 * Feeds `scenario` to a replier (chunks routed by `route`) and to an xterm fed every byte, and checks
 * that they agree: at every pause, the replies so far (output held back must not hide a query whose
 * answer a program may be waiting for), and at the end the replies and the screen state. Returns the
 * replier's counters.
 */
async function expectAgreementWithReference(
  { cols, rows, ops, cuts, pauses }: Scenario,
  route: (typeof ROUTES)[number],
): Promise<TerminalReplierStats> {
  // xterm 6 itself depends on how its input is split when autowrap is off and a wide character is
  // dropped at the margin (the character after it overwrites half of a wide cell, or a new parse call
  // blanks that cell first). Two xterms fed the same bytes in different chunks differ there, so such
  // streams keep autowrap on.
  const hasWide = ops.some((item) => item.kind === 'data' && wide.some((c) => item.data.includes(c)));
  const stream: Op[] = ops.map((item) =>
    hasWide && item.kind === 'data' ? { ...item, data: item.data.replaceAll('\x1b[?7l', '\x1b[?7h') } : item,
  );
  // Close with a final cursor report so a divergent end state shows in the replies too.
  stream.push({ kind: 'data', data: CPR });
  const session = route === 'session' ? sessionPipeline(cols, rows, false) : undefined;
  const replies: string[] = session?.replies ?? [];
  const subject =
    session?.replier ?? new TerminalReplier({ cols, rows, reply: (data) => replies.push(data) });
  const reference = createReference(cols, rows);
  const lineFeeds = new LineFeeds();
  try {
    let cutIndex = 0;
    let pending: string[] = [];
    const flushReference = async (): Promise<void> => {
      for (const chunk of pending) reference.terminal.write(chunk);
      pending = [];
      await written(reference.terminal, '');
    };
    for (const item of stream) {
      if (item.kind === 'resize') {
        if (session === undefined) subject.resize(item.cols, item.rows);
        else session.pipeline.resize({ cols: item.cols, rows: item.rows }, () => undefined);
        await flushReference();
        reference.terminal.resize(item.cols, item.rows);
        continue;
      }
      for (let at = 0; at < item.data.length; ) {
        const size = cuts[cutIndex % cuts.length]!;
        const pause = pauses[cutIndex % pauses.length]!;
        cutIndex += 1;
        const chunk = item.data.slice(at, at + size);
        at += size;
        // Through the session's own pipeline, or by hand: line text through the fast entry, the rest
        // through feed.
        if (session !== undefined) feedAsSession(session.pipeline, chunk);
        else {
          const kind = route === 'feed' ? LineTextKind.None : lineTextKind(chunk, lineFeeds);
          if (kind === LineTextKind.None) subject.feed(chunk);
          else subject.feedLineText(chunk);
        }
        pending.push(chunk);
        if (pause) {
          await subject.whenIdle();
          await flushReference();
          expect(replies, 'replies once the replier is idle').toEqual(reference.replies);
        }
      }
    }
    await subject.whenIdle();
    await flushReference();
    expect(replies).toEqual(reference.replies);
    expect(screenState(Reflect.get(subject, 'terminal') as Terminal)).toEqual(
      screenState(reference.terminal),
    );
    return subject.stats;
  } finally {
    session?.pipeline.dispose();
    subject.dispose();
    reference.terminal.dispose();
  }
}

describe('TerminalReplier differential property', () => {
  it('replies (and screen state) equal those of an xterm terminal fed every byte', async () => {
    let fed = 0;
    let parsed = 0;
    let shortened = 0;
    let collapsed = 0;
    let frames = 0;
    await fc.assert(
      fc.asyncProperty(scenario, fc.constantFrom(...ROUTES), async (drawn, route) => {
        const stats = await expectAgreementWithReference(drawn, route);
        fed += stats.charsFed;
        parsed += stats.charsParsed;
        shortened += stats.shortenedRuns;
        collapsed += stats.collapsedSegments;
        frames += stats.collapsedFrames;
      }),
      // REPLIER_RUNS=5000 explores further when the fast path changes; 250 keeps the suite quick.
      { numRuns: Number(process.env.REPLIER_RUNS ?? 250) },
    );
    // The property must have exercised the fast path, not only the full parse.
    expect(shortened).toBeGreaterThan(100);
    expect(collapsed).toBeGreaterThan(1000);
    expect(frames).toBeGreaterThan(20);
    expect(parsed).toBeLessThan(fed * 0.9);
  });

  // Counterexamples the property found, each kept as it was shrunk.
  it('seed -1084435989 (issue 20): a query where a cut-off frame would go on is answered', async () => {
    const found: Scenario = {
      cols: 21,
      rows: 5,
      ops: [
        { kind: 'data', data: '\x1b[6n' },
        { kind: 'data', data: '\t' },
        { kind: 'data', data: '\x1b[4A\r\x1b[2K\r\n' }, // the closing CPR follows where line 2 would start
      ],
      cuts: [1],
      pauses: [false],
    };
    for (const route of ROUTES) await expectAgreementWithReference(found, route);
  });
});

describe('TerminalReplier bounds', () => {
  /** A string sequence: introducer, body, terminator; `counted` is what the bound measures. */
  interface StringSequence {
    text: string;
    counted: number;
  }
  const BOUND = 16;
  const introducers = [
    { text: '\x1b]', terminators: ['\x07', '\x1b\\', '\x9c', '\x18'] },
    { text: '\x9d', terminators: ['\x07', '\x1b\\', '\x9c'] },
    { text: '\x1bP$q', terminators: ['\x1b\\', '\x9c', '\x18'] },
    { text: '\x1bP1|', terminators: ['\x1b\\', '\x9c'] },
    { text: '\x1b_', terminators: ['\x1b\\', '\x9c'] },
    { text: '\x1bX', terminators: ['\x1b\\', '\x9c'] },
    { text: '\x9f', terminators: ['\x1b\\', '\x9c'] },
  ];
  const bodyChar = fc.constantFrom('a', 'Z', '0', ';', ' ', '\x01', '\x7f', 'r', 'q', '"');
  const stringSequence: fc.Arbitrary<StringSequence> = fc
    .tuple(fc.constantFrom(...introducers), fc.array(bodyChar, { maxLength: 3 * BOUND }), fc.nat())
    .map(([introducer, anyBody, pick]) => {
      // xterm 6 itself answers a DECRQSS whose body holds a DEL differently depending on how the input
      // is split (fed whole, `ESC P $ q r DEL ESC \` reports an invalid request; with the DEL in a write
      // of its own, the margins), so the subject, fed in pieces, could not agree with a reference fed
      // whole. DCS bodies leave DEL out; the other strings keep it.
      const body = introducer.text.startsWith('\x1bP') ? anyBody.filter((c) => c !== '\x7f') : anyBody;
      const terminator = introducer.terminators[pick % introducer.terminators.length]!;
      // What follows the ESC or C1 introducer counts (for `ESC P $ q`: `$q` and the body).
      const counted = introducer.text.length - (introducer.text.startsWith('\x1b') ? 2 : 1) + body.length;
      return { text: `${introducer.text}${body.join('')}${terminator}`, counted };
    });
  const piece = fc.oneof(
    stringSequence,
    fc.constantFrom('abc', '\r\n', 'x\x1b[2Ay', CPR, DA1, '\x1b[?6$p', '\x1b', '\x1b[1m').map((text) => ({
      text,
      counted: -1,
    })),
  );

  /**
   * Feeds `pieces` cut at `cuts` (sizes, in turn) to a replier bounding string sequences at BOUND, and
   * checks its replies and screen against an xterm fed the stream without the overlong sequences.
   */
  async function expectBoundedAsIfAbsent(pieces: StringSequence[], cuts: number[]): Promise<void> {
    const stream = pieces.map((p) => p.text).join('') + CPR;
    const kept =
      pieces
        .filter((p) => p.counted <= BOUND)
        .map((p) => p.text)
        .join('') + CPR;
    const replies: string[] = [];
    const subject = new TerminalReplier({
      cols: 20,
      rows: 5,
      reply: (d) => replies.push(d),
      maxStringSequenceChars: BOUND,
    });
    const reference = createReference(20, 5);
    try {
      let at = 0;
      for (let i = 0; at < stream.length; i++) {
        const size = cuts[i % cuts.length]!;
        subject.feed(stream.slice(at, at + size));
        at += size;
      }
      await subject.whenIdle();
      await written(reference.terminal, kept);
      expect(replies).toEqual(reference.replies);
      expect(screenState(Reflect.get(subject, 'terminal') as Terminal)).toEqual(
        screenState(reference.terminal),
      );
    } finally {
      subject.dispose();
      reference.terminal.dispose();
    }
  }

  it('cancels string sequences past the bound exactly as if they were absent', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { minLength: 1, maxLength: 20 }),
        fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 10 }),
        async (pieces, cuts) => {
          // The reference never sees an overlong sequence; a lone ESC before one would join it, so a
          // stream where an ESC piece precedes a sequence is left to the ESC-free cases.
          // biome-ignore lint/suspicious/noControlCharactersInRegex: the grammar is made of control codes
          if (/\x1b(?=\x1b[\]P_X]|[\x90\x98\x9d\x9e\x9f])/.test(pieces.map((p) => p.text).join(''))) return;
          await expectBoundedAsIfAbsent(pieces, cuts);
        },
      ),
      { numRuns: 300 },
    );
  });

  // Counterexamples the property found, each kept as it was shrunk.
  it('seed -439669573 (commit 1f44a7b): a DECRQSS whose body holds a DEL', async () => {
    // xterm 6 drops a DEL that starts a parse call inside a DCS body and keeps one inside a run of body
    // characters, so the request below is valid or not by how it was split: fed in these pieces, the
    // replier (which parsed each small chunk at once) answered with the margins, the reference fed
    // whole reported an invalid request. The generator leaves DEL out of DCS bodies for this reason;
    // if xterm stops depending on the split, this shows it and DEL can return to the bodies.
    const request = '\x1bP$qr\x7f\x1b\\';
    const pieces = ['\x07\x1b', 'P$qr', '\x7f', '\x1b\\'];
    const whole = createReference(20, 5);
    const split = createReference(20, 5);
    try {
      await written(whole.terminal, `\x07${request}`);
      for (const part of pieces) await written(split.terminal, part);
      expect(whole.replies).toEqual(['\x1bP0$r\x1b\\']);
      expect(split.replies).toEqual(['\x1bP1$r1;5r\x1b\\']);
    } finally {
      whole.terminal.dispose();
      split.terminal.dispose();
    }
    // As the generator draws it now, with DEL left out of the body, the bound agrees with the reference.
    const found = [
      { text: '\x07', counted: 0 },
      { text: '\x1bP$qr\x1b\\', counted: 3 },
      { text: '\x1b]\x07', counted: 0 },
    ];
    await expectBoundedAsIfAbsent(found, [2, 4, 1, 4, 4, 1]);
    await expectBoundedAsIfAbsent(found, [3, 1]);
  });

  it('keeps no overlong payload: 20 MB of one OSC reach xterm as a bounded prefix', async () => {
    const { replier: r, replies } = replier();
    r.feed('\x1b]0;');
    const chunk = 'a'.repeat(1 << 20);
    for (let i = 0; i < 20; i++) r.feedLineText(chunk);
    r.feed(`\x07${CPR}`);
    await r.whenIdle();
    expect(r.stats.charsParsed).toBeLessThan(64 * 1024);
    expect(r.stats.discardedSequences).toBe(1);
    expect(replies).toEqual(['\x1b[1;1R']);
  });

  it('answers queries within its budget; past it, queries are neutralized without changing the screen', async () => {
    const { replier: r, replies } = replier(20, 5);
    const reference = referenceTerminal(20, 5);
    const burst = `${'\x1b[6n'.repeat(600)}ab`;
    r.feed(burst); // the budget is checked per chunk fed: this one is answered in full
    await r.whenIdle();
    expect(replies).toHaveLength(600);
    const spam = `${'\x1b[6n\x1b[c\x1b[?6$p'.repeat(500)}\r\ncd\x1b]0;t\x1b[6n`;
    r.feed(spam);
    await r.whenIdle();
    expect(replies).toHaveLength(600);
    await written(reference.terminal, burst + spam);
    expect(screenState(Reflect.get(r, 'terminal') as Terminal)).toEqual(screenState(reference.terminal));
    await new Promise((resolve) => setTimeout(resolve, 200)); // the budget refills
    r.feed(CPR);
    await r.whenIdle();
    expect(replies.at(-1)).toBe('\x1b[2;3R');
  });
});
