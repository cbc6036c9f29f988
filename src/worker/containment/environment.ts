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
  /** What the rule looks at: the upper-cased name, or the value exactly as it is. */
  readonly on: 'name' | 'value';
  /** Whether the name or value is a credential. Runs in linear time on any input (see below). */
  readonly matches: (target: string) => boolean;
  /** Why a variable this rule matches is a credential, with examples. */
  readonly why: string;
}

/** A rule's `matches` from a pattern that matches anywhere in its target unless anchored. */
function pattern(regex: RegExp): (target: string) => boolean {
  return (target) => regex.test(target);
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
 * character it excludes (or, in `basic-credential`'s lookahead, only ever runs once after its literal),
 * so a failed attempt costs one scan of its run, never one per position. URL userinfo is parsed by
 * hand ({@link urlUserinfo}), since a password may hold the characters that end a URL's authority.
 */
export const CREDENTIAL_RULES: readonly CredentialRule[] = [
  {
    id: 'private-prefix',
    on: 'name',
    matches: pattern(new RegExp(`^${PRIVATE_ENV_PREFIX}`)),
    why: "the engine's own variables: a nested engine must not read the outer one's",
  },
  {
    id: 'KEY',
    on: 'name',
    matches: pattern(/KEY/),
    why: 'API, access and signing keys (OPENAI_API_KEY, SSH_PRIVKEY)',
  },
  {
    id: 'SECRET',
    on: 'name',
    matches: pattern(/SECRET/),
    why: 'client and signing secrets (AWS_SECRET_ACCESS_KEY)',
  },
  {
    id: 'TOKEN',
    on: 'name',
    matches: pattern(/TOKEN/),
    why: 'access and session tokens (GITHUB_TOKEN, AWS_SESSION_TOKEN)',
  },
  {
    id: 'PASS',
    on: 'name',
    matches: pattern(/PASS/),
    why: 'PASSWORD, PASSWD, PASSPHRASE, SMTP_PASS, PGPASSFILE, and GIT_ASKPASS helpers that hand out passwords',
  },
  {
    id: 'PWD',
    on: 'name',
    matches: pattern(/^(?!(?:OLD)?PWD$).*PWD/s),
    why: "MySQL-style MYSQL_PWD; the shell's own PWD and OLDPWD are working directories and kept",
  },
  {
    id: 'PW',
    on: 'name',
    matches: pattern(/(?<![A-Z])PW(?![A-Z])/),
    why: 'PW as a word, delimited by anything but a letter (DB_PW, PW, PW_FILE), not inside one (NPWORKERS)',
  },
  {
    id: 'CREDENTIAL',
    on: 'name',
    matches: pattern(/CREDENTIAL/),
    why: 'credential files and blobs (GOOGLE_APPLICATION_CREDENTIALS)',
  },
  {
    id: 'CREDS',
    on: 'name',
    matches: pattern(/CREDS|(?<![A-Z])CRED(?![A-Z])/),
    why: 'the short spelling: CREDS anywhere (AWS_CREDS), CRED as a word (DB_CRED); not INCREDIBLE',
  },
  {
    id: 'AUTH',
    on: 'name',
    matches: pattern(/AUTH(?!OR(?!I[SZ]))/),
    why: 'SSH_AUTH_SOCK, NPM_CONFIG__AUTH, HTTP_AUTHORIZATION; not AUTHOR/AUTHORITY (GIT_AUTHOR_NAME, XAUTHORITY)',
  },
  {
    id: 'BEARER',
    on: 'name',
    matches: pattern(/BEARER/),
    why: 'bearer tokens under their scheme name (BEARER, API_BEARER)',
  },
  {
    id: 'COOKIE',
    on: 'name',
    matches: pattern(/COOKIE/),
    why: 'session cookies and cookie jars (SESSION_COOKIE)',
  },
  {
    id: 'PRIVATE',
    on: 'name',
    matches: pattern(/PRIVATE/),
    why: 'private material by declaration (PRIVATE_REGISTRY, GPG_PRIVATE)',
  },
  {
    id: 'PEM',
    on: 'name',
    matches: pattern(/PEM/),
    why: 'PEM-encoded keys and client certificates (SSL_PEM, TLS_CLIENT_PEM)',
  },
  {
    id: 'DSN',
    on: 'name',
    matches: pattern(/DSN/),
    why: 'connection strings that embed a password or a write key (SENTRY_DSN)',
  },
  {
    id: 'url-password',
    on: 'value',
    matches: (value) => urlUserinfo(value, (userinfo) => userinfo.password !== undefined),
    why:
      'a URL carrying user:password@ (postgres://u:pass@h/db, redis://:pw@h, proxy URLs), also when the ' +
      'password holds a raw `/`, `#` or `?` (postgres://admin:ab/cd@h/db)',
  },
  {
    id: 'pem-block',
    on: 'value',
    matches: pattern(/-----BEGIN [A-Z]/),
    why: 'a PEM block: private keys, certificates',
  },
  {
    id: 'jwt',
    on: 'value',
    matches: pattern(/(?<![\w-])eyJ[\w-]+\.[\w-]+\.[\w-]*/),
    why: 'a JSON Web Token: three base64url parts, the header starting eyJ (`{"`)',
  },
  {
    id: 'sk-key',
    on: 'value',
    matches: pattern(/(?<![\w-])sk-(?=[A-Za-z_-]*\d)[\w-]{32,}/),
    why: 'OpenAI and Anthropic keys (sk-…, sk-proj-…, sk-ant-…): 32+ characters with a digit, unlike kebab-case names',
  },
  {
    id: 'github-token',
    on: 'value',
    matches: pattern(/(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,})/),
    why: 'GitHub tokens: ghp_/gho_/ghu_/ghs_/ghr_ and fine-grained github_pat_',
  },
  {
    id: 'gitlab-token',
    on: 'value',
    matches: pattern(/(?<![\w-])glpat-[\w-]{20,}/),
    why: 'GitLab personal access tokens (glpat-)',
  },
  {
    id: 'slack-token',
    on: 'value',
    matches: pattern(/(?<![\w-])xox[abeprs]-[A-Za-z0-9-]{10,}/),
    why: 'Slack tokens: xoxb- (bot), xoxp- (user), xoxa-, xoxe-, xoxr-, xoxs-',
  },
  {
    id: 'aws-access-key-id',
    on: 'value',
    matches: pattern(/(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])/),
    why: 'AWS access key ids (AKIA long-term, ASIA temporary): the secret key usually sits next to them',
  },
  {
    id: 'google-api-key',
    on: 'value',
    matches: pattern(/(?<![\w-])AIza[\w-]{35}/),
    why: 'Google API keys (AIza + 35 characters)',
  },
  {
    id: 'npm-token',
    on: 'value',
    matches: pattern(/(?<![\w-])npm_[A-Za-z0-9]{36}/),
    why: 'npm access tokens (npm_ + 36 characters)',
  },
  {
    id: 'stripe-key',
    on: 'value',
    matches: pattern(/(?<![\w-])[rs]k_(?:live|test)_[A-Za-z0-9]{20,}/),
    why: 'Stripe secret and restricted keys (sk_live_, rk_live_, and their _test_ twins)',
  },
  {
    id: 'huggingface-token',
    on: 'value',
    matches: pattern(/(?<![\w-])hf_[A-Za-z0-9]{30,}/),
    why: 'Hugging Face access tokens (hf_ + 30+ characters)',
  },
  {
    id: 'bearer-value',
    on: 'value',
    matches: pattern(/(?<![\w-])[Bb]earer +[\w.~+/-]{20,}/),
    why: 'an HTTP bearer credential written out (`Authorization: Bearer …`) in a header variable',
  },
  {
    id: 'url-token-user',
    on: 'value',
    matches: (value) =>
      urlUserinfo(value, (userinfo) => userinfo.password === undefined && isTokenLike(userinfo.user)),
    why: "a token as the URL's user, no password (https://<40 hex>@github.com/o/r.git): git and curl send it as a credential",
  },
  {
    id: 'url-credential-param',
    on: 'value',
    matches: pattern(
      /[?&](?:access_token|refresh_token|id_token|token|api_key|apikey|key|client_secret|secret|sig|signature|x-amz-signature|x-amz-security-token|x-goog-signature|password|passwd|pwd|auth)=[^&#\s]/i,
    ),
    why: 'a query string that carries a credential (?api_key=…, &token=…, Azure SAS &sig=…, presigned S3 X-Amz-Signature=…)',
  },
  {
    id: 'webhook-url',
    on: 'value',
    matches: pattern(
      /hooks\.slack\.com\/(?:services|workflows|triggers)\/\S|discord(?:app)?\.com\/api\/webhooks\/\S|\.webhook\.office\.com\/webhookb2\/\S/,
    ),
    why: 'a webhook URL whose path is the secret (Slack hooks.slack.com/services/…, Discord /api/webhooks/…, Teams webhookb2)',
  },
  {
    id: 'connection-string-secret',
    on: 'value',
    matches: pattern(
      /(?<![\w-])(?:AccountKey|SharedAccessKey|SharedAccessSignature|Password|Pwd)\s*=\s*[^;\s]/i,
    ),
    why: 'a `key=value;` connection string with a secret part (Azure AccountKey=, SharedAccessKey=, ADO/ODBC Password=, Pwd=)',
  },
  {
    id: 'authorization-header',
    on: 'value',
    matches: pattern(/(?<![\w-])(?:Proxy-)?Authorization\s*:\s*\S/i),
    why: 'an HTTP Authorization or Proxy-Authorization header written out, whatever its scheme',
  },
  {
    id: 'basic-credential',
    on: 'value',
    // base64 of user:password: 8+ characters of its alphabet with an upper-case letter after the first
    // or a digit/+//=, which keeps prose (`Basic configuration`) out.
    matches: pattern(
      /(?<![\w-])Basic +(?=[A-Za-z0-9+/]*[0-9+/=]|[A-Za-z0-9+/][a-z0-9+/]*[A-Z])[A-Za-z0-9+/]{8,}/,
    ),
    why: 'an HTTP Basic credential (`Basic dXNlcjpwYXNz`): base64 of user:password',
  },
];

/** The userinfo of one URL authority: the user, and the password when a `:` follows it. */
interface Userinfo {
  user: string;
  password: string | undefined;
}

/** Ends a URL's user part: what may not appear in a user name before its `:` or `@`. */
const USER_END = new Set(['/', '?', '#', '@', ':']);

/**
 * Whether some `scheme://user[:password]@` in `value` satisfies `test`. Parsed by hand, not by `URL`:
 * a password holding a raw `/`, `#` or `?` (`postgres://admin:ab/cd@h/db`) ends the authority for a
 * WHATWG parser, which then sees no userinfo at all. The user part runs from `://` to the first of
 * `/?#@:`; after a `:`, the password runs to the next `@` within the same whitespace-free run, unless
 * what follows the `:` is a port (digits then `/`, `?` or `#`: `http://h:3000/?e=a@b` has no
 * password). Linear time: each user part is scanned once (the next `://` lies past its end, since
 * `:` ends it), and the next `@` and the next whitespace are found from tables built in one pass.
 */
function urlUserinfo(value: string, test: (userinfo: Userinfo) => boolean): boolean {
  if (!value.includes('://')) return false;
  const nextAt = nextIndexTable(value, (char) => char === '@');
  const nextSpace = nextIndexTable(value, (char) => /\s/.test(char));
  for (let found = value.indexOf('://'); found !== -1; found = value.indexOf('://', found + 3)) {
    const start = found + 3;
    let end = start;
    while (end < value.length && !USER_END.has(value[end]!) && !/\s/.test(value[end]!)) end++;
    const user = value.slice(start, end);
    if (value[end] === '@') {
      if (test({ user, password: undefined })) return true;
      continue;
    }
    if (value[end] !== ':') continue;
    const at = nextAt[end + 1] ?? value.length;
    if (at >= (nextSpace[end + 1] ?? value.length) || at === end + 1) continue; // no @ in this run, or empty
    const password = value.slice(end + 1, at);
    if (/^\d*[/?#]/.test(password)) continue; // host:port/path, then an @ later on
    if (test({ user, password })) return true;
  }
  return false;
}

/** For each index, the first index at or after it whose character satisfies `is` (`undefined`: none). */
function nextIndexTable(value: string, is: (char: string) => boolean): Array<number | undefined> {
  const table = new Array<number | undefined>(value.length + 1);
  let next: number | undefined;
  for (let index = value.length - 1; index >= 0; index--) {
    if (is(value[index]!)) next = index;
    table[index] = next;
  }
  return table;
}

/** A user name that is a token: 20+ characters of `[A-Za-z0-9_-]`, letters and digits both. */
function isTokenLike(user: string): boolean {
  return user.length >= 20 && /^[\w-]+$/.test(user) && /\d/.test(user) && /[A-Za-z]/.test(user);
}

/**
 * The terminal type sessions announce (README, "Output"): xterm with 256 colours, which is what the
 * session's screen model (@xterm/headless) emulates. Full-screen programs need cursor addressing and
 * the alternate screen to render (`vim`, `nano`, `top`, `htop`; `less` warns "terminal is not fully
 * functional" on `dumb`), and readline and zsh redraw long lines with cursor moves, which the output
 * model resolves. Colours are asked off with {@link FIXED_SHELL_VARIABLES}' `NO_COLOR`; what a program
 * prints anyway is removed by the terminal model, so the text read is colourless either way.
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
  return CREDENTIAL_RULES.find((rule) => rule.matches(rule.on === 'name' ? upperName : value));
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
