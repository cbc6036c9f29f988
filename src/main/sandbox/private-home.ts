/**
 * What a confined session's private `$HOME` shows (SPEC §4.1): an empty tmpfs into which only the
 * `homeAllowlist` and the toolchains are bound from the host, read-only, and in which the built-in
 * denylist of credential stores always wins.
 *
 * The denylist is applied by path, relative to `$HOME` and relative to each bound root (a `.npmrc`
 * is a store in `~` and in `~/.nvm` alike). A root that could hold a store is never bound whole:
 * its children that exist at spawn are bound one by one (recursively, down to the stores, which are
 * left out), so a credential file the host creates there later has no mount in the session and stays
 * invisible. A root that cannot hold one is bound whole. Paths bound whole elsewhere (the workspace,
 * `extraReadOnlyPaths`) cannot be split — a writable workspace must stay one mount — so the stores
 * that exist inside them at spawn are covered instead ({@link storesInside}).
 */
import type { Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { CREDENTIAL_STORES, storeContaining, storesBelow } from '../../shared/credential-stores.js';
import { isInside, isStrictlyInside } from '../../shared/workspace-scope.js';
import type { ToolchainPath } from './toolchains.js';

/** One host path bound read-only into the private home. */
export interface HomeBind {
  /** The host's real path. */
  source: string;
  /** Where the session sees it: a path below `$HOME`. */
  target: string;
}

/** An existing path, resolved, and whether it is a directory. */
export interface ExistingPath {
  path: string;
  isDirectory: boolean;
}

/**
 * The binds of the private home for `entries` (allowlist paths and toolchains, absolute paths below
 * `home`): missing entries are skipped, stores are never bound, roots that could hold a store are
 * split into their children. A symbolic link is bound as its real target, at the link's path.
 */
export async function privateHomeBinds(home: string, entries: readonly ToolchainPath[]): Promise<HomeBind[]> {
  const binds = new Map<string, HomeBind>();
  const visited = new Set<string>();
  const bindRoot = async (entry: ToolchainPath): Promise<void> => {
    if (visited.has(entry.path)) return;
    visited.add(entry.path);
    await bindTree(home, entry.path, entry.path, entry.path, binds);
    if (entry.linkTargets !== true) return;
    for (const link of await entriesOf(entry.path)) {
      if (!link.isSymbolicLink()) continue;
      const target = await realOrUndefined(path.join(entry.path, link.name));
      if (target === undefined || !isStrictlyInside(home, target)) continue; // outside $HOME: visible anyway
      await bindRoot({ path: (await virtualEnvironmentOf(target)) ?? target });
    }
  };
  for (const entry of entries) await bindRoot(entry);
  return [...binds.values()];
}

/**
 * Binds `target` (whose host path is `source`), part of the bound root `root`: whole, split into its
 * children, or not at all when it is a store of `$HOME` or of `root`, or resolves into one.
 */
async function bindTree(
  home: string,
  root: string,
  target: string,
  source: string,
  binds: Map<string, HomeBind>,
): Promise<void> {
  const fromHome = path.relative(home, target);
  const fromRoot = path.relative(root, target);
  if (storeContaining(fromHome) !== undefined) return;
  if (fromRoot !== '' && storeContaining(fromRoot) !== undefined) return;
  const real = await realOrUndefined(source);
  if (real === undefined) return;
  if (isStrictlyInside(home, real) && storeContaining(path.relative(home, real)) !== undefined) return;
  let isDirectory: boolean;
  try {
    const stats = await stat(real);
    // Sockets, FIFOs and devices are no part of a toolchain; a socket would be a way out.
    if (!stats.isDirectory() && !stats.isFile()) return;
    isDirectory = stats.isDirectory();
  } catch (_vanished) {
    return;
  }
  const couldHoldStore = storesBelow(fromHome).length > 0 || storesBelow(fromRoot).length > 0;
  if (isDirectory && couldHoldStore) {
    for (const child of await entriesOf(real)) {
      await bindTree(home, root, path.join(target, child.name), path.join(real, child.name), binds);
    }
    return;
  }
  binds.set(target, { source: real, target });
}

/**
 * The stores that exist at spawn inside `root`, a path bound whole (the workspace, an extra
 * read-only path): those of `root` itself, and those of `home` that lie inside `root` (all of them
 * when `root` contains `home`; `~/.config/gh` for `~/.config`). Real paths, deduplicated; the caller
 * covers each.
 */
export async function storesInside(root: string, home: string): Promise<ExistingPath[]> {
  const candidates = [
    ...CREDENTIAL_STORES.map((store) => path.join(root, store)),
    ...CREDENTIAL_STORES.map((store) => path.join(home, store)).filter((store) => isInside(root, store)),
  ];
  const found = new Map<string, boolean>();
  for (const candidate of candidates) {
    const real = await realOrUndefined(candidate);
    if (real === undefined) continue;
    try {
      found.set(real, (await stat(real)).isDirectory());
    } catch (_vanished) {
      // Gone between the two calls: nothing to cover.
    }
  }
  return [...found].map(([real, isDirectory]) => ({ path: real, isDirectory }));
}

/** The venv a `bin/` entry belongs to (`<venv>/bin/tool` with `<venv>/pyvenv.cfg`), if any. */
async function virtualEnvironmentOf(file: string): Promise<string | undefined> {
  const bin = path.dirname(file);
  if (path.basename(bin) !== 'bin') return undefined;
  const venv = path.dirname(bin);
  try {
    return (await stat(path.join(venv, 'pyvenv.cfg'))).isFile() ? venv : undefined;
  } catch (_notAVenv) {
    return undefined;
  }
}

/** The entries of directory `dir` (none when unreadable). */
async function entriesOf(dir: string): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (_unreadable) {
    return [];
  }
}

/** The real path of `candidate`, or undefined when it does not exist. */
async function realOrUndefined(candidate: string): Promise<string | undefined> {
  try {
    return await realpath(candidate);
  } catch (_missing) {
    return undefined;
  }
}
