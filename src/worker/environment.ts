/**
 * The environment a session's shell starts with (SPEC §4.1): the host's environment minus every
 * variable that looks like a credential by name or by value, then the caller's explicit variables,
 * then the fixed terminal variables, then the dialect's marker variables. Later layers win.
 */

/** Engine-private env prefix; variables with it are never inherited from the host (nested engines). */
export const PRIVATE_ENV_PREFIX = 'AGENT_PTY_';

/** One reason a host variable is withheld from the shell. */
export interface CredentialRule {
  /** Stable label, named by the tests' table and the docs. */
  readonly id: string;
  /** What the pattern is tested against: the upper-cased name, or the value exactly as it is. */
  readonly on: 'name' | 'value';
  /** Matches anywhere in its target unless anchored. Every pattern runs in linear time (see below). */
  readonly pattern: RegExp;
  /** Why a variable matching the pattern is a credential, with examples. */
  readonly why: string;
}

/**
 * Every rule of the scrubber, names first. A host variable matching any of them is dropped.
 *
 * Names are upper-cased first, so the name patterns are written in capitals and apply in any case. A
 * name pattern matches anywhere in the name — deliberately broad: dropping a harmless variable costs a
 * tool its setting, leaking one costs a secret, and secrets hide in glued names (`APIKEY`, `PGPASSFILE`).
 * Known over-matches we accept: `KEYBOARD`, `MONKEY`, `TOKENIZERS_PARALLELISM`, `BYPASS_*`.
 *
 * Values are matched as they are, anywhere in the value (a token inside `-H "Authorization: ..."`
 * counts). A token shape starts at a token boundary (`(?<![\w-])`: a prefix glued to a longer word
 * is not a token) and needs a vendor prefix plus a long random tail, which keeps `PATH`, `LS_COLORS`
 * and ordinary URLs out. Linear time on any value (a host may hold megabytes): each pattern is
 * anchored, starts with a literal, or starts with a one-character lookbehind that lets a run of token
 * characters begin at most one attempt; and every repeated class ends the pattern or is followed by a
 * character it excludes, so a failed attempt costs one scan of its run, never one per position.
 */
export const CREDENTIAL_RULES: readonly CredentialRule[] = [
  {
    id: 'private-prefix',
    on: 'name',
    pattern: new RegExp(`^${PRIVATE_ENV_PREFIX}`),
    why: "the engine's own variables: a nested engine must not read the outer one's",
  },
  {
    id: 'KEY',
    on: 'name',
    pattern: /KEY/,
    why: 'API, access and signing keys (OPENAI_API_KEY, SSH_PRIVKEY)',
  },
  { id: 'SECRET', on: 'name', pattern: /SECRET/, why: 'client and signing secrets (AWS_SECRET_ACCESS_KEY)' },
  {
    id: 'TOKEN',
    on: 'name',
    pattern: /TOKEN/,
    why: 'access and session tokens (GITHUB_TOKEN, AWS_SESSION_TOKEN)',
  },
  {
    id: 'PASS',
    on: 'name',
    pattern: /PASS/,
    why: 'PASSWORD, PASSWD, PASSPHRASE, SMTP_PASS, PGPASSFILE, and GIT_ASKPASS helpers that hand out passwords',
  },
  {
    id: 'PWD',
    on: 'name',
    pattern: /^(?!(?:OLD)?PWD$).*PWD/s,
    why: "MySQL-style MYSQL_PWD; the shell's own PWD and OLDPWD are working directories and kept",
  },
  {
    id: 'PW',
    on: 'name',
    pattern: /(?<![A-Z])PW(?![A-Z])/,
    why: 'PW as a word, delimited by anything but a letter (DB_PW, PW, PW_FILE), not inside one (NPWORKERS)',
  },
  {
    id: 'CREDENTIAL',
    on: 'name',
    pattern: /CREDENTIAL/,
    why: 'credential files and blobs (GOOGLE_APPLICATION_CREDENTIALS)',
  },
  {
    id: 'CREDS',
    on: 'name',
    pattern: /CREDS|(?<![A-Z])CRED(?![A-Z])/,
    why: 'the short spelling: CREDS anywhere (AWS_CREDS), CRED as a word (DB_CRED); not INCREDIBLE',
  },
  {
    id: 'AUTH',
    on: 'name',
    pattern: /AUTH(?!OR(?!I[SZ]))/,
    why: 'SSH_AUTH_SOCK, NPM_CONFIG__AUTH, HTTP_AUTHORIZATION; not AUTHOR/AUTHORITY (GIT_AUTHOR_NAME, XAUTHORITY)',
  },
  {
    id: 'BEARER',
    on: 'name',
    pattern: /BEARER/,
    why: 'bearer tokens under their scheme name (BEARER, API_BEARER)',
  },
  { id: 'COOKIE', on: 'name', pattern: /COOKIE/, why: 'session cookies and cookie jars (SESSION_COOKIE)' },
  {
    id: 'PRIVATE',
    on: 'name',
    pattern: /PRIVATE/,
    why: 'private material by declaration (PRIVATE_REGISTRY, GPG_PRIVATE)',
  },
  {
    id: 'PEM',
    on: 'name',
    pattern: /PEM/,
    why: 'PEM-encoded keys and client certificates (SSL_PEM, TLS_CLIENT_PEM)',
  },
  {
    id: 'DSN',
    on: 'name',
    pattern: /DSN/,
    why: 'connection strings that embed a password or a write key (SENTRY_DSN)',
  },
  {
    id: 'url-password',
    on: 'value',
    pattern: /(?<![\w+.-])[A-Za-z][\w+.-]*:\/\/[^\s/?#@:]*:[^\s/?#@]+@/,
    why: 'a URL carrying user:password@ (postgres://u:pass@h/db, redis://:pw@h, proxy URLs)',
  },
  {
    id: 'pem-block',
    on: 'value',
    pattern: /-----BEGIN [A-Z]/,
    why: 'a PEM block: private keys, certificates',
  },
  {
    id: 'jwt',
    on: 'value',
    pattern: /(?<![\w-])eyJ[\w-]+\.[\w-]+\.[\w-]*/,
    why: 'a JSON Web Token: three base64url parts, the header starting eyJ (`{"`)',
  },
  {
    id: 'sk-key',
    on: 'value',
    pattern: /(?<![\w-])sk-(?=[A-Za-z_-]*\d)[\w-]{32,}/,
    why: 'OpenAI and Anthropic keys (sk-…, sk-proj-…, sk-ant-…): 32+ characters with a digit, unlike kebab-case names',
  },
  {
    id: 'github-token',
    on: 'value',
    pattern: /(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,})/,
    why: 'GitHub tokens: ghp_/gho_/ghu_/ghs_/ghr_ and fine-grained github_pat_',
  },
  {
    id: 'gitlab-token',
    on: 'value',
    pattern: /(?<![\w-])glpat-[\w-]{20,}/,
    why: 'GitLab personal access tokens (glpat-)',
  },
  {
    id: 'slack-token',
    on: 'value',
    pattern: /(?<![\w-])xox[abeprs]-[A-Za-z0-9-]{10,}/,
    why: 'Slack tokens: xoxb- (bot), xoxp- (user), xoxa-, xoxe-, xoxr-, xoxs-',
  },
  {
    id: 'aws-access-key-id',
    on: 'value',
    pattern: /(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])/,
    why: 'AWS access key ids (AKIA long-term, ASIA temporary): the secret key usually sits next to them',
  },
  {
    id: 'google-api-key',
    on: 'value',
    pattern: /(?<![\w-])AIza[\w-]{35}/,
    why: 'Google API keys (AIza + 35 characters)',
  },
  {
    id: 'npm-token',
    on: 'value',
    pattern: /(?<![\w-])npm_[A-Za-z0-9]{36}/,
    why: 'npm access tokens (npm_ + 36 characters)',
  },
  {
    id: 'stripe-key',
    on: 'value',
    pattern: /(?<![\w-])[rs]k_(?:live|test)_[A-Za-z0-9]{20,}/,
    why: 'Stripe secret and restricted keys (sk_live_, rk_live_, and their _test_ twins)',
  },
  {
    id: 'huggingface-token',
    on: 'value',
    pattern: /(?<![\w-])hf_[A-Za-z0-9]{30,}/,
    why: 'Hugging Face access tokens (hf_ + 30+ characters)',
  },
  {
    id: 'bearer-value',
    on: 'value',
    pattern: /(?<![\w-])[Bb]earer +[\w.~+/-]{20,}/,
    why: 'an HTTP bearer credential written out (`Authorization: Bearer …`) in a header variable',
  },
];

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

/** The first rule of {@link CREDENTIAL_RULES} that withholds host variable `name=value`, if any. */
export function credentialRuleFor(name: string, value: string): CredentialRule | undefined {
  const upperName = name.toUpperCase();
  return CREDENTIAL_RULES.find((rule) => rule.pattern.test(rule.on === 'name' ? upperName : value));
}

/**
 * The shell's environment: `hostEnv` minus every variable a {@link CREDENTIAL_RULES} rule matches,
 * then `callerEnv` (explicit, so a caller may pass a credential on purpose), then
 * {@link FIXED_SHELL_VARIABLES}, then `markerVars`. Undefined values are dropped. Built through a Map
 * so a name like `__proto__` stays an ordinary key.
 */
export function buildShellEnvironment(
  hostEnv: NodeJS.ProcessEnv,
  callerEnv: Record<string, string> | undefined,
  markerVars: Record<string, string>,
): Record<string, string> {
  const env = new Map<string, string>();
  for (const [name, value] of Object.entries(hostEnv)) {
    if (value !== undefined && credentialRuleFor(name, value) === undefined) env.set(name, value);
  }
  for (const layer of [callerEnv ?? {}, FIXED_SHELL_VARIABLES, markerVars]) {
    for (const [name, value] of Object.entries(layer)) {
      if (value !== undefined) env.set(name, value);
    }
  }
  return Object.fromEntries(env);
}
