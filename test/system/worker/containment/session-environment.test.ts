/**
 * The environment a real session starts with (SPEC §4.1), seen from inside the shell (`env`) and from
 * the host (`/proc/<pid>/environ`, the exact environment the pty child was exec'd with): credential-
 * shaped host variables are gone, the rest is kept, the caller's explicit `env` beats the host, and
 * the fixed terminal variables beat both. environment.test.ts unit-tests the name and value rules;
 * this file proves the engine applies them to the process it starts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type TerminalSession, testEngine } from '../../../support/engine.js';

/** A value no real environment holds, so finding it anywhere means a leak. */
const SECRET = 'agent-pty-test-secret-4f1d';

/** Host variables that must be dropped (credential-shaped names, any case, and the private prefix). */
const DROPPED: Record<string, string> = {
  OPENAI_API_KEY: `${SECRET}-openai`,
  GITHUB_TOKEN: `${SECRET}-github`,
  AWS_SECRET_ACCESS_KEY: `${SECRET}-aws`,
  DB_PASSWORD: `${SECRET}-db`,
  NPM_CONFIG__AUTH: `${SECRET}-npm`,
  my_service_passwd: `${SECRET}-lower`,
  GOOGLE_APPLICATION_CREDENTIALS: `${SECRET}-gcp`,
  AGENT_PTY_PRIVATE_STATE: `${SECRET}-private`,
};

/** Host variables that must pass through unchanged (PATH and HOME are taken from the real host). */
const KEPT: Record<string, string> = {
  LANG: 'C.UTF-8',
  PTY_TEST_HARMLESS: 'kept',
  GIT_AUTHOR_NAME: 'Test Author',
};

/** A GitHub-shaped token (ghp_ + 36 characters) that names no real account. */
const FAKE_GITHUB_TOKEN = `ghp_${'AgentPtyTest4f1d'.repeat(3).slice(0, 36)}`;

/**
 * Host variables the rest of SPEC §4.1 drops: name words beyond the obvious (`CREDS`, `PW` as a word,
 * `BEARER`, `PEM`) and secrets under innocent names, recognised by their value.
 */
const DROPPED_BY_SHAPE: Record<string, string> = {
  AWS_CREDS: `${SECRET}-creds`,
  DB_PW: `${SECRET}-pw`,
  BEARER: `${SECRET}-bearer`,
  SSL_PEM: `${SECRET}-pem`,
  DATABASE_URL: `postgres://u:${SECRET}@h/db`,
  PTY_TEST_BUILD_OPTS: `--verbose --with=${FAKE_GITHUB_TOKEN}`,
  // Shapes of issue 23, observation 2: they reached the shell before the scrub parsed URLs.
  PTY_TEST_APP_DB: `postgres://admin:${SECRET}/x@db.example.com/app`,
  PTY_TEST_AZURE: `DefaultEndpointsProtocol=https;AccountName=a;AccountKey=${SECRET}`,
  PTY_TEST_ALERTS: `https://hooks.slack.com/services/T0/B0/${SECRET}`,
  PTY_TEST_FEED: `https://api.example.com/v1?api_key=${SECRET}`,
  PTY_TEST_HEADER: 'Authorization: Basic YWdlbnQ6cHR5',
  PTY_TEST_CLONE: 'https://a94a8fe5ccb19ba61c4c0873d391e987982fbbd3@github.com/o/r.git',
};

/** Innocent host variables that resemble a credential rule and must pass unchanged. */
const KEPT_LOOKALIKES: Record<string, string> = {
  PTY_TEST_HOMEPAGE: 'http://example.com/x',
  PTY_TEST_MIRROR: 'https://user@host/',
  PTY_TEST_NPWORKERS: '4',
  PTY_TEST_SEARCH: 'https://example.com/search?q=key&sort=token',
  PTY_TEST_REMOTE: 'https://github.com/owner/repo.git',
};

/** Host values the fixed terminal variables must override. */
const OVERRIDDEN: Record<string, string> = { TERM: 'vt100', PAGER: 'less', GIT_PAGER: 'less -R' };

let saved: Map<string, string | undefined>;

beforeEach(() => {
  // Engine threads copy process.env when they start, so the host env is set before the engine exists.
  saved = new Map();
  const host = { ...DROPPED, ...DROPPED_BY_SHAPE, ...KEPT, ...KEPT_LOOKALIKES, ...OVERRIDDEN };
  for (const [name, value] of Object.entries(host)) {
    saved.set(name, process.env[name]);
    process.env[name] = value;
  }
});

afterEach(() => {
  for (const [name, value] of saved) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** The shell's exported variables, from `env` run inside the session (values with newlines excluded). */
async function shellEnv(session: TerminalSession): Promise<{ vars: Map<string, string>; text: string }> {
  const result = await session.startSend({ text: 'env' }).done;
  expect(result.waitReason).toBe('stdin_read');
  expect(result.exitCode).toBe(0);
  const vars = new Map<string, string>();
  for (const line of result.viewport.split('\n')) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match !== null) vars.set(match[1]!, match[2]!);
  }
  return { vars, text: result.viewport };
}

/** The environment the pty child was started with, read by the host from /proc. */
function execEnv(pid: number): Map<string, string> {
  const vars = new Map<string, string>();
  for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) vars.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  return vars;
}

describe.runIf(process.platform === 'linux')('session environment', () => {
  it('drops credential-shaped host variables; keeps PATH, HOME, LANG and harmless names; pins TERM and pagers', async () => {
    const engine = await testEngine();
    const session = await engine.spawn();
    const { vars, text } = await shellEnv(session);
    const started = execEnv(session.pid);
    for (const env of [vars, started]) {
      for (const name of Object.keys(DROPPED)) expect(env.has(name), name).toBe(false);
      expect(env.get('PATH')).toBe(process.env.PATH);
      expect(env.get('HOME')).toBe(process.env.HOME);
      for (const [name, value] of Object.entries(KEPT)) expect(env.get(name), name).toBe(value);
      expect(env.get('TERM')).toBe('xterm-256color');
      expect(env.get('PAGER')).toBe('cat');
      expect(env.get('GIT_PAGER')).toBe('cat');
    }
    expect(text).not.toContain(SECRET);
    expect(readFileSync(`/proc/${session.pid}/environ`, 'utf8')).not.toContain(SECRET);
    // Programs the shell starts inherit the scrubbed environment too (nothing is re-added later).
    const child = await session.startSend({ text: 'python3 -c "import os; print(sorted(os.environ))"' }).done;
    expect(child.exitCode).toBe(0);
    for (const name of Object.keys(DROPPED)) expect(child.viewport).not.toContain(`'${name}'`);
    expect(child.viewport).toContain("'PTY_TEST_HARMLESS'");
    await session.close();
  });

  it('drops CREDS, PW, BEARER and PEM names and secrets recognised by value; keeps the look-alikes', async () => {
    const engine = await testEngine();
    const session = await engine.spawn();
    // Counted inside the shell, so the typed names and the echoed command never reach the assertion.
    const dropped = Object.keys(DROPPED_BY_SHAPE).join('|');
    const leaked = await session.startSend({
      text: `echo leaked-$(env | grep -c -E '^(${dropped})=')-$(env | grep -c -e ${SECRET} -e ghp_)`,
    }).done;
    expect(leaked.viewport.split('\n')).toContain('leaked-0-0');
    const kept = Object.keys({ ...KEPT_LOOKALIKES, ...KEPT }).join('|');
    const visible = await session.startSend({ text: `echo kept-$(env | grep -c -E '^(${kept})=')` }).done;
    const keptCount = Object.keys({ ...KEPT_LOOKALIKES, ...KEPT }).length;
    expect(visible.viewport.split('\n')).toContain(`kept-${keptCount}`);
    const started = execEnv(session.pid);
    for (const name of Object.keys(DROPPED_BY_SHAPE)) expect(started.has(name), name).toBe(false);
    for (const [name, value] of Object.entries(KEPT_LOOKALIKES)) expect(started.get(name), name).toBe(value);
    expect(readFileSync(`/proc/${session.pid}/environ`, 'utf8')).not.toContain(FAKE_GITHUB_TOKEN);
    await session.close();
  });

  it('the caller’s explicit env wins over the host (even a credential passed on purpose); fixed variables win over both', async () => {
    const engine = await testEngine();
    const session = await engine.spawn({
      env: {
        PTY_TEST_HARMLESS: 'from-caller',
        GITHUB_TOKEN: 'explicit-by-caller',
        PTY_TEST_CALLER_ONLY: 'yes',
        TERM: 'vt100',
        PAGER: 'more',
      },
    });
    const { vars } = await shellEnv(session);
    expect(vars.get('PTY_TEST_HARMLESS')).toBe('from-caller');
    expect(vars.get('GITHUB_TOKEN')).toBe('explicit-by-caller');
    expect(vars.get('PTY_TEST_CALLER_ONLY')).toBe('yes');
    expect(vars.get('TERM')).toBe('xterm-256color');
    expect(vars.get('PAGER')).toBe('cat');
    // Only the variable the caller named comes through: the other host credentials stay dropped.
    expect(vars.has('OPENAI_API_KEY')).toBe(false);
    await session.close();
  });
});

describe.runIf(process.platform === 'linux')('the prompt the environment installs', () => {
  // BUG (reported to the lead): bash prints pending job notifications ("[1]+  Done  sleep 0.05") after
  // PROMPT_COMMAND has printed the marker and before PS1, so the text after the marker is not PS1 and
  // the send degrades to inferred_idle (no exit code) after idleSilenceMs.
  it('a job notification printed before the prompt does not cost the send its proof (stdin_read, exit code)', async () => {
    const engine = await testEngine({ idleSilenceMs: 1_000 });
    const session = await engine.spawn();
    const started = await session.startSend({ text: 'sleep 0.05 & echo BG=$!' }).done;
    const job = Number(/^BG=(\d+)\s*$/m.exec(started.viewport)?.[1]);
    // The job ends while the shell idles at its prompt; bash reports it before the next prompt.
    const deadline = Date.now() + 5_000;
    while (existsSync(`/proc/${job}`) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const next = await session.startSend({ text: 'echo after' }).done;
    expect(next.viewport).toMatch(/Done\s+sleep 0\.05/);
    expect(next.waitReason).toBe('stdin_read');
    expect(next.exitCode).toBe(0);
    await session.close();
  });
});
