/** Every dialect by name (SPEC §8): the one place a new dialect's file is added to. */
import type { Dialect } from '../../shared/types.js';
import { bashDialect } from './bash.js';
import { pwshDialect } from './pwsh.js';
import type { ShellDialect } from './shell-dialect.js';
import { zshDialect } from './zsh.js';

const DIALECTS_BY_NAME: Readonly<Record<Dialect, ShellDialect>> = {
  bash: bashDialect,
  zsh: zshDialect,
  pwsh: pwshDialect,
};

/** The dialect called `name`. */
export function dialectNamed(name: Dialect): ShellDialect {
  return DIALECTS_BY_NAME[name];
}
