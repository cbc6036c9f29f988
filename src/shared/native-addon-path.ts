/**
 * Where agent-pty's own native addon is (SPEC §11; docs/decisions/0004-own-pty-build.md): compiled by
 * its install step from node-pty's pty.cc with the reviewed patch, plus agent-pty's small readers
 * (termios local flags for the engine threads, a socket peer's credentials for the daemon).
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** agent-pty's package root (this file is dist/shared/native-addon-path.js). */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Where agent-pty's install step puts the addon. */
export const ADDON_PATH = join(PACKAGE_ROOT, 'native', 'build', 'Release', 'agent_pty_pty.node');
