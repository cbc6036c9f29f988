/**
 * The install step's patch applier (scripts/unified-diff.mjs) is strict: the shipped patch applies to
 * the published node-pty 1.1.0 source exactly, and any source that differs from the one it was
 * reviewed against is refused with the hunk and line that differ, never patched "nearly right".
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain-JavaScript install script without type declarations
import { applyUnifiedDiff, PatchError } from '../../../scripts/unified-diff.mjs';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const PATCH = readFileSync(path.join(ROOT, 'native/node-pty-1.1.0-pty.cc.patch'), 'utf8');
const NODE_PTY_DIR = path.dirname(createRequire(import.meta.url).resolve('node-pty/package.json'));
/** node-pty's source as npm installed it: this repository never changes it (no patch-package). */
const SOURCE = readFileSync(path.join(NODE_PTY_DIR, 'src/unix/pty.cc'), 'utf8');

const SMALL_SOURCE = 'one\ntwo\nthree\nfour\nfive\n';
const SMALL_PATCH = `--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n two\n-three\n+THREE\n four\n`;

describe('the shipped patch', () => {
  it('applies to node-pty 1.1.0 as published, and is what the install step compiled', () => {
    const patched: string = applyUnifiedDiff(SOURCE, PATCH);
    expect(patched).not.toBe(SOURCE);
    expect(patched).toContain('posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)');
    expect(patched).toContain('exports.Set("localFlags"');
    expect(patched).not.toMatch(/forkpty\(&master/);
    expect(readFileSync(path.join(ROOT, 'native/build/patched-src/pty.cc'), 'utf8')).toBe(patched);
  });

  it('is refused by a source it was already applied to', () => {
    const patched: string = applyUnifiedDiff(SOURCE, PATCH);
    expect(() => applyUnifiedDiff(patched, PATCH)).toThrow(
      /^hunk @@ -33,6 \+33,14 @@ does not apply: line 36 is/,
    );
  });
});

describe('strictness', () => {
  it('applies a hunk exactly where its header says', () => {
    expect(applyUnifiedDiff(SMALL_SOURCE, SMALL_PATCH)).toBe('one\ntwo\nTHREE\nfour\nfive\n');
  });

  it('refuses a changed context line, naming the hunk, the line and both texts', () => {
    expect(() => applyUnifiedDiff(SMALL_SOURCE.replace('four', 'f0ur'), SMALL_PATCH)).toThrow(
      new PatchError('hunk @@ -2,3 +2,3 @@ does not apply: line 4 is "f0ur", the patch expects "four"'),
    );
  });

  it('does not search for a hunk that moved (no offset, no fuzz)', () => {
    expect(() => applyUnifiedDiff(`zero\n${SMALL_SOURCE}`, SMALL_PATCH)).toThrow(
      /line 2 is "one", the patch expects "two"/,
    );
  });

  it('refuses a hunk whose counts disagree with its body, and a patch of two files', () => {
    expect(() => applyUnifiedDiff(SMALL_SOURCE, SMALL_PATCH.replace('-2,3', '-2,4'))).toThrow(PatchError);
    const twoFiles = `${SMALL_PATCH}--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+y\n`;
    expect(() => applyUnifiedDiff(SMALL_SOURCE, twoFiles)).toThrow('the patch touches more than one file');
  });
});
