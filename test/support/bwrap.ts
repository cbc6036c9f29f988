/**
 * Whether bubblewrap is available for the sandbox tests. Without it those tests skip with a visible
 * notice; CI installs bubblewrap, so there they always run.
 */
import { it } from 'vitest';
import { findOnPath } from '../../dist/shared/find-on-path.js';

/** True when `bwrap` is on PATH (and this is Linux). */
export const HAS_BWRAP = process.platform === 'linux' && findOnPath('bwrap') !== undefined;

/** `it` for tests that need a real bwrap; prints the notice once per test file when it is missing. */
export function bwrapIt(suite: string): typeof it {
  if (!HAS_BWRAP) console.warn(`bubblewrap (bwrap) is not installed: SKIPPING the ${suite} tests`);
  return it.skipIf(!HAS_BWRAP) as typeof it;
}
