/**
 * What a confined session's private `$HOME` shows (SPEC §4.1): an empty tmpfs into which only the
 * `homeAllowlist` and the toolchains are bound from the host, read-only, and in which the built-in
 * denylist of credential stores always wins.
 *
 * The denylist is applied by path, relative to `$HOME` and relative to each bound root (a `.npmrc`
 * is a store in `~` and at the top of `~/.nvm` alike). A root that holds a store is never bound whole:
 * its children that exist at spawn are bound one by one (recursively, down to the stores, which are
 * left out), so a credential file the host creates there later has no mount in the session and stays
 * invisible. "Holds" means: one of `$HOME`'s stores would lie below it, whether it exists yet or not
 * (`~/.cargo` and `.cargo/credentials.toml`), or one of the root's own exists there now. A root that
 * holds none is bound whole: one mount, however large. Paths bound whole elsewhere (the workspace,
 * `extraReadOnlyPaths`) cannot be split — a writable workspace must stay one mount — so the stores
 * that exist inside them at spawn are covered instead ({@link storesInside}).
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
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
 * `home`): missing entries are skipped, stores are never bound, a root that holds a store is split
 * into its children. A symbolic link is bound as its real target, at the link's path.
 */
export async function privateHomeBinds(home: string, entries: readonly ToolchainPath[]): Promise<HomeBind[]> {
  const roots = new Set<string>();
  for (const entry of entries) {
    roots.add(entry.path);
    if (entry.linkTargets === true)
      for (const target of await linkTargets(home, entry.path)) roots.add(target);
  }
  const binds = new Map<string, HomeBind>();
  await Promise.all([...roots].map((root) => bindRoot(home, root, binds)));
  // Sorted, so the same host yields the same argv whatever order the file system answered in.
  return [...binds.values()].sort((a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : 0));
}

/**
 * What the symbolic links directly in `dir` point to below `home` (outside it, they are visible
 * anyway): the venv a `bin/` entry belongs to, else the target itself.
 */
async function linkTargets(home: string, dir: string): Promise<string[]> {
  const links = (await entriesOf(dir)).filter((entry) => entry.isSymbolicLink());
  const targets = await Promise.all(links.map((link) => realOrUndefined(path.join(dir, link.name))));
  const inside = targets.filter(
    (target): target is string => target !== undefined && isStrictlyInside(home, target),
  );
  return Promise.all(inside.map(async (target) => (await virtualEnvironmentOf(target)) ?? target));
}

/**
 * Binds the root `root`: the stores of `$HOME` are never bound, nor the stores of the root's own that
 * exist now (a `.npmrc` at the top of `~/.nvm`); either kind splits the directories that hold it.
 */
async function bindRoot(home: string, root: string, binds: Map<string, HomeBind>): Promise<void> {
  await bindTree(home, await storesPresent(root), root, root, binds);
}

/**
 * The stores of {@link CREDENTIAL_STORES} that are there in `dir` (as entries: a dangling link counts),
 * as paths below `dir`. One directory read decides most: only a store whose first component is there
 * is looked up (a failed lookup costs an exception, and there are dozens of stores).
 */
async function storesPresent(dir: string): Promise<string[]> {
  const names = new Set((await entriesOf(dir)).map((entry) => entry.name));
  const candidates = CREDENTIAL_STORES.filter((store) => names.has(store.split('/')[0]!));
  const present = await Promise.all(
    candidates.map((store) => (store.includes('/') ? existsAsEntry(path.join(dir, store)) : true)),
  );
  return candidates.filter((_, index) => present[index]).map((store) => path.join(dir, store));
}

/**
 * Binds `target` (whose host path is `source`): whole, split into its children when it holds a store
 * (one of `$HOME`'s that could appear below it, or one of `ownStores` that is there), or not at all
 * when it is a store or resolves into one.
 */
async function bindTree(
  home: string,
  ownStores: readonly string[],
  target: string,
  source: string,
  binds: Map<string, HomeBind>,
): Promise<void> {
  const fromHome = path.relative(home, target);
  if (storeContaining(fromHome) !== undefined) return;
  if (ownStores.some((store) => isInside(store, target))) return;
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
  const holdsStore =
    storesBelow(fromHome).length > 0 || ownStores.some((store) => isStrictlyInside(target, store));
  if (isDirectory && holdsStore) {
    const children = await entriesOf(real);
    await Promise.all(
      children.map((child) =>
        bindTree(home, ownStores, path.join(target, child.name), path.join(real, child.name), binds),
      ),
    );
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
  const homeStores = isInside(root, home) ? await storesPresent(home) : [];
  const candidates = [
    ...(await storesPresent(root)),
    // Those of $HOME below `root`, when `root` is inside $HOME (`~/.config` holds `~/.config/gh`).
    ...CREDENTIAL_STORES.map((store) => path.join(home, store)).filter(
      (store) => isStrictlyInside(root, store) && !isInside(root, home),
    ),
    ...homeStores,
  ];
  const found = await Promise.all(
    candidates.map(async (candidate): Promise<ExistingPath | undefined> => {
      const real = await realOrUndefined(candidate);
      if (real === undefined) return undefined;
      try {
        return { path: real, isDirectory: (await stat(real)).isDirectory() };
      } catch (_vanished) {
        return undefined; // gone between the two calls: nothing to cover
      }
    }),
  );
  const unique = new Map<string, ExistingPath>();
  for (const store of found) if (store !== undefined) unique.set(store.path, store);
  return [...unique.values()];
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

/** Whether `candidate` exists as a directory entry (a dangling link counts: it is there). */
async function existsAsEntry(candidate: string): Promise<boolean> {
  try {
    await lstat(candidate);
    return true;
  } catch (_missing) {
    return false;
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
