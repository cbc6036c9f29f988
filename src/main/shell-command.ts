/** Which program a session runs (SPEC §3 `shellPath`/`shellArgs`). */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { EngineConfig } from '../shared/config.js';
import { TerminalError } from '../shared/errors.js';
import type { Dialect } from '../shared/types.js';

/** bash without profile or rc files: the environment alone installs the prompt marker. */
const BASH_ARGV = ['/bin/bash', '--noprofile', '--norc', '-i'];
/** pwsh without logo or profile; the prompt function is written through the session. */
const PWSH_ARGS = ['-NoLogo', '-NoProfile'];

/** The argv for `dialect`; an explicit `shellPath` (with its `shellArgs`) wins. */
export function resolveShellArgv(config: EngineConfig, dialect: Dialect): string[] {
  if (config.shellPath !== undefined) return [config.shellPath, ...(config.shellArgs ?? [])];
  if (dialect === 'bash') return [...BASH_ARGV];
  const pwsh = findOnPath('pwsh');
  if (pwsh === undefined) {
    throw new TerminalError(
      'SPAWN_FAILED',
      "dialect 'pwsh' needs PowerShell ('pwsh') on PATH, or an explicit shellPath",
    );
  }
  return [pwsh, ...PWSH_ARGS];
}

/** First executable `name` on PATH. */
export function findOnPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
