/**
 * What of `$HOME` a confined session may see (SPEC §3 `homeAllowlist`, §4.1): nothing but the
 * allowlist, and never a credential store. The denylist names stores by their path below a home
 * (`.aws`, `.cargo/credentials.toml`); the sandbox applies it inside every path it binds — the
 * allowlist, the toolchains, the workspace — and it always wins. Pure data and path arithmetic:
 * the config schema validates `homeAllowlist` with it, the bubblewrap provider enforces it.
 */

/**
 * The built-in denylist: where common tools keep keys, tokens and passwords, relative to a home
 * directory. A directory entry covers everything below it. Reads are not otherwise confined, and
 * whatever a command prints reaches the model.
 */
export const CREDENTIAL_STORES: readonly string[] = Object.freeze([
  // Remote shells, clouds, clusters, registries.
  '.ssh',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.kube',
  '.docker',
  '.config/containers/auth.json',
  '.oci',
  '.terraform.d/credentials.tfrc.json',
  '.vault-token',
  '.config/doctl',
  '.config/rclone/rclone.conf',
  '.s3cfg',
  '.boto',
  // Keys and password stores.
  '.gnupg',
  '.password-store',
  '.local/share/keyrings',
  '.config/op',
  // Network logins and databases.
  '.netrc',
  '.pgpass',
  '.my.cnf',
  // Package registries.
  '.npmrc',
  '.yarnrc.yml',
  '.pypirc',
  '.gem/credentials',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.m2/settings.xml',
  '.m2/settings-security.xml',
  '.gradle/gradle.properties',
  '.composer/auth.json',
  '.config/composer/auth.json',
  '.nuget/NuGet/NuGet.Config',
  // Git hosts: git's credential stores, the GitHub and hub CLIs.
  '.git-credentials',
  '.config/git/credentials',
  '.config/gh',
  '.config/hub',
  // The coding agents' own logins.
  '.claude/.credentials.json',
  '.claude.json',
  '.codex/auth.json',
  '.gemini/oauth_creds.json',
  '.config/github-copilot',
]);

/**
 * Default `homeAllowlist` (SPEC §3): git's user configuration, so commits carry the user's name and
 * git honours their ignore and attribute rules. Never git's `credentials` store beside them.
 */
export const DEFAULT_HOME_ALLOWLIST: readonly string[] = Object.freeze([
  '.gitconfig',
  '.config/git/config',
  '.config/git/ignore',
  '.config/git/attributes',
]);

/** The path components of a relative path (no empty ones). */
function componentsOf(relative: string): string[] {
  return relative.split('/').filter((part) => part !== '' && part !== '.');
}

/** The store of {@link CREDENTIAL_STORES} that `relative` (below a home) is or lies inside, if any. */
export function storeContaining(relative: string): string | undefined {
  const parts = componentsOf(relative);
  return CREDENTIAL_STORES.find((store) => {
    const storeParts = componentsOf(store);
    return storeParts.length <= parts.length && storeParts.every((part, index) => parts[index] === part);
  });
}

/** The stores that lie strictly below `relative` (below a home): `.config` holds `.config/gh`. */
export function storesBelow(relative: string): string[] {
  const parts = componentsOf(relative);
  return CREDENTIAL_STORES.filter((store) => {
    const storeParts = componentsOf(store);
    return storeParts.length > parts.length && parts.every((part, index) => storeParts[index] === part);
  });
}

/**
 * Why `entry` cannot be a `homeAllowlist` entry, or undefined when it can: a non-empty path relative
 * to `$HOME` that stays below it and is not a credential store (a directory that holds stores, such
 * as `.config`, is allowed: the stores inside it stay hidden).
 */
export function homeAllowlistProblem(entry: string): string | undefined {
  if (entry.startsWith('/')) return `must be relative to $HOME, got ${JSON.stringify(entry)}`;
  const parts = entry.split('/').filter((part) => part !== '');
  if (parts.length === 0 || parts.every((part) => part === '.')) {
    return `must name a path below $HOME, got ${JSON.stringify(entry)}`;
  }
  if (parts.includes('..')) return `must stay below $HOME (no ..), got ${JSON.stringify(entry)}`;
  const store = storeContaining(entry);
  if (store !== undefined) {
    return `${JSON.stringify(entry)} is ${store === componentsOf(entry).join('/') ? '' : 'inside '}the credential store ${store}, which a confined session never sees`;
  }
  return undefined;
}
