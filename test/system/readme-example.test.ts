/**
 * The README's engine example is a program that runs as written (SPEC §11): the `js` block under
 * "## Engine API" is taken from README.md unchanged and run by node as a module, importing
 * `agent-pty` by its package name (from inside the package under test, Node resolves a package's own
 * name through its `exports`). scripts/package-smoke.mjs runs the same block in a project that
 * installed the packed tarball.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { PACKAGE_DIR } from '../support/package-under-test.js';

const README = fileURLToPath(new URL('../../README.md', import.meta.url));

/** The first ```js block after the "## Engine API" heading. */
function engineExample(markdown: string): string {
  const section = markdown.slice(markdown.indexOf('\n## Engine API\n'));
  const match = /\n```js\n([\s\S]*?)\n```\n/.exec(section);
  if (match?.[1] === undefined) throw new Error('README.md has no ```js block under "## Engine API"');
  return match[1];
}

it("runs the README's engine example as written, to its end", () => {
  const code = engineExample(readFileSync(README, 'utf8'));
  expect(code).toContain("from 'agent-pty'");
  const run = spawnSync(process.execPath, ['--input-type=module'], {
    cwd: PACKAGE_DIR,
    input: code,
    encoding: 'utf8',
    timeout: 25_000,
  });
  expect({ status: run.status, signal: run.signal, stderr: run.stderr }).toEqual({
    status: 0,
    signal: null,
    stderr: '',
  });
  // Lines the programs computed (the typed commands hold `$((6 * 7))` and `$((8000 + 80))`, not these).
  // The cancelled `sleep 30` settles on its prompt, the waitFor send on its pattern.
  expect(run.stdout.split('\n')).toEqual(expect.arrayContaining(['6 x 7 = 42', 'stdin_read', 'pattern']));
});
