/**
 * The pty binding of an engine thread (SPEC §4.1, §4.7, §11; docs/decisions/0004-own-pty-build.md):
 * node-pty's JavaScript, spawning through agent-pty's own build of node-pty's native part with the
 * reviewed patch (`native/build/Release/agent_pty_pty.node`, compiled by agent-pty's install step).
 *
 * node-pty's `UnixTerminal` calls `fork` on its loaded native module object by property lookup at
 * every spawn, so putting the patched `fork` on that object makes every spawn of this thread use it,
 * with node-pty's JavaScript unchanged; its `resize`, `process` and `open` stay node-pty's own (the
 * patch does not touch them). Both modules load at the first spawn, never at import: a missing or
 * unloadable native module then rejects that spawn with `SPAWN_FAILED` saying what to install and
 * run, instead of killing the engine thread while it loads (which surfaced as ENGINE_THREAD_DIED).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type * as NodePty from 'node-pty';
import { TerminalError } from '../../shared/errors.js';
import { ADDON_PATH, PACKAGE_ROOT } from '../../shared/native-addon-path.js';

/** The node-pty version the patch was reviewed against: the exact version package.json pins. */
const NODE_PTY_VERSION: string = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8'))
  .dependencies['node-pty'];

/** What the termios reader returns: ICANON and ECHO of a terminal's local flags. */
export interface NativeLocalFlags {
  canonical: boolean;
  echo: boolean;
}

/** agent-pty's addon: node-pty's functions built from the patched source, plus the termios reader. */
interface AgentPtyAddon {
  fork: (...args: unknown[]) => unknown;
  localFlags: (fd: number) => NativeLocalFlags;
}

/** The loaded binding: node-pty's API (spawning through the patched fork) and the addon. */
export interface PtyBinding {
  readonly nodePty: typeof NodePty;
  readonly addon: AgentPtyAddon;
}

const requireFromPackage = createRequire(join(PACKAGE_ROOT, 'package.json'));
/** Set once loading succeeded; a failure is not kept, so a rebuild is picked up by the next spawn. */
let loaded: PtyBinding | undefined;

/** The binding, loaded at the first call. Throws SPAWN_FAILED (what is wrong and what to do) when it cannot load. */
export function ptyBinding(): PtyBinding {
  loaded ??= loadBinding();
  return loaded;
}

function loadBinding(): PtyBinding {
  const nodePtyDir = nodePtyDirectory();
  const addon = loadAddon(nodePtyDir);
  let nodePty: typeof NodePty;
  let native: { fork?: unknown };
  try {
    nodePty = requireFromPackage('node-pty') as typeof NodePty;
    // node-pty's own search for its native module (build/Release, build/Debug, prebuilds/): the
    // same `require`, so the same cached object its UnixTerminal holds.
    const utils = requireFromPackage(join(nodePtyDir, 'lib', 'utils.js')) as {
      loadNativeModule(name: string): { module: { fork?: unknown } };
    };
    native = utils.loadNativeModule('pty').module;
  } catch (error) {
    throw nativeModuleError(
      `its dependency node-pty's native module (under ${nodePtyDir}) cannot be loaded: ${firstLine(error)}`,
      existsSync(join(nodePtyDir, 'build')) ? 'broken' : 'node-pty-unbuilt',
      error,
    );
  }
  native.fork = addon.fork;
  return { nodePty, addon };
}

/** node-pty's directory as agent-pty resolves it, checked to be the version the patch is for. */
function nodePtyDirectory(): string {
  let manifest: string;
  try {
    manifest = requireFromPackage.resolve('node-pty/package.json');
  } catch (error) {
    throw nativeModuleError(
      `its dependency node-pty is not installed next to it (${firstLine(error)})`,
      'reinstall',
      error,
    );
  }
  const dir = join(manifest, '..');
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version?: string };
  if (version !== NODE_PTY_VERSION) {
    throw new TerminalError(
      'SPAWN_FAILED',
      `agent-pty cannot open a terminal: node-pty ${version} is installed at ${dir}, but agent-pty's pty ` +
        `addon is built for node-pty ${NODE_PTY_VERSION} (${platformLabel()}). Install the node-pty ` +
        `version agent-pty depends on (remove any override of it), then reinstall agent-pty`,
    );
  }
  return dir;
}

function loadAddon(nodePtyDir: string): AgentPtyAddon {
  if (!existsSync(ADDON_PATH)) {
    // node-pty has no prebuilt binary for Linux: without its build/ folder its install script never ran either.
    const cause = existsSync(join(nodePtyDir, 'build')) ? 'unbuilt' : 'ignore-scripts';
    throw nativeModuleError(`its native pty module ${ADDON_PATH} is missing`, cause);
  }
  let addon: Partial<AgentPtyAddon>;
  try {
    addon = requireFromPackage(ADDON_PATH) as Partial<AgentPtyAddon>;
  } catch (error) {
    throw nativeModuleError(
      `its native pty module ${ADDON_PATH} cannot be loaded: ${firstLine(error)}`,
      'broken',
      error,
    );
  }
  if (typeof addon.fork !== 'function' || typeof addon.localFlags !== 'function') {
    throw nativeModuleError(
      `its native pty module ${ADDON_PATH} is not the one this version builds`,
      'broken',
    );
  }
  return addon as AgentPtyAddon;
}

/**
 * Why a native module is absent: `ignore-scripts` when node-pty's build is missing too (neither
 * install script ran), `unbuilt` when only agent-pty's did not, `node-pty-unbuilt` when only
 * node-pty's did not, `broken` when a module exists but does not load, `reinstall` when a
 * dependency is missing altogether.
 */
type MissingCause = 'ignore-scripts' | 'unbuilt' | 'node-pty-unbuilt' | 'broken' | 'reinstall';

/** How to let npm run the install scripts (npm 11 lists unreviewed ones; a later npm blocks them). */
const ALLOW_SCRIPTS = '`npm install-scripts approve node-pty agent-pty` allows them';

const REBUILD =
  'then run `npm rebuild node-pty agent-pty` in the project that depends on agent-pty ' +
  '(`npm rebuild -g node-pty agent-pty` for a global install)';

/** A SPAWN_FAILED that names what is wrong, this platform and Node, and what this user should do. */
function nativeModuleError(problem: string, cause: MissingCause, error?: unknown): TerminalError {
  const toolchain =
    process.platform === 'darwin'
      ? 'the Xcode command line tools and python3'
      : 'a C++ compiler, make and python3 (Debian/Ubuntu: `apt-get install g++ make python3`)';
  const why: Record<MissingCause, string> = {
    'ignore-scripts':
      'Neither agent-pty nor node-pty was compiled here: their install scripts did not run (an install ' +
      `with \`--ignore-scripts\` or \`ignore-scripts=true\` in an .npmrc, or scripts npm held back: ${ALLOW_SCRIPTS})`,
    unbuilt:
      "agent-pty's install script, which compiles it, did not run or did not finish (an install that was " +
      `interrupted, or a script npm held back: ${ALLOW_SCRIPTS})`,
    'node-pty-unbuilt': `node-pty's install script, which compiles it, did not run (${ALLOW_SCRIPTS})`,
    broken: 'It was compiled for another platform or with a broken toolchain, or its files were damaged',
    reinstall: 'The installation is incomplete',
  };
  const step =
    cause === 'reinstall'
      ? 'Reinstall agent-pty (`npm install agent-pty`)'
      : `Make sure ${toolchain} are installed, ${REBUILD}`;
  return new TerminalError(
    'SPAWN_FAILED',
    `agent-pty cannot open a terminal: ${problem} (${platformLabel()}). ${why[cause]}. ${step}`,
    error === undefined ? {} : { cause: error },
  );
}

/** e.g. `linux-x64, Node v20.20.2, ABI 115, Node-API 9`. */
function platformLabel(): string {
  const { modules, napi } = process.versions;
  return `${process.platform}-${process.arch}, Node ${process.version}, ABI ${modules}, Node-API ${napi}`;
}

function firstLine(error: unknown): string {
  return String(error instanceof Error ? error.message : error).split('\n')[0] ?? '';
}
