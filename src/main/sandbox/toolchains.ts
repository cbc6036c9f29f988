/**
 * The toolchains a confined session may run from `$HOME` (SPEC §4.1): read from the host's `PATH`
 * when the provider is created, never from a spawn's `env`. Only entries strictly below `$HOME`
 * count (everything else is outside the private home and visible anyway), and one table maps each
 * to what it needs: a version manager's whole root, cargo's executables and caches without its
 * credentials, the targets of `~/.local/bin`'s links. An entry the table does not know binds only
 * itself. What is bound is still subject to the credential denylist (`private-home.ts`).
 */
import path from 'node:path';
import { isInside, isStrictlyInside } from '../../shared/workspace-scope.js';

/** A path below `$HOME` that a toolchain needs inside the private home. */
export interface ToolchainPath {
  /** Absolute path below `$HOME`, as the session sees it. */
  path: string;
  /**
   * Also bind the real targets of the symbolic links directly inside `path` (`~/.local/bin`, whose
   * entries link into pipx venvs and the like), found at each spawn.
   */
  linkTargets?: boolean;
}

/** The host variables the table reads: `PATH` and the toolchains' own location variables (others ignored). */
export interface ToolchainEnvironment {
  [name: string]: string | undefined;
  PATH?: string;
  PYENV_ROOT?: string;
  NVM_DIR?: string;
  RUSTUP_HOME?: string;
  CARGO_HOME?: string;
  ASDF_DATA_DIR?: string;
  GOPATH?: string;
}

/** One row of the table: where a toolchain lives, and what a `PATH` entry inside it needs. */
interface ToolchainRow {
  /** For messages and docs. */
  readonly name: string;
  /** Its root: from its location variable, else its default below `$HOME`. */
  readonly root: (env: ToolchainEnvironment, home: string) => string;
  /** What to bind when a `PATH` entry lies inside `root`. */
  readonly needs: (root: string, env: ToolchainEnvironment, home: string) => ToolchainPath[];
}

/** `$RUSTUP_HOME`, else `~/.rustup`. */
const rustupHome = (env: ToolchainEnvironment, home: string) => env.RUSTUP_HOME ?? path.join(home, '.rustup');

/**
 * The table of SPEC §4.1, first match wins. cargo's `bin` holds rustup's proxies (`cargo`, `rustc`
 * are links to `rustup`), so a cargo entry brings `$RUSTUP_HOME` too; its `credentials` files are
 * never among what it binds.
 */
const TOOLCHAINS: readonly ToolchainRow[] = [
  {
    name: 'pyenv',
    root: (env, home) => env.PYENV_ROOT ?? path.join(home, '.pyenv'),
    needs: (root) => [{ path: root }],
  },
  {
    name: 'nvm',
    root: (env, home) => env.NVM_DIR ?? path.join(home, '.nvm'),
    needs: (root) => [{ path: root }],
  },
  { name: 'rustup', root: rustupHome, needs: (root) => [{ path: root }] },
  {
    name: 'cargo',
    root: (env, home) => env.CARGO_HOME ?? path.join(home, '.cargo'),
    needs: (root, env, home) => [
      ...['bin', 'env', 'config.toml', 'registry', 'git'].map((entry) => ({ path: path.join(root, entry) })),
      { path: rustupHome(env, home) },
    ],
  },
  {
    name: 'asdf',
    root: (env, home) => env.ASDF_DATA_DIR ?? path.join(home, '.asdf'),
    needs: (root, _env, home) => [{ path: root }, { path: path.join(home, '.tool-versions') }],
  },
  {
    name: 'go',
    // GOPATH may list several directories; binaries are installed into the first.
    root: (env, home) => env.GOPATH?.split(path.delimiter).find(path.isAbsolute) ?? path.join(home, 'go'),
    needs: (root) => [{ path: path.join(root, 'bin') }, { path: path.join(root, 'pkg', 'mod') }],
  },
  {
    name: 'local-bin',
    root: (_env, home) => path.join(home, '.local', 'bin'),
    needs: (root) => [{ path: root, linkTargets: true }],
  },
];

/**
 * What the toolchains on `env.PATH` need bound below `home`, deduplicated, in `PATH` order. Relative
 * `PATH` entries are ignored (they name nothing fixed).
 */
export function toolchainPaths(env: ToolchainEnvironment, home: string): ToolchainPath[] {
  const found = new Map<string, ToolchainPath>();
  for (const entry of (env.PATH ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(entry)) continue;
    const dir = path.normalize(entry);
    if (!isStrictlyInside(home, dir)) continue;
    const row = TOOLCHAINS.find((candidate) => isInside(candidate.root(env, home), dir));
    const needs = row === undefined ? [{ path: dir }] : row.needs(row.root(env, home), env, home);
    for (const need of needs) {
      const normalized = path.normalize(need.path);
      if (isStrictlyInside(home, normalized) && !found.has(normalized)) {
        found.set(normalized, { ...need, path: normalized });
      }
    }
  }
  return [...found.values()];
}
