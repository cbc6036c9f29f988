/**
 * The pieces of the private home (SPEC §3 `homeAllowlist`, §4.1), each on its own: the denylist of
 * credential stores and the allowlist's validation at load, the toolchain table (one row per
 * toolchain, with what it binds and what it never binds), the split rule of `privateHomeBinds` on a
 * real directory tree, the stores covered inside a path bound whole, which directories a mount plan
 * shows, and the workspace roots too broad to bind. sandbox-home.test.ts drives all of it through
 * real bwrap sessions.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  MountRank,
  type MountStep,
  orderMounts,
  showsDirectory,
} from '../../../../src/main/sandbox/mount-plan.js';
import { privateHomeBinds, storesInside } from '../../../../src/main/sandbox/private-home.js';
import { toolchainPaths } from '../../../../src/main/sandbox/toolchains.js';
import { resolveEngineConfig } from '../../../../src/shared/config.js';
import {
  CREDENTIAL_STORES,
  DEFAULT_HOME_ALLOWLIST,
  homeAllowlistProblem,
  storeContaining,
  storesBelow,
} from '../../../../src/shared/credential-stores.js';
import { broadWorkspace, narrowImplicitWorkspace } from '../../../../src/shared/workspace-scope.js';

const HOME = '/home/me';

describe('the credential denylist', () => {
  it('matches stores by whole path components', () => {
    expect(storeContaining('.aws')).toBe('.aws');
    expect(storeContaining('.aws/credentials')).toBe('.aws');
    expect(storeContaining('.aws2/config')).toBeUndefined();
    expect(storeContaining('.config/git/credentials')).toBe('.config/git/credentials');
    expect(storeContaining('.config/git/config')).toBeUndefined();
    expect(storeContaining('.cargo/credentials.toml')).toBe('.cargo/credentials.toml');
    expect(storeContaining('.cargo/bin/cargo')).toBeUndefined();
    expect(storesBelow('.config')).toEqual(expect.arrayContaining(['.config/gh', '.config/git/credentials']));
    expect(storesBelow('.config/nvim')).toEqual([]);
    expect(storesBelow('.aws')).toEqual([]); // a store itself holds no further ones: it is left out whole
  });

  it('names the stores of SPEC §4.1 and of issue 23', () => {
    const named = [
      '.ssh',
      '.aws',
      '.config/gcloud',
      '.kube',
      '.docker',
      '.netrc',
      '.npmrc',
      '.pgpass',
      '.vault-token',
      '.cargo/credentials.toml',
      '.config/containers/auth.json',
      '.claude/.credentials.json',
      '.codex/auth.json',
      '.gemini/oauth_creds.json',
      '.config/github-copilot',
      '.m2/settings.xml',
      '.config/git/credentials',
    ];
    expect(named.filter((store) => !CREDENTIAL_STORES.includes(store))).toEqual([]);
  });
});

describe('homeAllowlist', () => {
  it('defaults to git’s user configuration, never its credentials', () => {
    expect(resolveEngineConfig({}).homeAllowlist).toEqual([...DEFAULT_HOME_ALLOWLIST]);
    expect(DEFAULT_HOME_ALLOWLIST).toEqual([
      '.gitconfig',
      '.config/git/config',
      '.config/git/ignore',
      '.config/git/attributes',
    ]);
    for (const entry of DEFAULT_HOME_ALLOWLIST) expect(homeAllowlistProblem(entry), entry).toBeUndefined();
  });

  it('is validated at load, naming the entry and the rule', () => {
    const cases: Array<[unknown, RegExp]> = [
      [['.ssh'], /homeAllowlist\.0: "\.ssh" is the credential store \.ssh/],
      [['.aws/config'], /homeAllowlist\.0: "\.aws\/config" is inside the credential store \.aws/],
      [['.config', '/etc/passwd'], /homeAllowlist\.1: must be relative to \$HOME/],
      [['../other/.bashrc'], /homeAllowlist\.0: must stay below \$HOME/],
      [[''], /homeAllowlist\.0: must name a path below \$HOME/],
      [['.'], /homeAllowlist\.0: must name a path below \$HOME/],
      ['.gitconfig', /homeAllowlist: /],
    ];
    for (const [homeAllowlist, message] of cases) {
      expect(() => resolveEngineConfig({ homeAllowlist }), JSON.stringify(homeAllowlist)).toThrow(
        expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringMatching(message) }),
      );
    }
    // A directory that holds stores is allowed: the stores inside stay hidden.
    expect(resolveEngineConfig({ homeAllowlist: ['.config', '.vimrc'] }).homeAllowlist).toEqual([
      '.config',
      '.vimrc',
    ]);
  });
});

describe('the toolchain table', () => {
  const home = (rest: string) => path.join(HOME, rest);

  it('maps each PATH entry below $HOME to what its toolchain needs', () => {
    const rows: Array<{ entry: string; env?: Record<string, string>; binds: string[] }> = [
      { entry: home('.pyenv/shims'), binds: [home('.pyenv')] },
      { entry: home('.pyenv/plugins/pyenv-virtualenv/shims'), binds: [home('.pyenv')] },
      { entry: '/opt/py/shims', env: { PYENV_ROOT: '/opt/py' }, binds: [] }, // outside $HOME: visible anyway
      { entry: home('.nvm/versions/node/v20.1.0/bin'), binds: [home('.nvm')] },
      { entry: home('.rustup/toolchains/stable/bin'), binds: [home('.rustup')] },
      {
        entry: home('.cargo/bin'),
        binds: ['bin', 'env', 'config.toml', 'registry', 'git']
          .map((child) => home(`.cargo/${child}`))
          .concat(home('.rustup')),
      },
      {
        entry: home('.local/share/cargo/bin'),
        env: { CARGO_HOME: home('.local/share/cargo'), RUSTUP_HOME: home('.local/share/rustup') },
        binds: ['bin', 'env', 'config.toml', 'registry', 'git']
          .map((child) => home(`.local/share/cargo/${child}`))
          .concat(home('.local/share/rustup')),
      },
      { entry: home('.asdf/shims'), binds: [home('.asdf'), home('.tool-versions')] },
      { entry: home('go/bin'), binds: [home('go/bin'), home('go/pkg/mod')] },
      { entry: home('.local/bin'), binds: [home('.local/bin')] },
      { entry: home('bin'), binds: [home('bin')] }, // unknown: only itself
      { entry: '/usr/local/bin', binds: [] },
      { entry: HOME, binds: [] }, // $HOME itself is no toolchain
      { entry: 'node_modules/.bin', binds: [] }, // relative: names nothing fixed
    ];
    for (const row of rows) {
      const found = toolchainPaths({ PATH: row.entry, ...row.env }, HOME).map((bind) => bind.path);
      expect(found, row.entry).toEqual(row.binds);
    }
    expect(toolchainPaths({ PATH: home('.local/bin') }, HOME)).toEqual([
      { path: home('.local/bin'), linkTargets: true },
    ]);
    // Several entries of one toolchain bind it once, in PATH order.
    const all = toolchainPaths(
      { PATH: [home('.pyenv/shims'), home('.pyenv/bin'), home('bin')].join(':') },
      HOME,
    );
    expect(all.map((bind) => bind.path)).toEqual([home('.pyenv'), home('bin')]);
  });
});

describe('the binds of the private home, on a real tree', () => {
  let root: string;
  let fake: string;
  const at = (rest: string) => path.join(fake, rest);
  const put = (rest: string, content = 'x') => {
    mkdirSync(path.dirname(at(rest)), { recursive: true });
    writeFileSync(at(rest), content);
  };

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'home-view-'));
    fake = path.join(root, 'home');
    for (const file of [
      '.gitconfig',
      '.config/git/config',
      '.config/git/credentials',
      '.config/gh/hosts.yml',
      '.config/nvim/init.lua',
      '.cargo/bin/cargo',
      '.cargo/env',
      '.cargo/credentials.toml',
      'tools/run',
      'tools/.npmrc',
      'tools/lib/a.js',
      '.ssh/id_ed25519',
    ]) {
      put(file);
    }
    symlinkSync(at('.ssh/id_ed25519'), at('.vimrc')); // an allowed name that resolves into a store
    mkdirSync(at('.local/share/pipx/venvs/black/bin'), { recursive: true });
    writeFileSync(at('.local/share/pipx/venvs/black/pyvenv.cfg'), 'home = /usr/bin\n');
    put('.local/share/pipx/venvs/black/bin/black');
    mkdirSync(at('.local/bin'), { recursive: true });
    symlinkSync(at('.local/share/pipx/venvs/black/bin/black'), at('.local/bin/black'));
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('binds whole what cannot hold a store, splits what could, and never binds a store', async () => {
    const entries = [
      ...['.gitconfig', '.config', '.vimrc', 'missing'].map((entry) => ({ path: at(entry) })),
      ...toolchainPaths({ PATH: [at('.cargo/bin'), at('tools'), at('.local/bin')].join(':') }, fake),
    ];
    const binds = await privateHomeBinds(fake, entries);
    const targets = binds.map((bind) => path.relative(fake, bind.target)).sort();
    expect(targets).toEqual(
      [
        '.gitconfig',
        '.config/git/config', // .config/git could hold git's credentials: split, the store left out
        '.config/nvim', // could hold no store: whole
        '.cargo/bin', // cargo's row binds its parts, never credentials.toml beside them
        '.cargo/env',
        'tools/run', // tools/.npmrc is there, a store of the root it lies in: split around it
        'tools/lib',
        '.local/bin',
        '.local/share/pipx/venvs/black', // the venv a ~/.local/bin link points into, as a whole
      ].sort(),
    );
    // A link is bound as its real target, at the link's path.
    symlinkSync(at('.gitconfig'), at('.config/git/ignore'));
    const linked = await privateHomeBinds(fake, [{ path: at('.config/git/ignore') }]);
    expect(linked).toEqual([{ source: at('.gitconfig'), target: at('.config/git/ignore') }]);
  });

  it('covers the stores that exist inside a path bound whole, its own and $HOME’s', async () => {
    const workspace = path.join(root, 'workspace');
    mkdirSync(path.join(workspace, '.aws'), { recursive: true });
    writeFileSync(path.join(workspace, '.netrc'), 'x');
    expect(await storesInside(workspace, fake)).toEqual([
      { path: path.join(workspace, '.aws'), isDirectory: true },
      { path: path.join(workspace, '.netrc'), isDirectory: false },
    ]);
    // A path of the home holds the home's stores that lie in it.
    const inConfig = (await storesInside(at('.config'), fake)).map((store) =>
      path.relative(fake, store.path),
    );
    expect(inConfig.sort()).toEqual(['.config/gh', '.config/git/credentials']);
    // A workspace that contains the home covers the home's stores too.
    const covered = (await storesInside(root, fake)).map((store) => path.relative(root, store.path)).sort();
    expect(covered).toEqual(
      ['home/.cargo/credentials.toml', 'home/.config/gh', 'home/.config/git/credentials', 'home/.ssh'].sort(),
    );
  });
});

describe('what a mount plan shows', () => {
  it('a bind shows the host’s directories, a fresh directory only itself and the mount points in it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'home-view-plan-'));
    try {
      mkdirSync(path.join(dir, 'project', 'src'), { recursive: true });
      mkdirSync(path.join(dir, 'home', '.m2'), { recursive: true });
      const steps: MountStep[] = [
        { target: '/', rank: MountRank.System, args: [], shows: { kind: 'bind', source: '/' } },
        { target: '/tmp', rank: MountRank.System, args: [], shows: { kind: 'empty' } },
        { target: path.join(dir, 'home'), rank: MountRank.PrivateHome, args: [], shows: { kind: 'empty' } },
        {
          target: path.join(dir, 'home', '.config', 'git', 'config'),
          rank: MountRank.HomeBind,
          args: [],
          shows: { kind: 'bind', source: '/etc/hostname' },
        },
        {
          target: path.join(dir, 'project'),
          rank: MountRank.Workspace,
          args: [],
          shows: { kind: 'bind', source: path.join(dir, 'project') },
        },
        {
          target: path.join(dir, 'project', 'src'),
          rank: MountRank.StoreCover,
          args: [],
          shows: { kind: 'file' },
        },
      ];
      const ordered = orderMounts(steps);
      const shows = (target: string) => showsDirectory(ordered, target);
      expect(shows('/usr')).toBe(true);
      expect(shows('/no/such/dir')).toBe(false);
      expect(shows('/tmp')).toBe(true);
      expect(shows(dir)).toBe(true); // below the fresh /tmp, on the way to the mounts inside it
      expect(shows(path.join(dir, 'elsewhere'))).toBe(false);
      expect(shows('/tmp/anything')).toBe(false);
      expect(shows(path.join(dir, 'home'))).toBe(true);
      expect(shows(path.join(dir, 'home', '.config'))).toBe(true); // bwrap creates it for the bind inside
      expect(shows(path.join(dir, 'home', '.m2'))).toBe(false); // on the host, not in the private home
      expect(shows(path.join(dir, 'project'))).toBe(true);
      expect(shows(path.join(dir, 'project', 'src'))).toBe(false); // covered by a file
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('workspace roots too broad to bind', () => {
  it('/, $HOME and its ancestors are broad; a directory below $HOME or beside it is not', () => {
    expect(broadWorkspace('/', HOME)).toBe('the whole filesystem');
    expect(broadWorkspace(HOME, HOME)).toBe('your home directory');
    expect(broadWorkspace(`${HOME}/`, HOME)).toBe('your home directory');
    expect(broadWorkspace('/home', HOME)).toBe('a directory that contains your home directory');
    expect(broadWorkspace(`${HOME}/project`, HOME)).toBeUndefined();
    expect(broadWorkspace('/home/other', HOME)).toBeUndefined();
    expect(broadWorkspace('/srv', HOME)).toBeUndefined();
  });

  it('narrows a confined mode to read-only there, and says so; danger-full-access stays', () => {
    for (const mode of ['read-only', 'workspace-write'] as const) {
      const narrowed = narrowImplicitWorkspace(mode, HOME, HOME);
      expect(narrowed.mode).toBe('read-only');
      expect(narrowed.notice).toMatch(/started in \/home\/me \(your home directory\) without --workspace/);
    }
    expect(narrowImplicitWorkspace('danger-full-access', '/', HOME)).toEqual({ mode: 'danger-full-access' });
    expect(narrowImplicitWorkspace('workspace-write', `${HOME}/project`, HOME)).toEqual({
      mode: 'workspace-write',
    });
  });
});
