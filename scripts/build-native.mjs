#!/usr/bin/env node
/**
 * agent-pty's install step (SPEC §11, docs/decisions/0004-own-pty-build.md): compiles agent-pty's own
 * pty addon from the node-pty package it depends on, with the reviewed patch, wherever agent-pty is
 * installed (a project's `npm install agent-pty`, `npm install -g agent-pty`, this repository's
 * `npm ci`, `npm rebuild agent-pty`).
 *
 * 1. finds the installed node-pty (it must be the pinned version the patch was reviewed against);
 * 2. applies native/node-pty-<version>-pty.cc.patch to a copy of its src/unix/pty.cc, strictly, into
 *    native/build/patched-src/ (node-pty's own directory is never written to);
 * 3. compiles that with node-gyp and native/binding.gyp into native/build/Release/agent_pty_pty.node;
 * 4. loads the result once, so a build that links but cannot load fails here and not at a spawn.
 *
 * A failure fails the install (exit 1) with a message saying what to install: without this addon no
 * shell may start (the walls of SPEC §4.1 and §4.7 rest on it), and node-pty's own install already
 * needs the same compiler on Linux. Plain Node ESM without dependencies: it runs before anything else.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyUnifiedDiff } from './unified-diff.mjs';

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
/** The node-pty version the patch was reviewed against: the exact version package.json pins. */
const NODE_PTY_VERSION = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')).dependencies[
  'node-pty'
];
const NATIVE_DIR = join(PACKAGE_DIR, 'native');
const BUILD_DIR = join(NATIVE_DIR, 'build');
const PATCH_FILE = join(NATIVE_DIR, `node-pty-${NODE_PTY_VERSION}-pty.cc.patch`);
const PATCHED_SOURCE = join(BUILD_DIR, 'patched-src', 'pty.cc');
const ADDON = join(BUILD_DIR, 'Release', 'agent_pty_pty.node');
/** Platforms whose terminals node-pty's src/unix/pty.cc serves. */
const UNIX_PLATFORMS = ['linux', 'darwin', 'freebsd', 'openbsd'];
/** What a machine needs to compile the addon, as an instruction. */
const TOOLCHAIN_HINT =
  process.platform === 'darwin'
    ? 'install the Xcode command line tools (`xcode-select --install`) and python3'
    : 'install a C++ compiler, make and python3 (Debian/Ubuntu: `apt-get install g++ make python3`; ' +
      'Fedora: `dnf install gcc-c++ make python3`; Alpine: `apk add g++ make python3`)';
/** node-gyp's other need, which fails the same way on a machine without internet access. */
const HEADERS_HINT =
  "node-gyp also needs this Node's headers: it downloads them once from nodejs.org, or uses the " +
  "installation npm's `nodedir` setting names";

/** Thrown for a step that failed; `hint` says what the user can do about it. */
class BuildError extends Error {
  constructor(message, hint) {
    super(message);
    this.hint = hint;
  }
}

/** The installed node-pty's directory, checked to be the pinned version. */
function locateNodePty() {
  const fromPackage = createRequire(join(PACKAGE_DIR, 'package.json'));
  let manifestPath;
  try {
    manifestPath = fromPackage.resolve('node-pty/package.json');
  } catch (error) {
    throw new BuildError(
      `node-pty is not installed next to agent-pty (${error.message.split('\n')[0]})`,
      'reinstall agent-pty so that npm installs its dependencies',
    );
  }
  const { version } = JSON.parse(readFileSync(manifestPath, 'utf8'));
  if (version !== NODE_PTY_VERSION) {
    throw new BuildError(
      `node-pty ${version} is installed at ${dirname(manifestPath)}; agent-pty's patch is for node-pty ${NODE_PTY_VERSION}`,
      `install the node-pty version agent-pty pins (${NODE_PTY_VERSION}): do not override it`,
    );
  }
  return dirname(manifestPath);
}

/** node-addon-api as node-pty resolves it (nested under node-pty or hoisted next to it). */
function locateNodeAddonApi(nodePtyDir) {
  try {
    const dir = dirname(
      createRequire(join(nodePtyDir, 'package.json')).resolve('node-addon-api/package.json'),
    );
    if (existsSync(join(dir, 'node_addon_api.gyp'))) return dir;
  } catch {
    // reported below
  }
  throw new BuildError(
    `node-pty's dependency node-addon-api was not found from ${nodePtyDir}`,
    'reinstall agent-pty so that npm installs its dependencies',
  );
}

/**
 * node-gyp's command-line script: the one npm names to its lifecycle scripts, else npm's own copy
 * (next to this Node, or next to the `npm` on PATH).
 */
function locateNodeGyp() {
  const candidates = [];
  if (process.env.npm_config_node_gyp) candidates.push(process.env.npm_config_node_gyp);
  const bundled = (npmDir) => join(npmDir, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  candidates.push(bundled(join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm')));
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const npm = join(dir, 'npm');
    if (!dir || !existsSync(npm)) continue;
    try {
      candidates.push(bundled(join(dirname(realpathSync(npm)), '..')));
    } catch {
      // a dangling npm link: try the next
    }
  }
  const found = candidates.find((candidate) => existsSync(candidate));
  if (found === undefined) {
    throw new BuildError(
      `node-gyp was not found (looked at ${candidates.join(', ')})`,
      'run the install through npm, which brings node-gyp',
    );
  }
  return found;
}

/** Writes node-pty's src/unix/pty.cc with the patch applied into agent-pty's build folder. */
function writePatchedSource(nodePtyDir) {
  const sourcePath = join(nodePtyDir, 'src', 'unix', 'pty.cc');
  let patched;
  try {
    patched = applyUnifiedDiff(readFileSync(sourcePath, 'utf8'), readFileSync(PATCH_FILE, 'utf8'));
  } catch (error) {
    throw new BuildError(
      `agent-pty's patch does not apply to ${sourcePath}: ${error.message}`,
      `node-pty's source is not the published ${NODE_PTY_VERSION}: reinstall agent-pty (and never edit node_modules/node-pty)`,
    );
  }
  rmSync(BUILD_DIR, { recursive: true, force: true });
  mkdirSync(dirname(PATCHED_SOURCE), { recursive: true });
  writeFileSync(PATCHED_SOURCE, patched);
}

/** Runs node-gyp in native/ (configure + build: configure keeps the patched source in build/). */
function compile(nodeGyp, nodeAddonApiDir) {
  const args = [nodeGyp, 'configure', 'build', `--node_addon_api_dir=${nodeAddonApiDir}`];
  const run = spawnSync(process.execPath, args, { cwd: NATIVE_DIR, stdio: 'inherit' });
  if (run.error !== undefined || run.status !== 0) {
    const how = run.error?.message ?? (run.signal ? `signal ${run.signal}` : `exit status ${run.status}`);
    throw new BuildError(
      `node-gyp failed to compile agent-pty's pty addon (${how}; its output is above)`,
      `${TOOLCHAIN_HINT}; ${HEADERS_HINT}`,
    );
  }
}

/** Loads the fresh addon in a separate Node process and checks that it has the functions agent-pty calls. */
function checkAddon() {
  const probe = `const m = require(${JSON.stringify(ADDON)}); if (typeof m.fork !== 'function' || typeof m.localFlags !== 'function' || typeof m.peerCredentials !== 'function') throw new Error('exports ' + Object.keys(m));`;
  try {
    execFileSync(process.execPath, ['-e', probe], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    throw new BuildError(
      `the built ${ADDON} does not load: ${String(error.stderr ?? error.message).trim()}`,
      `${TOOLCHAIN_HINT}; then run \`npm rebuild agent-pty\``,
    );
  }
}

function main() {
  if (!UNIX_PLATFORMS.includes(process.platform)) {
    console.log(
      `agent-pty: no pty addon is built on ${process.platform}; agent-pty's engine needs Linux (or macOS), and on this platform opening a terminal fails with SPAWN_FAILED.`,
    );
    return;
  }
  const nodePtyDir = locateNodePty();
  const nodeAddonApiDir = locateNodeAddonApi(nodePtyDir);
  const nodeGyp = locateNodeGyp();
  writePatchedSource(nodePtyDir);
  compile(nodeGyp, nodeAddonApiDir);
  checkAddon();
  console.log(
    `agent-pty: built ${ADDON} from node-pty ${NODE_PTY_VERSION} (${nodePtyDir}) with agent-pty's patch`,
  );
}

try {
  main();
} catch (error) {
  if (!(error instanceof BuildError)) throw error;
  const lines = [
    '',
    'agent-pty: its pty addon could not be built, so it cannot open terminals on this machine.',
    `  what failed: ${error.message}`,
    `  what to do:  ${error.hint}.`,
    '  Then install again, or run `npm rebuild agent-pty` where it is installed.',
    '  Why it is compiled here: agent-pty runs node-pty with a patch (pty masters close-on-exec,',
    '  no inherited descriptors in a shell, no process abort when a thread stops), see',
    "  agent-pty's docs/decisions/0004-own-pty-build.md. node-pty itself compiles at install on Linux too.",
    '',
  ];
  console.error(lines.join('\n'));
  process.exitCode = 1;
}
