import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeOf, SRC, sourceFiles, withoutComments } from '../support/source-tree.js';

/** Where timers are armed for their owners: the one place a bare timer belongs. */
const LIFECYCLE = 'shared/lifecycle.ts';

/**
 * Files (relative to src/) that may still arm a bare timer, each with its reason: none since the output
 * pipeline's turn became an owned `ImmediateTurn` (issue 24). A new entry needs a reason no store serves.
 */
const NOT_YET_OWNED: Record<string, string> = {};

/** A bare timer call, or an import of node's timer functions (`setTimeout as delay` and the like). */
const BARE_TIMER =
  /\b(?:setTimeout|setInterval|setImmediate)\s*\(|from\s+['"](?:node:)?timers(?:\/promises)?['"]/;

/** The files of src/main and src/worker whose code arms a bare timer, relative to src/. */
function filesWithBareTimers(): string[] {
  return ['main', 'worker']
    .flatMap((folder) => sourceFiles(join(SRC, folder)))
    .filter((file) => BARE_TIMER.test(codeOf(file)))
    .map((file) => relative(SRC, file))
    .sort();
}

describe('owned timers', () => {
  it('no file of src/main or src/worker arms a bare timer unless it is listed with its reason', () => {
    const unlisted = filesWithBareTimers().filter((file) => !(file in NOT_YET_OWNED));
    expect(
      unlisted,
      'arm timers through a DisposableStore (src/shared/lifecycle.ts) of the object that owns them',
    ).toEqual([]);
  });

  it('lists only files that still arm a bare timer', () => {
    const bare = new Set(filesWithBareTimers());
    const stale = Object.keys(NOT_YET_OWNED).filter((file) => !bare.has(file));
    expect(stale, 'these no longer arm a bare timer: delete their entries').toEqual([]);
  });

  it('recognises a bare timer, and not one in a comment or a store call', () => {
    expect(BARE_TIMER.test('const t = setTimeout(run, 5);')).toBe(true);
    expect(BARE_TIMER.test('setImmediate (run)')).toBe(true);
    expect(BARE_TIMER.test("import { setTimeout as delay } from 'node:timers/promises';")).toBe(true);
    expect(BARE_TIMER.test("this.owned.timeout('label', 5, run); clearTimeout(t);")).toBe(false);
    expect(
      BARE_TIMER.test(withoutComments('/** parses on a later `setTimeout(0)` */\n// setImmediate(x)')),
    ).toBe(false);
    const file = join(SRC, LIFECYCLE);
    expect(BARE_TIMER.test(codeOf(file))).toBe(true); // the store itself is where timers are armed
  });
});
