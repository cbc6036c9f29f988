// The batcher behind MCP progress notifications: whole lines, at most one batch per interval, bounded
// batches whatever the output rate, and nothing after dispose. Fake timers stand in for the interval.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  LIVE_LINES_INTERVAL_MS,
  LIVE_LINES_MAX_BYTES,
  type LiveLinesBatch,
  LiveLinesBatcher,
} from '../../../../src/main/tools/live-lines.js';

let batches: LiveLinesBatch[];
let batcher: LiveLinesBatcher;

beforeEach(() => {
  vi.useFakeTimers();
  batches = [];
  batcher = new LiveLinesBatcher((batch) => batches.push(batch));
});

afterEach(() => {
  batcher.dispose();
  vi.useRealTimers();
});

const push = (text: string, dropped = 0) => batcher.push({ text, dropped });

describe('LiveLinesBatcher', () => {
  it('emits complete lines at most once per interval; a partial line waits for its newline', () => {
    push('one\ntw');
    vi.advanceTimersByTime(LIVE_LINES_INTERVAL_MS - 1);
    expect(batches).toEqual([]);
    push('o\nthree');
    vi.advanceTimersByTime(1);
    expect(batches).toEqual([{ text: 'one\ntwo', linesSoFar: 2 }]);
    // Output keeps coming: the next batch is due one interval after the first chunk that follows.
    push(' and more\nfour\n');
    vi.advanceTimersByTime(LIVE_LINES_INTERVAL_MS - 1);
    expect(batches).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(batches[1]).toEqual({ text: 'three and more\nfour', linesSoFar: 4 });
    // A partial line alone makes no batch.
    push('prompt> ');
    vi.advanceTimersByTime(10 * LIVE_LINES_INTERVAL_MS);
    expect(batches).toHaveLength(2);
  });

  it('keeps only the final state of a rewritten line (progress bars)', () => {
    push('10%\r20%\r');
    push('\r100%\ndone\n');
    vi.advanceTimersByTime(LIVE_LINES_INTERVAL_MS);
    expect(batches).toEqual([{ text: '100%\ndone', linesSoFar: 2 }]);
  });

  it('bounds a flood to the newest lines, says how many were skipped, and counts them in linesSoFar', () => {
    const lines = Array.from({ length: 50_000 }, (_, index) => `line ${index}`);
    for (let at = 0; at < lines.length; at += 1000) push(`${lines.slice(at, at + 1000).join('\n')}\n`);
    vi.advanceTimersByTime(LIVE_LINES_INTERVAL_MS);
    expect(batches).toHaveLength(1);
    const [batch] = batches;
    expect(Buffer.byteLength(batch!.text)).toBeLessThanOrEqual(LIVE_LINES_MAX_BYTES + 100);
    const shown = batch!.text.split('\n');
    expect(shown.at(-1)).toBe('line 49999');
    const skipped = Number(
      /^\[… (\d+) lines skipped; terminal_read pages the scrollback\]$/.exec(shown[0]!)?.[1],
    );
    expect(skipped + shown.length - 1).toBe(50_000);
    expect(shown[1]).toBe(`line ${skipped}`);
    expect(batch!.linesSoFar).toBe(50_000);
  });

  it('reports live output the engine dropped', () => {
    push('after the gap\n', 1234);
    vi.advanceTimersByTime(LIVE_LINES_INTERVAL_MS);
    expect(batches).toEqual([
      { text: '[… 1234 characters of live output dropped]\nafter the gap', linesSoFar: 1 },
    ]);
  });

  it('emits nothing after dispose, and a throwing consumer does not stop it', () => {
    const throwing = new LiveLinesBatcher(() => {
      throw new Error('consumer gone');
    });
    throwing.push({ text: 'a\n', dropped: 0 });
    vi.advanceTimersByTime(LIVE_LINES_INTERVAL_MS);
    throwing.dispose();
    push('pending\n');
    batcher.dispose();
    vi.advanceTimersByTime(LIVE_LINES_INTERVAL_MS);
    push('late\n');
    vi.advanceTimersByTime(LIVE_LINES_INTERVAL_MS);
    expect(batches).toEqual([]);
  });
});
