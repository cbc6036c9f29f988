/**
 * Which copy of agent-pty the behaviour tests drive: this repository's build (`dist/`), or an installed
 * package whose directory `AGENT_PTY_UNDER_TEST` names (scripts/package-smoke.mjs runs the descriptor
 * and exit-callback tests against the copy it installed from the packed tarball, SPEC §11).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The package directory under test (its package.json, dist/ and native/ are inside). */
export const PACKAGE_DIR =
  process.env.AGENT_PTY_UNDER_TEST || fileURLToPath(new URL('../..', import.meta.url));

/** A file URL of `relative` inside the package under test, e.g. `dist/main/index.js`, for `import()`. */
export function packageFileUrl(relative: string): string {
  return pathToFileURL(path.join(PACKAGE_DIR, relative)).href;
}

if (process.env.AGENT_PTY_UNDER_TEST) {
  // A wrong path must fail loudly, never fall back to the build here and pass for the wrong copy.
  const manifest = path.join(PACKAGE_DIR, 'package.json');
  const { name } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string };
  if (name !== 'agent-pty')
    throw new Error(`AGENT_PTY_UNDER_TEST=${PACKAGE_DIR} is not an agent-pty package`);
}
