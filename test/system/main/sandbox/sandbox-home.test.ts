/**
 * Deny by default (SPEC §4.1): a confined session sees, at the host's `$HOME` path, a private home
 * into which only `homeAllowlist`, the workspace and the toolchains of the host's `PATH` are bound.
 * A fake home full of canary credential stores — the ones the old denylist named, the ones it missed
 * (issue 23, observation 1), ones created on the host after the session started, git's own
 * `credentials` store — reads none of them in either confined mode, while `git config user.name`, a
 * toolchain on `PATH` below `$HOME` and the real home's pyenv `python3` and rustup `cargo` keep working.
 * Also the `cwd` refusals (observation 6: a hidden cwd and a missing one are refused alike) and the
 * workspace roots that are too broad to bind (`/`, `$HOME`).
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect } from 'vitest';
import { createLocalHost } from '../../../../dist/main/harness/local-host.js';
import { createBubblewrapSandbox } from '../../../../dist/main/sandbox/bubblewrap.js';
import { bwrapIt } from '../../../support/bwrap.js';
import { type TerminalSendResult, type TerminalSession, testEngine } from '../../../support/engine.js';

const itBwrap = bwrapIt('private home');

/** Content of every planted secret. */
const SECRET = 'hunter2-canary';

/** The stores the denylist named before (SPEC §4.1's first list), as files inside them. */
const LISTED_STORES = [
  '.ssh/id_ed25519',
  '.aws/config',
  '.azure/accessTokens.json',
  '.config/gcloud/credentials.db',
  '.kube/config',
  '.docker/config.json',
  '.gnupg/private-keys-v1.d/key',
  '.npmrc',
  '.pypirc',
  '.git-credentials',
  '.config/gh/hosts.yml',
];

/** 23 common stores the old denylist did not name: every one was readable (observation 1). */
const UNLISTED_STORES = [
  '.claude/.credentials.json',
  '.codex/auth.json',
  '.gemini/oauth_creds.json',
  '.config/github-copilot/hosts.json',
  '.pgpass',
  '.vault-token',
  '.cargo/credentials.toml',
  '.config/containers/auth.json',
  '.m2/settings.xml',
  '.claude.json',
  '.gradle/gradle.properties',
  '.terraform.d/credentials.tfrc.json',
  '.config/hub',
  '.my.cnf',
  '.s3cfg',
  '.boto',
  '.config/rclone/rclone.conf',
  '.local/share/keyrings/login.keyring',
  '.password-store/bank.gpg',
  '.gem/credentials',
  '.composer/auth.json',
  '.config/op/config',
  '.oci/config',
];

/** Created on the host only after the session started, and git's own store next to its config. */
const LATE_STORES = ['.aws/credentials', '.netrc', '.config/git/credentials', '.cargo/credentials.toml'];

/** What the default homeAllowlist shows (SPEC §3), each holding a value the test can recognise. */
const GIT_NAME = 'Canary Tester';

let root: string;
let home: string;
let workspace: string;
let hostTmp: string;

beforeEach(() => {
  // Outside /tmp, so the sandbox shows it (the private /tmp would hide it).
  const base = existsSync('/var/tmp') ? '/var/tmp' : homedir();
  root = mkdtempSync(path.join(base, 'sandbox-home-'));
  home = path.join(root, 'home');
  workspace = path.join(root, 'workspace');
  mkdirSync(workspace);
  for (const store of [...LISTED_STORES, ...UNLISTED_STORES]) plant(store);
  writeFileSync(path.join(home, '.gitconfig'), `[user]\n\tname = ${GIT_NAME}\n`);
  mkdirSync(path.join(home, '.config', 'git'), { recursive: true });
  writeFileSync(path.join(home, '.config', 'git', 'ignore'), '*.canary-ignored\n');
  writeFileSync(path.join(home, '.profile'), SECRET); // not a store either: hidden by default all the same
  // A toolchain below $HOME on the host's PATH: cargo's layout, with a `cargo` that computes its answer.
  const cargoBin = path.join(home, '.cargo', 'bin');
  mkdirSync(cargoBin, { recursive: true });
  writeFileSync(path.join(cargoBin, 'cargo'), '#!/bin/sh\necho "fake-cargo-$((6*7))"\n');
  chmodSync(path.join(cargoBin, 'cargo'), 0o755);
  writeFileSync(path.join(home, '.cargo', 'env'), 'export CANARY_CARGO_ENV=1\n');
  hostTmp = mkdtempSync(path.join(tmpdir(), 'sandbox-home-hidden-'));
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(hostTmp, { recursive: true, force: true });
});

/** Writes the canary `SECRET` at `store` below the fake home. */
function plant(store: string): void {
  const file = path.join(home, store);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, SECRET);
}

/** The provider for the fake home: its toolchains come from a PATH that has the fake cargo first. */
function fakeHomeSandbox() {
  return createBubblewrapSandbox({
    home,
    toolchainEnv: { PATH: `${path.join(home, '.cargo', 'bin')}:${process.env.PATH}` },
  });
}

/** Sends `text` and expects proven readiness. */
async function run(session: TerminalSession, text: string): Promise<TerminalSendResult> {
  const result = await session.startSend({ text }).done;
  expect(result.waitReason, result.viewport).toBe('stdin_read');
  return result;
}

/** Whole output lines of a result, trimmed. */
function lines(result: TerminalSendResult): string[] {
  return result.viewport.split('\n').map((line) => line.trim());
}

/**
 * Writes a script that prints `store <path> readable` or `store <path> hidden` for each store: readable
 * means its content, the canary, could be read.
 */
function storeScript(stores: readonly string[]): string {
  const script = path.join(workspace, 'stores.sh');
  const body = stores.map(
    (store) =>
      `if grep -q ${SECRET} "$HOME/${store}" 2>/dev/null; then echo "store ${store} readable"; ` +
      `else echo "store ${store} hidden"; fi`,
  );
  writeFileSync(script, `${body.join('\n')}\n`);
  return script;
}

/** `{ store: 'readable' | 'hidden' }` from the script's whole output lines. */
function storeReport(result: TerminalSendResult): Record<string, string> {
  return Object.fromEntries(
    [...result.viewport.matchAll(/^store (\S+) (readable|hidden)\s*$/gm)].map((match) => [
      match[1],
      match[2],
    ]),
  );
}

const everyStore = [...new Set([...LISTED_STORES, ...UNLISTED_STORES, ...LATE_STORES, '.profile'])];

describe('a private $HOME', () => {
  itBwrap(
    'no store is readable in either confined mode, listed, unlisted or created after spawn; git config still works',
    async () => {
      const script = storeScript(everyStore);
      const engine = await testEngine({ sandbox: fakeHomeSandbox(), disposeGraceMs: 300 });
      for (const mode of ['read-only', 'workspace-write'] as const) {
        for (const late of LATE_STORES) rmSync(path.join(home, late), { force: true });
        const session = await engine.spawn({
          env: { HOME: home },
          sandbox: { mode, workspaceRoot: workspace },
        });
        for (const late of LATE_STORES) plant(late);
        const report = storeReport(await run(session, `sh ${script}`));
        expect(report, mode).toEqual(Object.fromEntries(everyStore.map((store) => [store, 'hidden'])));
        // The default homeAllowlist: git's user config, the ignore file; the value git computes from it.
        const git = await run(session, 'git config user.name');
        expect(lines(git), mode).toContain(GIT_NAME);
        const ignored = await run(session, `echo seen-$(cat ~/.config/git/ignore | wc -l)`);
        expect(lines(ignored), mode).toContain('seen-1');
        await session.close();
      }
      // Control: unconfined, the same script reads every canary (the test can see a leak).
      const open = await engine.spawn({ env: { HOME: home } });
      const visible = storeReport(await run(open, `sh ${script}`));
      expect(visible).toEqual(Object.fromEntries(everyStore.map((store) => [store, 'readable'])));
      await open.close();
    },
    60_000,
  );

  itBwrap(
    'a toolchain on the host PATH below $HOME is bound: its bin and env, never its credentials',
    async () => {
      const engine = await testEngine({ sandbox: fakeHomeSandbox(), disposeGraceMs: 300 });
      const session = await engine.spawn({
        env: { HOME: home, PATH: `${path.join(home, '.cargo', 'bin')}:${process.env.PATH}` },
        sandbox: { mode: 'read-only', workspaceRoot: workspace },
      });
      plant('.cargo/credentials.toml');
      const ran = await run(
        session,
        'cargo; . ~/.cargo/env; echo env-$CANARY_CARGO_ENV; ls -A ~/.cargo | tr "\\n" " "; echo',
      );
      expect(lines(ran)).toContain('fake-cargo-42');
      expect(lines(ran)).toContain('env-1');
      expect(lines(ran)).toContain('bin env');
      await session.close();
    },
  );

  itBwrap(
    'the private home is writable in workspace-write only, and nothing written reaches the host',
    async () => {
      const engine = await testEngine({ sandbox: fakeHomeSandbox(), disposeGraceMs: 300 });
      for (const [mode, expected] of [
        ['read-only', 'denied'],
        ['workspace-write', 'ok'],
      ] as const) {
        const session = await engine.spawn({
          env: { HOME: home },
          sandbox: { mode, workspaceRoot: workspace },
        });
        const result = await run(
          session,
          'if mkdir -p ~/.cache/probe 2>/dev/null; then echo home-write=ok; else echo home-write=denied; fi',
        );
        expect(lines(result), mode).toContain(`home-write=${expected}`);
        await session.close();
      }
      expect(existsSync(path.join(home, '.cache'))).toBe(false);
    },
  );

  itBwrap('the real home: pyenv python3 and rustup cargo work, the rest of $HOME is not there', async () => {
    const engine = await testEngine({ sandbox: createBubblewrapSandbox(), disposeGraceMs: 300 });
    for (const mode of ['read-only', 'workspace-write'] as const) {
      const session = await engine.spawn({ sandbox: { mode, workspaceRoot: workspace } });
      const python = await run(session, "python3 -c 'print(6*7)'");
      expect(lines(python), mode).toContain('42');
      const cargo = await run(session, 'command -v cargo >/dev/null && cargo --version || echo no-cargo');
      const cargoLine = lines(cargo).find((line) => /^cargo \d+\.\d+/.test(line) || line === 'no-cargo');
      if (existsSync(path.join(homedir(), '.cargo', 'bin', 'cargo')))
        expect(cargoLine, mode).toMatch(/^cargo \d/);
      await session.close();
    }
  });
});

describe('cwd: a hidden one and a missing one are refused alike', () => {
  /** The message of SPEC §4.1, for `cwd`. */
  const refusal = (cwd: string) =>
    `cwd ${cwd} is not a directory this sandbox shows: it shows the workspace ${workspace}, the allowed home paths and the system`;

  itBwrap('the engine: a host /tmp entry, a home entry not allowed and a missing path', async () => {
    const engine = await testEngine({ sandbox: fakeHomeSandbox(), disposeGraceMs: 300 });
    const missing = path.join(root, 'does-not-exist');
    for (const mode of ['read-only', 'workspace-write'] as const) {
      for (const cwd of [hostTmp, path.join(home, '.m2'), missing]) {
        await expect(
          engine.spawn({ cwd, env: { HOME: home }, sandbox: { mode, workspaceRoot: workspace } }),
          cwd,
        ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: refusal(cwd) });
      }
    }
    // What it shows is accepted: the workspace, the private home itself, the system.
    for (const cwd of [workspace, home, '/usr']) {
      const session = await engine.spawn({
        cwd,
        env: { HOME: home },
        sandbox: { mode: 'read-only', workspaceRoot: workspace },
      });
      expect(lines(await run(session, 'pwd'))).toContain(cwd);
      await session.close();
    }
    expect(engine.sessions()).toEqual([]);
  });

  itBwrap('terminal_open through the harness: the same code and message for both', async () => {
    const host = await createLocalHost({ mode: 'read-only', workspaceRoot: workspace });
    try {
      const pty = host.service('pty');
      const missing = path.join(root, 'does-not-exist');
      const outcomes = [];
      for (const cwd of [hostTmp, missing]) {
        outcomes.push(await pty.spawn('alice', { type: 'shell', cwd }).catch((error: unknown) => error));
      }
      expect(outcomes).toMatchObject([
        { code: 'INVALID_ARGUMENT', message: refusal(hostTmp) },
        { code: 'INVALID_ARGUMENT', message: refusal(missing) },
      ]);
    } finally {
      await host.dispose();
    }
  });
});

describe('workspace roots too broad to bind', () => {
  itBwrap('/ is refused for workspace-write, whoever names it', async () => {
    const sandbox = createBubblewrapSandbox();
    await expect(
      sandbox.confine(['/bin/true'], { mode: 'workspace-write', workspaceRoot: '/' }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('read-only') });
  });

  itBwrap(
    '$HOME taken from where the host started: workspace-write is refused, read-only keeps the home private',
    async () => {
      const engine = await testEngine({ sandbox: fakeHomeSandbox(), disposeGraceMs: 300 });
      await expect(
        engine.spawn({
          env: { HOME: home },
          sandbox: { mode: 'workspace-write', workspaceRoot: home, workspaceExplicit: false },
        }),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('--workspace') });
      const script = storeScript(everyStore.filter((store) => !LATE_STORES.includes(store)));
      const session = await engine.spawn({
        env: { HOME: home },
        sandbox: { mode: 'read-only', workspaceRoot: home, workspaceExplicit: false },
      });
      const report = storeReport(await run(session, `sh ${script}`));
      // Every store answered (the script ran) and none was readable.
      expect(report).toEqual(
        Object.fromEntries(
          everyStore.filter((store) => !LATE_STORES.includes(store)).map((store) => [store, 'hidden']),
        ),
      );
      expect(lines(await run(session, 'pwd'))).toContain(home);
      await session.close();
    },
  );

  itBwrap('a workspace that is a credential store, or inside one, is refused', async () => {
    const sandbox = fakeHomeSandbox();
    for (const workspaceRoot of [path.join(home, '.ssh'), path.join(home, '.aws')]) {
      await expect(
        sandbox.confine(['/bin/true'], { mode: 'read-only', workspaceRoot }),
      ).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: expect.stringContaining('credential store'),
      });
    }
  });

  itBwrap(
    '$HOME named explicitly is the workspace: its files show, the denylisted stores in it do not',
    async () => {
      const engine = await testEngine({ sandbox: fakeHomeSandbox(), disposeGraceMs: 300 });
      writeFileSync(path.join(home, 'notes.txt'), 'notes-of-the-user\n');
      const session = await engine.spawn({
        env: { HOME: home },
        sandbox: { mode: 'workspace-write', workspaceRoot: home },
      });
      const notes = await run(session, 'tr a-z A-Z < ~/notes.txt');
      expect(lines(notes)).toContain('NOTES-OF-THE-USER');
      const script = storeScript([...LISTED_STORES, ...UNLISTED_STORES]);
      const report = storeReport(await run(session, `sh ${script}`));
      // Every store answered (the script ran) and none was readable.
      expect(report).toEqual(
        Object.fromEntries([...LISTED_STORES, ...UNLISTED_STORES].map((store) => [store, 'hidden'])),
      );
      await session.close();
      expect(readFileSync(path.join(home, 'notes.txt'), 'utf8')).toBe('notes-of-the-user\n');
    },
  );
});
