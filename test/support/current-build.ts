/**
 * Global setup of the system project: its tests drive the compiled package in `dist/`, so a run after
 * an edit of `src/` without a build would silently test the old code. It refuses to start when any
 * module of `src/` has no compiled file in `dist/` or one older than its source, and when `dist/` holds
 * a compiled module whose source is gone (moved or deleted: a test or fixture still naming the old
 * path would pass against the leftover; `tsc` never removes it).
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every file under `dir` whose name ends with `suffix`, as paths relative to `base`. */
function filesEndingWith(suffix: string, dir: string, base: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return filesEndingWith(suffix, full, base);
    return entry.name.endsWith(suffix) ? [path.relative(base, full)] : [];
  });
}

/** The modules of src/ whose compiled file in dist/ is missing or older than the source. */
export function staleModules(root: string = ROOT): string[] {
  const src = path.join(root, 'src');
  return filesEndingWith('.ts', src, src).filter((module) => {
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

/** The compiled modules in dist/ whose source in src/ no longer exists. */
export function orphanedModules(root: string = ROOT): string[] {
  const dist = path.join(root, 'dist');
  let compiled: string[];
  try {
    compiled = filesEndingWith('.js', dist, dist);
  } catch {
    return []; // no dist/ at all: staleModules reports every module
  }
  return compiled.filter((module) => {
    try {
      statSync(path.join(root, 'src', module.replace(/\.js$/, '.ts')));
      return false;
    } catch {
      return true;
    }
  });
}

/** The first few of `modules` under `folder`, for a message. */
function listed(folder: string, modules: string[]): string {
  const shown = modules.slice(0, 5).map((module) => `${folder}/${module}`);
  const more = modules.length > shown.length ? ` and ${modules.length - shown.length} more` : '';
  return `${shown.join(', ')}${more}`;
}

export default function refuseStaleBuild(): void {
  const stale = staleModules();
  if (stale.length > 0) {
    throw new Error(
      `dist/ is older than src/ (${listed('src', stale)}): the system tests run the compiled package, ` +
        'so run `npm run build` first (`npm test` builds before it tests).',
    );
  }
  const orphaned = orphanedModules();
  if (orphaned.length > 0) {
    throw new Error(
      `dist/ holds modules whose source is gone (${listed('dist', orphaned)}): a test naming an old path ` +
        'would pass against them, so rebuild from scratch (`rm -rf dist && npm run build`).',
    );
  }
}
