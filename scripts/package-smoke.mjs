#!/usr/bin/env node
/**
 * The package as a user gets it (SPEC §11), `npm run test:package`: packs this repository, installs
 * the tarball into an empty temporary project with npm's default settings (from the npm cache,
 * `--prefer-offline`), and checks through the public entry and the `bin`:
 *
 * - the README's engine example runs as written (`import { createPtyEngine } from 'agent-pty'`);
 * - `npx agent-pty --version`; `npx agent-pty mcp` answers initialize and tools/list over stdio and
 *   runs a command in a terminal it opens;
 * - the watch page's assets (web/ and @xterm/xterm) are found in the installed copy;
 * - the walls hold in the installed copy: test/system/worker/pty/descriptors.test.ts and test/system/worker/pty/pty-exit-callback.test.ts
 *   run against it (AGENT_PTY_UNDER_TEST, test/support/package-under-test.ts);
 * - `npm install -g --prefix DIR` gives a working `agent-pty`;
 * - installed with `--ignore-scripts`, opening a terminal fails with SPAWN_FAILED saying what to do.
 *
 * Runs with the `node` and `npm` on PATH (CI runs it again under Node 22 and 24). Options:
 * `--keep` leaves the temporary folder for a look. Exits non-zero at the first failed check.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const { version: VERSION } = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8'));
const KEEP = process.argv.includes('--keep');
/** npm as a user runs it; only the cache is preferred, so CI needs no network beyond the registry's cache. */
const NPM_INSTALL = ['install', '--prefer-offline', '--no-audit', '--no-fund'];
/** Longest a single step may take (an install compiles node-pty and agent-pty's addon). */
const STEP_TIMEOUT_MS = 5 * 60_000;

const work = mkdtempSync(path.join(tmpdir(), 'agent-pty-package-'));
const started = performance.now();

/** Steps whose checks passed so far (each `pass` is one), for the closing line. */
let passed = 0;

function log(message) {
  process.stdout.write(`package-smoke: ${message}\n`);
}

/** Logs a step whose checks all passed. */
function pass(message) {
  passed += 1;
  log(message);
}

/** Runs a command to completion; throws with its output when it fails. Returns stdout. */
function run(command, args, options = {}) {
  try {
    return execFileSync(command, args, {
      encoding: 'utf8',
      timeout: STEP_TIMEOUT_MS,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...options,
    });
  } catch (error) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${error.status ?? error.signal}):\n${error.stdout}${error.stderr}`,
    );
  }
}

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

/** An empty project as `npm init -y` makes it. */
function emptyProject(name) {
  const dir = path.join(work, name);
  mkdirSync(dir);
  run('npm', ['init', '-y'], { cwd: dir });
  return dir;
}

/** Installs the tarball, timed; returns the seconds it took. */
function install(cwd, tarball, extra = []) {
  const begin = performance.now();
  run('npm', [...NPM_INSTALL, ...extra, tarball], { cwd });
  return (performance.now() - begin) / 1000;
}

/** The `js` block under "## Engine API" in the README, exactly as written there. */
function readmeExample() {
  const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const match = /\n```js\n([\s\S]*?)\n```\n/.exec(readme.slice(readme.indexOf('\n## Engine API\n')));
  check(match !== null, 'README.md has a ```js block under "## Engine API"');
  return match[1];
}

/**
 * Talks MCP (newline-delimited JSON-RPC) to `command args` over stdio: initialize, tools/list, then
 * opens a terminal and runs a command in it. Returns the tool names and the command's output.
 */
async function mcpSession(command, args, cwd) {
  const server = spawn(command, args, { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  server.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise((resolve) => server.on('close', (code, signal) => resolve({ code, signal })));
  const pending = new Map();
  let buffered = '';
  server.stdout.on('data', (chunk) => {
    buffered += chunk;
    for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
      const message = JSON.parse(buffered.slice(0, end));
      buffered = buffered.slice(end + 1);
      pending.get(message.id)?.(message);
      pending.delete(message.id);
    }
  });
  let nextId = 1;
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => reject(new Error(`no answer to ${method}; stderr: ${stderr}`)), 60_000);
      pending.set(id, (message) => {
        clearTimeout(timer);
        if (message.error) reject(new Error(`${method}: ${JSON.stringify(message.error)}`));
        else resolve(message.result);
      });
      server.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  const callTool = async (name, toolArgs) => {
    const result = await request('tools/call', { name, arguments: toolArgs });
    const text = result.content?.map((part) => part.text ?? '').join('\n') ?? '';
    check(result.isError !== true, `${name} succeeded (${text})`);
    return { text, structured: result.structuredContent ?? {} };
  };
  try {
    const init = await request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'agent-pty-package-smoke', version: VERSION },
    });
    check(init.serverInfo?.name !== undefined, `initialize names the server (${JSON.stringify(init)})`);
    server.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    const { tools } = await request('tools/list', {});
    const opened = await callTool('terminal_open', {});
    const sessionId = opened.structured.sessionId ?? /session ([\w-]+)/.exec(opened.text)?.[1];
    check(typeof sessionId === 'string', `terminal_open returned a sessionId (${opened.text})`);
    const sent = await callTool('terminal_send', { sessionId, text: 'echo mcp-$((6*7))' });
    await callTool('terminal_close', { sessionId });
    return { tools: tools.map((tool) => tool.name), output: sent.text };
  } finally {
    server.stdin.end(); // the connection owns its terminals: EOF ends the server
    const { code, signal } = await exited;
    check(code === 0, `the MCP server exits 0 at EOF (${code ?? signal}; stderr: ${stderr})`);
  }
}

async function checkMcp(label, command, args, cwd) {
  const { tools, output } = await mcpSession(command, args, cwd);
  for (const name of ['terminal_open', 'terminal_send', 'terminal_read', 'terminal_close']) {
    check(tools.includes(name), `${label}: tools/list has ${name} (${tools.join(', ')})`);
  }
  check(/^mcp-42\r?$/m.test(output), `${label}: the command ran in the terminal (${output})`);
  pass(`${label}: MCP initialize, tools/list (${tools.length} tools) and a command in a terminal`);
}

async function main() {
  log(`node ${process.version}, npm ${run('npm', ['--version']).trim()}, in ${work}`);
  // `npm pack` builds dist/ first (prepack) and writes the tarball where the consumer takes it from.
  const [packed] = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], { cwd: REPO }));
  const tarball = path.join(work, packed.filename);
  log(`packed ${packed.filename}: ${packed.entryCount} files, ${(packed.size / 1024).toFixed(0)} KiB`);

  const project = emptyProject('project');
  pass(`npm install ${packed.filename} in an empty project: ${install(project, tarball).toFixed(1)} s`);
  const installed = path.join(project, 'node_modules', 'agent-pty');

  writeFileSync(path.join(project, 'example.mjs'), `${readmeExample()}\n`);
  const example = run(process.execPath, ['example.mjs'], { cwd: project });
  check(example.split('\n').includes('6 x 7 = 42'), `the README example printed its result (${example})`);
  pass("the README's engine example ran as written against the installed copy");

  const npxVersion = run('npx', ['agent-pty', '--version'], { cwd: project }).trim();
  check(npxVersion === VERSION, `npx agent-pty --version prints ${VERSION} (${npxVersion})`);
  pass(`npx agent-pty --version: ${npxVersion}`);
  await checkMcp('npx agent-pty mcp', 'npx', ['agent-pty', 'mcp'], project);

  // The watch page (SPEC §13) is served from the installed package: its own files and xterm's build.
  const assets = run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "const { watchAsset } = await import('./node_modules/agent-pty/dist/main/watch/watch-assets.js');" +
        "for (const p of ['/', '/assets/watch.js', '/assets/watch.css', '/assets/xterm.js', '/assets/xterm.css'])" +
        ' console.log(p, watchAsset(p)?.body.length ?? 0);',
    ],
    { cwd: project },
  );
  check(
    assets
      .trim()
      .split('\n')
      .every((line) => Number(line.split(' ')[1]) > 0),
    `every asset of the watch page is in the installed package (${assets})`,
  );
  pass('the watch page and @xterm/xterm are served from the installed copy');

  // The walls, tested where the package landed (the test files and vitest come from this repository).
  run(
    'npx',
    [
      'vitest',
      'run',
      'test/system/worker/pty/descriptors.test.ts',
      'test/system/worker/pty/pty-exit-callback.test.ts',
    ],
    {
      cwd: REPO,
      env: { ...process.env, AGENT_PTY_UNDER_TEST: installed },
    },
  );
  pass(
    'test/system/worker/pty/descriptors.test.ts and test/system/worker/pty/pty-exit-callback.test.ts passed against the installed copy',
  );

  const globalPrefix = path.join(work, 'global');
  const globalSeconds = install(work, tarball, ['-g', '--prefix', globalPrefix]);
  const bin = path.join(globalPrefix, 'bin', 'agent-pty');
  const globalVersion = run(bin, ['--version'], { cwd: work }).trim();
  check(globalVersion === VERSION, `${bin} --version prints ${VERSION} (${globalVersion})`);
  pass(`npm install -g --prefix: ${globalSeconds.toFixed(1)} s; agent-pty --version: ${globalVersion}`);
  await checkMcp('global agent-pty mcp', bin, ['mcp'], project);

  const bare = emptyProject('ignore-scripts');
  install(bare, tarball, ['--ignore-scripts']);
  writeFileSync(
    path.join(bare, 'spawn.mjs'),
    "import { createPtyEngine } from 'agent-pty';\n" +
      'const engine = await createPtyEngine();\n' +
      'try { await engine.spawn({}); console.log("spawned"); }\n' +
      "catch (error) { console.log(error.code + ': ' + error.message); }\n" +
      'finally { await engine.close(); }\n',
  );
  const refusal = run(process.execPath, ['spawn.mjs'], { cwd: bare });
  check(
    refusal.startsWith('SPAWN_FAILED: '),
    `a spawn without the native modules is SPAWN_FAILED (${refusal})`,
  );
  for (const part of [
    'agent_pty_pty.node',
    `${process.platform}-${process.arch}`,
    '--ignore-scripts',
    'npm rebuild node-pty agent-pty',
  ]) {
    check(refusal.includes(part), `the SPAWN_FAILED message names ${part} (${refusal})`);
  }
  pass('installed with --ignore-scripts: a spawn fails with SPAWN_FAILED naming the module and the fix');
  log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

try {
  await main();
  log(`all ${passed} checks passed`);
} catch (error) {
  process.stderr.write(`package-smoke: ${error.stack ?? error}\n`);
  log(`FAILED after ${passed} checks passed`);
  process.exitCode = 1;
} finally {
  if (KEEP) log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
