import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildShellEnvironment,
  FIXED_SHELL_VARIABLES,
  isCredentialName,
  PRIVATE_ENV_PREFIX,
} from '../src/worker/environment.js';

/** Names a shell or its tools need; dropping any of them breaks sessions. */
const KEPT = [
  'PATH',
  'HOME',
  'LANG',
  'LANGUAGE',
  'USER',
  'LOGNAME',
  'SHELL',
  'PWD',
  'OLDPWD',
  'LC_ALL',
  'LC_CTYPE',
  'LC_MESSAGES',
  'TERM',
  'COLORTERM',
  'TZ',
  'TMPDIR',
  'EDITOR',
  'DISPLAY',
  'XAUTHORITY',
  'XDG_RUNTIME_DIR',
  'XDG_CONFIG_HOME',
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_COMMITTER_NAME',
  'HOSTNAME',
  'NODE_OPTIONS',
  'PYTHONPATH',
  'CLASSPATH',
  'JAVA_HOME',
  'GOPATH',
  'VIRTUAL_ENV',
  'SSH_CONNECTION',
  'DBUS_SESSION_BUS_ADDRESS',
  'LS_COLORS',
  'SHLVL',
];

/** Credential-shaped names, including glued and lower-case spellings. */
const DROPPED = [
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'SENDGRID_APIKEY',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'NPM_TOKEN',
  'DB_PASSWORD',
  'PGPASSWORD',
  'PGPASSFILE',
  'SMTP_PASS',
  'MYSQL_PWD',
  'LDAP_PASSWD',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'NPM_CONFIG__AUTH',
  'SSH_AUTH_SOCK',
  'OAUTH_CLIENT_ID',
  'HTTP_AUTHORIZATION',
  'DJANGO_SECRET_KEY',
  'SSH_PRIVKEY',
  'github_token',
  'openai_api_key',
  `${PRIVATE_ENV_PREFIX}NONCE`,
  'agent_pty_nonce',
];

/** Harmless names dropped on purpose: the broad match costs them, a narrow one would leak secrets. */
const DELIBERATELY_DROPPED = ['KEYBOARD', 'MONKEY', 'KEYTIMEOUT', 'TOKENIZERS_PARALLELISM', 'BYPASS_CACHE'];

describe('isCredentialName', () => {
  it.each(KEPT)('keeps %s', (name) => {
    expect(isCredentialName(name)).toBe(false);
  });

  it.each(DROPPED)('drops %s', (name) => {
    expect(isCredentialName(name)).toBe(true);
  });

  it.each(DELIBERATELY_DROPPED)('over-matches %s (accepted false positive)', (name) => {
    expect(isCredentialName(name)).toBe(true);
  });

  it('drops any name that contains a credential word, in any case, with any affixes', () => {
    const affix = fc.stringMatching(/^[A-Za-z0-9_]{0,12}$/);
    const word = fc.constantFrom('key', 'secret', 'token', 'password', 'passwd', 'credential');
    fc.assert(
      fc.property(affix, word, affix, fc.boolean(), (before, credential, after, upper) => {
        const name = `${before}${upper ? credential.toUpperCase() : credential}${after}`;
        expect(isCredentialName(name)).toBe(true);
      }),
    );
  });

  it('drops AUTH with any affixes unless it spells AUTHOR/AUTHORITY', () => {
    const affix = fc.stringMatching(/^[A-Z0-9_]{0,12}$/);
    fc.assert(
      fc.property(
        affix,
        affix.filter((after) => !after.startsWith('OR')),
        (before, after) => {
          expect(isCredentialName(`${before}AUTH${after}`)).toBe(true);
        },
      ),
    );
  });
});

describe('buildShellEnvironment', () => {
  const marker = { PROMPT_COMMAND: '__agent_pty_mark', PS1: '$ ' };

  it('drops credential-shaped host variables and keeps the rest', () => {
    const env = buildShellEnvironment(
      { PATH: '/usr/bin', HOME: '/home/u', OPENAI_API_KEY: 'sk-x', GITHUB_TOKEN: 'ghp', LANG: 'C.UTF-8' },
      undefined,
      {},
    );
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/home/u', LANG: 'C.UTF-8', ...FIXED_SHELL_VARIABLES });
  });

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
    const env = buildShellEnvironment({ GITHUB_TOKEN: 'host' }, { GITHUB_TOKEN: 'caller' }, {});
    expect(env.GITHUB_TOKEN).toBe('caller');
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

  it('never lets a credential-shaped host name through', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,15}$/), fc.string()), (host) => {
        const env = buildShellEnvironment(host, undefined, {});
        for (const name of Object.keys(env)) {
          if (!(name in FIXED_SHELL_VARIABLES)) expect(isCredentialName(name)).toBe(false);
        }
      }),
    );
  });
});
