import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildShellEnvironment,
  CREDENTIAL_RULES,
  credentialRuleFor,
  FIXED_SHELL_VARIABLES,
  PRIVATE_ENV_PREFIX,
} from '../../../../src/worker/containment/environment.js';

/** How the scrubber must judge one host variable: dropped by the rule with this id, or kept. */
type Verdict = { dropped: string } | { kept: string };

/** One host variable and its verdict. Names are unique so the whole table can be one host env. */
interface Row {
  readonly name: string;
  readonly value: string;
  readonly verdict: Verdict;
}

/** A fake token: `prefix` plus `length` characters cycling through `alphabet` (no real key). */
function fake(prefix: string, length: number, alphabet = 'aB3dE5gH7jK9mN1pQ2'): string {
  let tail = '';
  for (let i = 0; i < length; i += 1) tail += alphabet[i % alphabet.length];
  return `${prefix}${tail}`;
}

const drop = (rule: string): Verdict => ({ dropped: rule });
const keep = (why: string): Verdict => ({ kept: why });
const JWT = `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${fake('', 43)}`;
const LS_COLORS =
  'rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01:cd=40;33;01:or=40;31;01:' +
  'mi=00:su=37;41:sg=30;43:ca=00:tw=30;42:ow=34;42:st=37;44:ex=01;32:*.tar=01;31:*.tgz=01;31:*.pem=00;33';

/**
 * THE table (SPEC §4.1: names and values kept and dropped are unit-tested from one table): every SPEC
 * word, every value shape, the accepted over-matches and the exemptions that keep a shell working.
 */
const TABLE: readonly Row[] = [
  // Dropped by name: every SPEC word, in any case, glued or delimited.
  { name: 'OPENAI_API_KEY', value: 'x', verdict: drop('KEY') },
  { name: 'SENDGRID_APIKEY', value: 'x', verdict: drop('KEY') },
  { name: 'AWS_ACCESS_KEY_ID', value: 'x', verdict: drop('KEY') },
  { name: 'SSH_PRIVKEY', value: 'x', verdict: drop('KEY') },
  { name: 'openai_api_key', value: 'x', verdict: drop('KEY') },
  { name: 'CLIENT_SECRET', value: 'x', verdict: drop('SECRET') },
  { name: 'GITHUB_TOKEN', value: 'x', verdict: drop('TOKEN') },
  { name: 'AWS_SESSION_TOKEN', value: 'x', verdict: drop('TOKEN') },
  { name: 'github_token', value: 'x', verdict: drop('TOKEN') },
  { name: 'DB_PASSWORD', value: 'x', verdict: drop('PASS') },
  { name: 'PGPASSWORD', value: 'x', verdict: drop('PASS') },
  { name: 'LDAP_PASSWD', value: 'x', verdict: drop('PASS') },
  { name: 'SMTP_PASS', value: 'x', verdict: drop('PASS') },
  { name: 'PGPASSFILE', value: 'x', verdict: drop('PASS') },
  { name: 'GIT_ASKPASS', value: 'x', verdict: drop('PASS') },
  { name: 'MYSQL_PWD', value: 'x', verdict: drop('PWD') },
  { name: 'mysql_pwd', value: 'x', verdict: drop('PWD') },
  { name: 'PWD_FILE', value: 'x', verdict: drop('PWD') },
  { name: 'DB_PW', value: 'x', verdict: drop('PW') },
  { name: 'PW', value: 'x', verdict: drop('PW') },
  { name: 'PW_FILE', value: 'x', verdict: drop('PW') },
  { name: 'redis_pw', value: 'x', verdict: drop('PW') },
  { name: 'DB_PW2', value: 'x', verdict: drop('PW') },
  { name: 'GOOGLE_APPLICATION_CREDENTIALS', value: 'x', verdict: drop('CREDENTIAL') },
  { name: 'AWS_CREDS', value: 'x', verdict: drop('CREDS') },
  { name: 'CREDSTORE', value: 'x', verdict: drop('CREDS') },
  { name: 'DB_CRED', value: 'x', verdict: drop('CREDS') },
  { name: 'SSH_AUTH_SOCK', value: 'x', verdict: drop('AUTH') },
  { name: 'NPM_CONFIG__AUTH', value: 'x', verdict: drop('AUTH') },
  { name: 'OAUTH_CLIENT_ID', value: 'x', verdict: drop('AUTH') },
  { name: 'HTTP_AUTHORIZATION', value: 'x', verdict: drop('AUTH') },
  { name: 'AUTHORISED_USER', value: 'x', verdict: drop('AUTH') },
  { name: 'BEARER', value: 'x', verdict: drop('BEARER') },
  { name: 'api_bearer', value: 'x', verdict: drop('BEARER') },
  { name: 'SESSION_COOKIE', value: 'x', verdict: drop('COOKIE') },
  { name: 'PRIVATE_REGISTRY', value: 'x', verdict: drop('PRIVATE') },
  { name: 'SSL_PEM', value: 'x', verdict: drop('PEM') },
  { name: 'SENTRY_DSN', value: 'x', verdict: drop('DSN') },
  { name: `${PRIVATE_ENV_PREFIX}NONCE`, value: 'x', verdict: drop('private-prefix') },
  { name: 'agent_pty_state', value: 'x', verdict: drop('private-prefix') },
  // Over-matches we accept: a harmless setting lost costs less than a secret leaked.
  { name: 'KEYBOARD', value: 'us', verdict: drop('KEY') },
  { name: 'MONKEY', value: 'x', verdict: drop('KEY') },
  { name: 'TOKENIZERS_PARALLELISM', value: 'false', verdict: drop('TOKEN') },
  { name: 'BYPASS_CACHE', value: '1', verdict: drop('PASS') },

  // Dropped by value, under innocent names: every value shape.
  { name: 'DATABASE_URL', value: 'postgres://u:pass@h/db', verdict: drop('url-password') },
  { name: 'CACHE_URL', value: 'redis://:hunter2@cache:6379/0', verdict: drop('url-password') },
  { name: 'HTTPS_PROXY', value: 'http://alice:s3cret@proxy.corp:3128', verdict: drop('url-password') },
  { name: 'MONGO_URL', value: 'mongodb+srv://app:pw@cluster0.example.net/db', verdict: drop('url-password') },
  {
    name: 'TLS_BUNDLE',
    value: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----',
    verdict: drop('pem-block'),
  },
  {
    name: 'SSH_IDENTITY',
    value: '-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbg==\n',
    verdict: drop('pem-block'),
  },
  { name: 'LAST_LOGIN', value: JWT, verdict: drop('jwt') },
  { name: 'UNSIGNED_CLAIMS', value: 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.', verdict: drop('jwt') },
  { name: 'OPENAI', value: fake('sk-', 48), verdict: drop('sk-key') },
  { name: 'OPENAI_PROJECT', value: fake('sk-proj-', 120), verdict: drop('sk-key') },
  { name: 'ANTHROPIC', value: fake('sk-ant-api03-', 90), verdict: drop('sk-key') },
  { name: 'GH_CLASSIC', value: fake('ghp_', 36), verdict: drop('github-token') },
  { name: 'GH_APP', value: fake('gho_', 36), verdict: drop('github-token') },
  { name: 'GH_SERVER', value: fake('ghs_', 36), verdict: drop('github-token') },
  { name: 'GH_FINE', value: `${fake('github_pat_', 22)}_${fake('', 59)}`, verdict: drop('github-token') },
  { name: 'EXTRA_ARGS', value: `--verbose --with=${fake('ghp_', 36)} -q`, verdict: drop('github-token') },
  { name: 'GITLAB', value: fake('glpat-', 20), verdict: drop('gitlab-token') },
  { name: 'SLACK_BOT', value: 'xoxb-1234567890-0987654321-abcdefghijKLMNOP', verdict: drop('slack-token') },
  { name: 'SLACK_USER', value: 'xoxp-1234567890-0987654321', verdict: drop('slack-token') },
  { name: 'AWS_ID', value: 'AKIAIOSFODNN7EXAMPLE', verdict: drop('aws-access-key-id') },
  { name: 'AWS_TEMP_ID', value: fake('ASIA', 16, 'ABC123XYZ'), verdict: drop('aws-access-key-id') },
  { name: 'MAPS', value: fake('AIza', 35), verdict: drop('google-api-key') },
  { name: 'NPM_PUBLISH', value: fake('npm_', 36), verdict: drop('npm-token') },
  { name: 'STRIPE', value: fake('sk_live_', 24), verdict: drop('stripe-key') },
  { name: 'STRIPE_RESTRICTED', value: fake('rk_test_', 24), verdict: drop('stripe-key') },
  { name: 'HF', value: fake('hf_', 34), verdict: drop('huggingface-token') },
  {
    name: 'CURL_HEADERS',
    value: `-H "Authorization: Bearer ${fake('', 32)}"`,
    verdict: drop('bearer-value'),
  },

  // The shapes a value scrub must also find (issue 23, observation 2): a URL password holding a raw
  // `/`, `#` or `?`, a token as a URL's user, connection strings, Authorization/Basic values, webhook
  // URLs with the secret in the path, and credential parameters in a query string.
  { name: 'APP_DB', value: 'postgres://admin:ab/cd3fg@db.example.com/app', verdict: drop('url-password') },
  { name: 'LEGACY_DB', value: 'mysql://root:p#ss@db:3306/app', verdict: drop('url-password') },
  { name: 'QUEUE', value: 'amqp://guest:wh?t@rabbit:5672/', verdict: drop('url-password') },
  { name: 'PIN_ONLY', value: 'redis://:12345@cache/0', verdict: drop('url-password') },
  {
    name: 'CLONE_URL',
    value: 'https://a94a8fe5ccb19ba61c4c0873d391e987982fbbd3@github.com/o/r.git',
    verdict: drop('url-token-user'),
  },
  {
    name: 'AZURE_STORAGE',
    value: `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${fake('', 64)}==;EndpointSuffix=core.windows.net`,
    verdict: drop('connection-string-secret'),
  },
  {
    name: 'SERVICE_BUS',
    value: 'Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=abc123=',
    verdict: drop('connection-string-secret'),
  },
  {
    name: 'MSSQL',
    value: 'Server=db;Database=app;User Id=sa;Password=Str0ng!;',
    verdict: drop('connection-string-secret'),
  },
  {
    name: 'ODBC',
    value: 'Driver={ODBC};Server=x;Uid=u;Pwd=hunter2;',
    verdict: drop('connection-string-secret'),
  },
  { name: 'HEADER', value: 'Authorization: token abcdef', verdict: drop('authorization-header') },
  { name: 'PROXY_HEADER', value: 'Proxy-Authorization: Digest x', verdict: drop('authorization-header') },
  { name: 'BASIC', value: 'Basic dXNlcjpwYXNz', verdict: drop('basic-credential') },
  { name: 'BASIC_PADDED', value: 'Basic YWxhZGRpbjpvcGVuc2VzYW1l', verdict: drop('basic-credential') },
  {
    name: 'ALERTS',
    value: 'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX',
    verdict: drop('webhook-url'),
  },
  {
    name: 'CHAT_HOOK',
    value: 'https://discord.com/api/webhooks/123456789012345678/abcDEF-ghi',
    verdict: drop('webhook-url'),
  },
  {
    name: 'FEED',
    value: 'https://api.example.com/v1/data?api_key=abc123def456',
    verdict: drop('url-credential-param'),
  },
  {
    name: 'FEED2',
    value: 'https://example.com/x?page=2&token=abcd1234',
    verdict: drop('url-credential-param'),
  },
  {
    name: 'BLOB',
    value: 'https://acct.blob.core.windows.net/c/b?sv=2020-08-04&sig=abc%2Fdef',
    verdict: drop('url-credential-param'),
  },
  {
    name: 'PRESIGNED',
    value: 'https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=abcdef',
    verdict: drop('url-credential-param'),
  },
  { name: 'MAPS_URL', value: 'https://maps.example.com/api?KEY=abc', verdict: drop('url-credential-param') },

  // Kept: names a shell and its tools need, including exemptions from the words above.
  { name: 'PATH', value: '/usr/local/bin:/usr/bin:/bin', verdict: keep('the command search path') },
  { name: 'HOME', value: '/home/u', verdict: keep('the home directory') },
  { name: 'LANG', value: 'C.UTF-8', verdict: keep('the locale') },
  { name: 'LC_ALL', value: 'C.UTF-8', verdict: keep('the locale') },
  {
    name: 'TERM',
    value: 'xterm-256color',
    verdict: keep('passes the scrubber; the fixed TERM overrides it later'),
  },
  { name: 'PWD', value: '/home/u/project', verdict: keep("the shell's working directory (PWD exemption)") },
  { name: 'OLDPWD', value: '/home/u', verdict: keep("the shell's previous directory (PWD exemption)") },
  { name: 'GIT_AUTHOR_NAME', value: 'A. Author', verdict: keep('AUTHOR is not AUTH') },
  { name: 'GIT_AUTHOR_EMAIL', value: 'a@example.com', verdict: keep('AUTHOR is not AUTH') },
  { name: 'XAUTHORITY', value: '/home/u/.Xauthority', verdict: keep('AUTHORITY is not AUTH') },
  { name: 'NPWORKERS', value: '4', verdict: keep('PW inside a word is not the word PW') },
  { name: 'INCREDIBLE_MODE', value: '1', verdict: keep('CRED inside a word is not the word CRED') },
  { name: 'LS_COLORS', value: LS_COLORS, verdict: keep('colours, with `:` and `=` everywhere') },
  { name: 'USER', value: 'u', verdict: keep('the user name') },
  { name: 'SHELL', value: '/bin/bash', verdict: keep('the login shell') },
  { name: 'DISPLAY', value: ':0', verdict: keep('the X display') },
  { name: 'SSH_CONNECTION', value: '10.0.0.1 50000 10.0.0.2 22', verdict: keep('addresses, no secret') },
  { name: 'DBUS_SESSION_BUS_ADDRESS', value: 'unix:path=/run/user/1000/bus', verdict: keep('a socket path') },
  { name: 'NODE_OPTIONS', value: '--max-old-space-size=4096', verdict: keep('runtime flags') },
  { name: 'XDG_RUNTIME_DIR', value: '/run/user/1000', verdict: keep('a directory') },
  { name: 'SHLVL', value: '1', verdict: keep('a counter') },
  // Kept: values that resemble a shape but carry no secret.
  { name: 'HOMEPAGE', value: 'http://example.com/x', verdict: keep('a URL without credentials') },
  { name: 'MIRROR', value: 'https://user@host/', verdict: keep('a URL with a user but no password') },
  {
    name: 'BLANK_USERINFO_URL',
    value: 'https://user:@host/',
    verdict: keep('an empty password is no secret'),
  },
  {
    name: 'GIT_REMOTE',
    value: 'ssh://git@github.com:22/owner/repo.git',
    verdict: keep('user and port, no password'),
  },
  { name: 'LOCAL_API', value: 'http://[::1]:8080/v1', verdict: keep('colons of an IPv6 host and port') },
  { name: 'NEXT_URL', value: 'https://example.com/login?next=a:b@c', verdict: keep('`:…@` in the query') },
  {
    name: 'PROJECT_DIR',
    value: '/srv/sk-learn-experiments-and-notebooks',
    verdict: keep('kebab-case, no digit'),
  },
  { name: 'SHORT_SK', value: 'sk-test', verdict: keep('too short for a key') },
  { name: 'DESKTOP_DIR', value: fake('/home/u/desk-', 40), verdict: keep('sk- glued into a word') },
  { name: 'XOXO', value: 'xoxo-gossip-girl-fan-club', verdict: keep('xoxo is no Slack token type') },
  { name: 'COMMIT', value: 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3', verdict: keep('a hex digest') },
  { name: 'RUN_ID', value: '123e4567-e89b-12d3-a456-426614174000', verdict: keep('a UUID') },
  { name: 'GREETING_B64', value: 'SGVsbG8sIHdvcmxkIQ==', verdict: keep('short base64 data') },
  { name: 'SHAPE_NAME', value: 'AKIA', verdict: keep('an access key id prefix alone') },
  { name: 'PLAIN_TEXT', value: 'the bearer of good news', verdict: keep('bearer as a word of prose') },
  {
    name: 'SEARCH',
    value: 'https://example.com/search?q=key&sort=token',
    verdict: keep('credential words as values'),
  },
  {
    name: 'ANIMAL_PARAMS',
    value: 'https://example.com/?monkey=1&keyboard=us',
    verdict: keep('param names that only contain key'),
  },
  { name: 'DOCS', value: 'https://example.com/docs#key=value', verdict: keep('a fragment is no query') },
  {
    name: 'TRUSTED_DB',
    value: 'Server=db;Database=app;Trusted_Connection=True;',
    verdict: keep('no secret part'),
  },
  { name: 'DB_BLANK_CONN', value: 'Server=db;Password=;', verdict: keep('an empty password is no secret') },
  { name: 'MOTTO', value: 'Basic configuration of the build', verdict: keep('Basic as a word of prose') },
  {
    name: 'BUILD_HOOK',
    value: 'https://hooks.example.com/services/build',
    verdict: keep('not a webhook host'),
  },
  {
    name: 'SSH_REMOTE',
    value: 'git@github.com:owner/repo.git',
    verdict: keep('scp-style remote: no scheme'),
  },
  { name: 'HTTPS_REMOTE', value: 'https://github.com/owner/repo.git', verdict: keep('no userinfo') },
  { name: 'PATH_WITH_AT', value: 'https://example.com/path/a:b@c', verdict: keep('`:…@` in the path') },
  {
    name: 'INVITE',
    value: 'http://localhost:3000/invite?email=a@b.example',
    verdict: keep('a port, then an @ in the query'),
  },
  { name: 'FILE_URL', value: 'file:///home/u/a:b@c', verdict: keep('no authority at all') },
  {
    name: 'SHORT_USER',
    value: 'https://deploy@example.com/',
    verdict: keep('a short user name is no token'),
  },
  { name: 'AUTHOR_LINE', value: 'Authored-by: A. Author', verdict: keep('no Authorization header') },
];

describe('the credential table', () => {
  it.each(TABLE.map((row) => [row.name, row.value.slice(0, 40), row]))('%s=%s', (_name, _value, row) => {
    const rule = credentialRuleFor(row.name, row.value);
    if ('dropped' in row.verdict) expect(rule?.id).toBe(row.verdict.dropped);
    else expect(rule, `kept: ${row.verdict.kept}`).toBeUndefined();
  });

  it('tests every rule of the scrubber with at least one row', () => {
    const tested = new Set(TABLE.flatMap((row) => ('dropped' in row.verdict ? [row.verdict.dropped] : [])));
    expect(CREDENTIAL_RULES.map((rule) => rule.id).filter((id) => !tested.has(id))).toEqual([]);
  });

  it('has unique rule ids and a reason for every rule', () => {
    expect(new Set(CREDENTIAL_RULES.map((rule) => rule.id)).size).toBe(CREDENTIAL_RULES.length);
    for (const rule of CREDENTIAL_RULES) expect(rule.why.length, rule.id).toBeGreaterThan(10);
  });

  it('builds the shell environment from the table: exactly the kept rows pass', () => {
    const host = Object.fromEntries(TABLE.map((row) => [row.name, row.value]));
    const kept = TABLE.filter((row) => 'kept' in row.verdict).map((row) => [row.name, row.value]);
    expect(buildShellEnvironment(host, undefined, {})).toEqual({
      ...Object.fromEntries(kept),
      ...FIXED_SHELL_VARIABLES,
    });
  });

  it('lets the caller pass every dropped row on purpose', () => {
    const dropped = TABLE.filter((row) => 'dropped' in row.verdict);
    const explicit = Object.fromEntries(dropped.map((row) => [row.name, row.value]));
    const env = buildShellEnvironment(explicit, explicit, {});
    for (const row of dropped) expect(env[row.name], row.name).toBe(row.value);
  });
});

describe('credential names, as properties', () => {
  const affix = fc.stringMatching(/^[A-Za-z0-9_]{0,12}$/);

  it('drops any name that contains a substring word, in any case, with any affixes', () => {
    const words = ['key', 'secret', 'token', 'password', 'passwd', 'pass', 'credential', 'creds'].concat([
      'bearer',
      'cookie',
      'private',
      'pem',
      'dsn',
    ]);
    fc.assert(
      fc.property(affix, fc.constantFrom(...words), affix, fc.boolean(), (before, word, after, upper) => {
        const name = `${before}${upper ? word.toUpperCase() : word}${after}`;
        expect(credentialRuleFor(name, '')?.on).toBe('name');
      }),
    );
  });

  it('drops PW wherever no letter touches it', () => {
    const before = fc.stringMatching(/^(?:[A-Za-z0-9_]{0,8}[0-9_])?$/);
    const after = fc.stringMatching(/^(?:[0-9_][A-Za-z0-9_]{0,8})?$/);
    fc.assert(
      fc.property(before, after, (head, tail) => {
        expect(credentialRuleFor(`${head}pw${tail}`, '')?.on).toBe('name');
      }),
    );
  });

  it('drops AUTH with any affixes unless it spells AUTHOR/AUTHORITY', () => {
    const upperAffix = fc.stringMatching(/^[A-Z0-9_]{0,12}$/);
    fc.assert(
      fc.property(
        upperAffix,
        upperAffix.filter((after) => !after.startsWith('OR')),
        (before, after) => {
          expect(credentialRuleFor(`${before}AUTH${after}`, '')?.on).toBe('name');
        },
      ),
    );
  });
});

describe('credential values, as properties', () => {
  const valueRules = new Set(CREDENTIAL_RULES.filter((rule) => rule.on === 'value').map((rule) => rule.id));
  const droppedByValue = TABLE.filter(
    (row) => 'dropped' in row.verdict && valueRules.has(row.verdict.dropped),
  );

  it('finds every value shape inside arbitrary text, separated by whitespace', () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(...droppedByValue), fc.string(), (before, row, after) => {
        expect(credentialRuleFor('INNOCENT', `${before} ${row.value}\n${after}`)?.on).toBe('value');
      }),
    );
  });

  it('judges any host environment without throwing, and never lets a matching variable through', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.string({ unit: 'binary' })), (host) => {
        const env = buildShellEnvironment(host, undefined, {});
        for (const [name, value] of Object.entries(env)) {
          if (!(name in FIXED_SHELL_VARIABLES)) expect(credentialRuleFor(name, value)).toBeUndefined();
        }
      }),
    );
  });

  it('judges adversarial values up to 1 MB in linear time (no backtracking blow-up)', () => {
    // Each unit repeats a rule's prefix or separator without ever completing a match, so a pattern that
    // rescanned a run from every position would take ~size²/2 steps instead of ~size.
    const units = [
      'a',
      '-',
      '_',
      ':',
      '/',
      ' ',
      'sk-',
      'sk-a',
      'eyJ.',
      'eyJa',
      'a://',
      'a://:',
      'a://b:c',
      'a://b:c/',
      'a://:/',
      '?key',
      '&sig',
      'AccountKey',
      'Basic ',
      'Authorization',
      'hooks.slack.com/services',
      'AKIA',
    ].concat(['ghp_', 'xoxb-!', 'Bearer ', 'Bearer a', '-----BEGIN', 'PW', 'hf_', 'AIza!', 'npm_']);
    const judgeAll = (size: number) => {
      for (const unit of units) {
        const value = unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
        expect(credentialRuleFor('INNOCENT', value), unit).toBeUndefined();
        credentialRuleFor(value, ''); // the same text as a name: the name patterns must not blow up either
      }
    };
    // 64 KiB first, as a fast backstop: linear judging takes ~40 ms here, one quadratic pattern takes
    // seconds (and a quarter of an hour at 1 MiB). The bound is an order of magnitude, not a benchmark.
    const started = performance.now();
    judgeAll(1 << 16);
    expect(performance.now() - started).toBeLessThan(1_000);
    judgeAll(1 << 20);
  });
});

describe('buildShellEnvironment', () => {
  const marker = { PROMPT_COMMAND: '__agent_pty_mark', PS1: '$ ' };

  it('layers host < caller < fixed < marker', () => {
    const env = buildShellEnvironment(
      { PATH: '/host', TERM: 'xterm-256color', PAGER: 'less', PS1: 'host> ', EDITOR: 'vi' },
      { PATH: '/caller', TERM: 'vt100', PROMPT_COMMAND: 'caller', FOO: 'bar' },
      marker,
    );
    expect(env).toEqual({
      PATH: '/caller',
      TERM: 'xterm-256color',
      NO_COLOR: '1',
      PAGER: 'cat',
      GIT_PAGER: 'cat',
      PS1: '$ ',
      PROMPT_COMMAND: '__agent_pty_mark',
      EDITOR: 'vi',
      FOO: 'bar',
    });
  });

  it('lets the caller pass a credential on purpose, but never inherits one', () => {
    const env = buildShellEnvironment(
      { GITHUB_TOKEN: 'host', DATABASE_URL: 'postgres://u:host@h/db' },
      { GITHUB_TOKEN: 'caller', DATABASE_URL: 'postgres://u:caller@h/db' },
      {},
    );
    expect(env.GITHUB_TOKEN).toBe('caller');
    expect(env.DATABASE_URL).toBe('postgres://u:caller@h/db');
    expect(buildShellEnvironment({ GITHUB_TOKEN: 'host' }, { OTHER: 'x' }, {}).GITHUB_TOKEN).toBeUndefined();
  });

  it('never inherits the private prefix, so a nested engine cannot read the outer one', () => {
    const env = buildShellEnvironment({ [`${PRIVATE_ENV_PREFIX}NONCE`]: 'outer' }, undefined, {});
    expect(Object.keys(env).some((name) => name.startsWith(PRIVATE_ENV_PREFIX))).toBe(false);
  });

  it('drops undefined values from every layer', () => {
    const env = buildShellEnvironment(
      { PATH: '/usr/bin', UNSET: undefined },
      { LATER: undefined as unknown as string },
      { GONE: undefined as unknown as string },
    );
    expect(Object.keys(env).sort()).toEqual(['GIT_PAGER', 'NO_COLOR', 'PAGER', 'PATH', 'TERM']);
  });

  it('keeps a variable named __proto__ as an ordinary entry', () => {
    const env = buildShellEnvironment({ ['__proto__']: 'x' }, undefined, {});
    expect(Object.hasOwn(env, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(env, '__proto__')?.value).toBe('x');
    expect(Object.getPrototypeOf(env)).toBe(Object.prototype);
  });
});
