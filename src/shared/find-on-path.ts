/** Where a program is installed: the first executable of a name on PATH (a dialect's shell, a demo's tools). */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { TerminalError } from './errors.js';

/** First executable `name` on PATH. */
export function findOnPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The absolute path of `name` on PATH; throws SPAWN_FAILED naming the dialect and what to do. */
export function requireOnPath(name: string, dialect: string, install: string): string {
  const found = findOnPath(name);
  if (found === undefined) {
    throw new TerminalError(
      'SPAWN_FAILED',
      `dialect '${dialect}' needs ${install} ('${name}') on PATH, or an explicit shellPath`,
    );
  }
  return found;
}
