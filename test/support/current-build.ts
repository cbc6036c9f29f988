/**
 * Global setup of the system project: its tests drive the compiled package in `dist/`, so a run after
 * an edit of `src/` without a build would silently test the old code. It refuses to start when any
 * module of `src/` has no compiled file in `dist/` or one older than its source.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every `.ts` file under `dir`, as paths relative to `base`. */
function typescriptFiles(dir: string, base: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return typescriptFiles(full, base);
    return entry.name.endsWith('.ts') ? [path.relative(base, full)] : [];
  });
}

/** The modules of src/ whose compiled file in dist/ is missing or older than the source. */
export function staleModules(root: string = ROOT): string[] {
  const src = path.join(root, 'src');
  return typescriptFiles(src, src).filter((module) => {
    const compiled = path.join(root, 'dist', module.replace(/\.ts$/, '.js'));
    let builtAt: number;
    try {
      builtAt = statSync(compiled).mtimeMs;
    } catch {
      return true;
    }
    return builtAt < statSync(path.join(src, module)).mtimeMs;
  });
}

export default function refuseStaleBuild(): void {
  const stale = staleModules();
  if (stale.length === 0) return;
  const shown = stale.slice(0, 5).map((module) => `src/${module}`);
  const more = stale.length > shown.length ? ` and ${stale.length - shown.length} more` : '';
  throw new Error(
    `dist/ is older than src/ (${shown.join(', ')}${more}): the system tests run the compiled package, ` +
      'so run `npm run build` first (`npm test` builds before it tests).',
  );
}
