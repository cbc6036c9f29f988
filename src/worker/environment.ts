/**
 * The environment a session's shell starts with (SPEC §4.1): the host's environment minus every
 * credential-shaped name, then the caller's explicit variables, then the fixed terminal variables,
 * then the dialect's marker variables. Later layers win.
 */

/** Engine-private env prefix; variables with it are never inherited from the host (nested engines). */
export const PRIVATE_ENV_PREFIX = 'AGENT_PTY_';

/**
 * Words that make a variable name look like a credential, matched case-insensitively anywhere in the
 * name. Deliberately broad: dropping a harmless variable costs a tool its setting, leaking one costs a
 * secret, and secrets hide in glued names (`APIKEY`, `PRIVKEY`, `GHTOKEN`, `PGPASSFILE`).
 * - `KEY`, `SECRET`, `TOKEN`, `CREDENTIAL`, `AUTH`: the SPEC's list (`AUTH` also catches `SSH_AUTH_SOCK`,
 *   whose agent signs with the user's keys, and npm's `_AUTH`).
 * - `PASS`: covers `PASSWORD`/`PASSWD` from the SPEC and also `DB_PASS`, `SMTP_PASS`, `PASSPHRASE`,
 *   `GIT_ASKPASS`/`SSH_ASKPASS` (helpers that hand out passwords).
 * - `PWD`: MySQL-style `MYSQL_PWD`; the shell's own `PWD`/`OLDPWD` are exempted below.
 * Known over-matches we accept: `KEYBOARD`, `MONKEY`, `TOKENIZERS_PARALLELISM`, `BYPASS_*`.
 */
const CREDENTIAL_WORDS = /KEY|SECRET|TOKEN|PASS|PWD|CREDENTIAL|AUTH/;

/**
 * Spellings that contain a credential word but name no secret, blanked before {@link CREDENTIAL_WORDS}
 * is applied: the shell's working-directory variables (`PWD`, `OLDPWD`, which the shell needs) and
 * `AUTHOR`/`AUTHORS`/`AUTHORITY` (git's `GIT_AUTHOR_NAME`, X11's `XAUTHORITY` file path) — but not
 * `AUTHORIZATION`/`AUTHORISE`, which carry credentials (`HTTP_AUTHORIZATION`).
 */
const HARMLESS_SPELLINGS = /^(?:OLD)?PWD$|AUTHOR(?!I[SZ])/g;

/**
 * The terminal type sessions announce (README, "Output"): xterm with 256 colours, which is what the
 * session's screen model (@xterm/headless) emulates. Full-screen programs need cursor addressing and
 * the alternate screen to render (`vim`, `nano`, `top`, `htop`; `less` warns "terminal is not fully
 * functional" on `dumb`), and readline and zsh redraw long lines with cursor moves, which the output
 * model resolves. Colours are asked off with {@link FIXED_SHELL_VARIABLES}' `NO_COLOR`; what a program
 * prints anyway is removed by the output model, so the text read is colourless either way.
 */
export const SESSION_TERM = 'xterm-256color';

/** Variables every session gets, overriding host and caller: no pagers, a capable terminal, no colours. */
export const FIXED_SHELL_VARIABLES: Readonly<Record<string, string>> = Object.freeze({
  /** See {@link SESSION_TERM}. */
  TERM: SESSION_TERM,
  /** The no-color.org convention: programs that honour it print no colour (the rest are stripped). */
  NO_COLOR: '1',
  /** A pager would block a send on `(END)` until someone presses `q`. */
  PAGER: 'cat',
  /** git ignores `PAGER` when `GIT_PAGER` is set in the host environment. */
  GIT_PAGER: 'cat',
});

/** True when `name` looks like a credential (see {@link CREDENTIAL_WORDS}) or is engine-private. */
export function isCredentialName(name: string): boolean {
  const upper = name.toUpperCase();
  if (upper.startsWith(PRIVATE_ENV_PREFIX)) return true;
  return CREDENTIAL_WORDS.test(upper.replace(HARMLESS_SPELLINGS, '-'));
}

/**
 * The shell's environment: `hostEnv` minus credential-shaped names, then `callerEnv` (explicit, so a
 * caller may pass a credential on purpose), then {@link FIXED_SHELL_VARIABLES}, then `markerVars`.
 * Undefined values are dropped. Built through a Map so a name like `__proto__` stays an ordinary key.
 */
export function buildShellEnvironment(
  hostEnv: NodeJS.ProcessEnv,
  callerEnv: Record<string, string> | undefined,
  markerVars: Record<string, string>,
): Record<string, string> {
  const env = new Map<string, string>();
  for (const [name, value] of Object.entries(hostEnv)) {
    if (value !== undefined && !isCredentialName(name)) env.set(name, value);
  }
  for (const layer of [callerEnv ?? {}, FIXED_SHELL_VARIABLES, markerVars]) {
    for (const [name, value] of Object.entries(layer)) {
      if (value !== undefined) env.set(name, value);
    }
  }
  return Object.fromEntries(env);
}
