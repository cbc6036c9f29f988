/**
 * Headless Chromium for the watch page's browser tests (SPEC §13): Debian's `chromium`, driven by
 * puppeteer-core. Without it those tests skip with a visible notice; CI installs it (.ci/run).
 */
import { existsSync } from 'node:fs';
import { it } from 'vitest';

/** Where the distribution's package installs the browser. */
export const CHROMIUM_PATH = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) =>
  existsSync(path),
);

/** `it` for tests that need a real browser; prints the notice once per test file when it is missing. */
export function chromiumIt(suite: string): typeof it {
  if (CHROMIUM_PATH === undefined) console.warn(`chromium is not installed: SKIPPING the ${suite} tests`);
  return it.skipIf(CHROMIUM_PATH === undefined) as typeof it;
}

/** Chromium's flags here: no sandbox of its own when run as root (CI and this container run as root). */
export function chromiumArgs(): string[] {
  return process.getuid?.() === 0 ? ['--no-sandbox'] : [];
}
