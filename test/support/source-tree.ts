/**
 * The repository's TypeScript source as text, for the tests that check rules on it (the architecture's
 * folders, owned timers, owned listeners).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of `src/`. */
export const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** Every `.ts` file under `dir`, recursively, as absolute paths. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** `text` without its comments (a doc comment may name `setTimeout(0)` or `.on(`); `://` in a URL is kept. */
export function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** The code of `file`, its comments removed. */
export function codeOf(file: string): string {
  return withoutComments(readFileSync(file, 'utf8'));
}
