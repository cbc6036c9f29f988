/**
 * `agent-pty watch --socket` (SPEC §12, §13) with real processes: a daemon, a model's client of one
 * scope that spawned a session at a getpass prompt, and the watch command as a process of its own. Its
 * page (driven over HTTP and its WebSocket) lists the session with its mode and workspace without
 * attaching it; the person takes the keyboard and answers the prompt; the model's send waits for
 * hand-back inside the daemon; the model's results never hold the secret and its client stays attached.
 * In headless Chromium, the page shows two scopes' sessions, each with its mode and workspace.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { afterEach, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createRemoteEngine } from '../../../../dist/main/index.js';
import { engineWatchSource } from '../../../../dist/main/watch/session-overview.js';
import type { ServerMessage, WatchedSession } from '../../../../dist/main/watch/watch-protocol.js';
import { CHROMIUM_PATH, chromiumArgs, chromiumIt } from '../../../support/chromium.js';
import { BIN, scratchDirectory, startDaemonProcess } from '../../../support/daemon.js';
import { until } from '../../../support/until.js';

const SECRET = 'hunter2-swordfish';
let watch: ChildProcessWithoutNullStreams | undefined;

afterEach(async () => {
  if (watch !== undefined && watch.exitCode === null) {
    const exited = new Promise((resolve) => watch!.once('exit', resolve));
    watch.kill('SIGTERM');
    await exited;
  }
  watch = undefined;
});

/** Starts `agent-pty watch --socket SOCKET` and resolves with the link it prints. */
async function startWatch(socket: string, runtime: string): Promise<string> {
  watch = spawn(process.execPath, [BIN, 'watch', '--socket', socket], {
    env: { ...process.env, XDG_RUNTIME_DIR: runtime },
  });
  let stdout = '';
  let stderr = '';
  watch.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  watch.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await until(`the watch link (stderr: ${stderr})`, () =>
    /^http:\/\/127\.0\.0\.1:\d+\/\?token=\S+$/m.test(stdout),
  );
  return stdout.trim().split('\n')[0]!;
}

/** The page's WebSocket, past the token-for-cookie exchange, and the messages it received. */
async function openPage(url: string): Promise<{ socket: WebSocket; messages: ServerMessage[] }> {
  const exchange = await fetch(url, { redirect: 'manual' });
  expect(exchange.status).toBe(303);
  const cookie = exchange.headers.get('set-cookie')!.split(';')[0]!;
  const { port } = new URL(url);
  const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`, {
    headers: { cookie },
    origin: `http://127.0.0.1:${port}`,
  });
  const messages: ServerMessage[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(data.toString()) as ServerMessage));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return { socket, messages };
}

function listed(messages: ServerMessage[], id: string): WatchedSession | undefined {
  const listings = messages.filter((message) => message.t === 'sessions');
  return listings.at(-1)?.sessions.find((session) => session.id === id);
}

function screenText(messages: ServerMessage[], id: string): string {
  return messages
    .map((message) =>
      message.t === 'out' && message.id === id
        ? message.data
        : message.t === 'snapshot' && message.id === id
          ? message.snapshot.lines.join('\n')
          : '',
    )
    .join('');
}

it('lists a scoped client’s session without attaching it, and the person answers its getpass prompt', async () => {
  const dir = scratchDirectory(0o700);
  const socket = join(dir, 'run', 'engine.sock');
  await startDaemonProcess(socket);
  const workspace = join(dir, 'work');
  mkdirSync(workspace);
  const model = await createRemoteEngine({
    socket,
    scope: { mode: 'danger-full-access', workspaceRoot: workspace },
  });
  const session = await model.spawn({ name: 'deploy' });
  const asked = await session.startSend({
    text: `python3 -c 'import getpass; s = getpass.getpass("Password: "); print("got", len(s), "chars")'`,
  }).done;
  expect(asked.inputHidden).toBe(true);

  const runtime = join(dir, 'watch-run');
  mkdirSync(runtime, { mode: 0o700 });
  const { socket: page, messages } = await openPage(await startWatch(socket, runtime));
  await until('the page lists the session', () => listed(messages, session.id) !== undefined);
  expect(listed(messages, session.id)).toMatchObject({
    name: 'deploy',
    mode: 'danger-full-access',
    workspace,
  });
  // Listing it took nothing from the model's client.
  expect(await model.list()).toMatchObject([{ id: session.id, attached: true }]);

  page.send(JSON.stringify({ t: 'watch', id: session.id }));
  await until('the snapshot shows the prompt', () => /Password:/.test(screenText(messages, session.id)));
  page.send(JSON.stringify({ t: 'take', id: session.id }));
  await until('the page holds the keyboard', () =>
    messages.some((message) => message.t === 'hold' && message.id === session.id && message.state === 'mine'),
  );
  // The hold lives in the daemon's engine: the model's send with input waits for hand-back there.
  const waiting = session.startSend({ text: 'echo after-$((6*7))', timeoutMs: 20_000 }).done;
  await expect(session.signal('SIGINT')).rejects.toMatchObject({ code: 'HUMAN_HOLDS' });
  page.send(JSON.stringify({ t: 'key', id: session.id, data: `${SECRET}\r` }));
  // Handed back once the shell prompts again, so the model's command is not typed ahead (echoed twice).
  await until('the program read the secret and the shell prompts', () =>
    /got 17 chars\r?\n.*\$ $/.test(screenText(messages, session.id)),
  );
  page.send(JSON.stringify({ t: 'release', id: session.id }));
  const after = await waiting;
  expect(after.waitReason).toBe('stdin_read');
  expect(after.viewport).toMatch(/^got 17 chars\s*$/m);
  expect(after.viewport).toMatch(/^after-42\s*$/m);
  for (const result of [asked, after]) expect(JSON.stringify(result)).not.toContain(SECRET);
  expect(screenText(messages, session.id)).not.toContain(SECRET); // echo was off

  // The model's client still holds its session.
  expect(await model.list()).toMatchObject([{ id: session.id, attached: true }]);
  const again = await session.startSend({ text: 'echo still-$((6*7))' }).done;
  expect(again.viewport).toMatch(/^still-42\s*$/m);
  page.close();
  await model.shutdown();
});

chromiumIt('watch daemon browser')(
  'shows every scope’s sessions in a real browser, each with its mode and workspace',
  async () => {
    const dir = scratchDirectory(0o700);
    const socket = join(dir, 'run', 'engine.sock');
    await startDaemonProcess(socket);
    const workspace = join(dir, 'app');
    mkdirSync(workspace);
    const confined = await createRemoteEngine({
      socket,
      scope: { mode: 'danger-full-access', workspaceRoot: workspace },
    });
    const plain = await createRemoteEngine({ socket });
    const a = await confined.spawn({ name: 'build' });
    const b = await plain.spawn({ name: 'other' });
    await a.startSend({ text: 'echo built-$((6*7))' }).done;
    const runtime = join(dir, 'watch-run');
    mkdirSync(runtime, { mode: 0o700 });
    const url = await startWatch(socket, runtime);
    const browser = await puppeteer.launch({
      executablePath: CHROMIUM_PATH!,
      args: chromiumArgs(),
      headless: true,
    });
    try {
      const page = await browser.newPage();
      expect((await page.goto(url))?.status()).toBe(200);
      await page.waitForSelector(`[data-session="${a.id}"]`);
      await page.waitForSelector(`[data-session="${b.id}"]`);
      const facts = await page.$eval(`[data-session="${a.id}"]`, (el) => el.textContent ?? '');
      expect(facts).toContain('mode: danger-full-access');
      expect(facts).toContain(`workspace: ${workspace}`);
      await until('the page shows the session’s output', async () =>
        /^built-42$/m.test(
          await page.evaluate(
            (sid) =>
              (
                globalThis as never as { agentPtyWatch: { screenText(id: string): string } }
              ).agentPtyWatch.screenText(sid) ?? '',
            a.id,
          ),
        ),
      );
    } finally {
      await browser.close();
    }
    expect((await confined.list())[0]).toMatchObject({ id: a.id, attached: true });
    await confined.shutdown();
    await plain.shutdown();
  },
);

it('agent-pty attach refuses a name that two scopes’ sessions share, naming each by id and workspace', async () => {
  const dir = scratchDirectory(0o700);
  const socket = join(dir, 'run', 'engine.sock');
  await startDaemonProcess(socket);
  const engines = await Promise.all(
    ['one', 'two'].map(async (workspace) => {
      const root = join(dir, workspace);
      mkdirSync(root);
      return createRemoteEngine({ socket, scope: { mode: 'danger-full-access', workspaceRoot: root } });
    }),
  );
  const sessions = await Promise.all(engines.map((engine) => engine.spawn({ name: 'build' })));
  const runtime = join(dir, 'watch-run');
  mkdirSync(runtime, { mode: 0o700 });
  await startWatch(socket, runtime);
  const attach = spawn(process.execPath, [BIN, 'attach', 'build'], {
    env: { ...process.env, XDG_RUNTIME_DIR: runtime },
  });
  let stderr = '';
  attach.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise((resolve) => attach.once('exit', resolve));
  expect(code).toBe(1);
  expect(stderr).toContain('build names 2 sessions; attach one by its id:');
  for (const [index, session] of sessions.entries()) {
    expect(stderr).toContain(`${session.id} (danger-full-access in ${join(dir, ['one', 'two'][index]!)})`);
  }
  for (const engine of engines) await engine.shutdown();
});

it('mcp --daemon --watch lists a daemon session’s hold and busy state from the engine’s listing', async () => {
  const dir = scratchDirectory(0o700);
  const socket = join(dir, 'run', 'engine.sock');
  await startDaemonProcess(socket);
  const model = await createRemoteEngine({ socket });
  try {
    const session = await model.spawn({ name: 'remote' });
    // The page of `mcp --watch` over a daemon client: the engine's own sessions are remote handles.
    const source = engineWatchSource(model);
    const entry = async () => (await source.overview()).find((listed) => listed.id === session.id);
    expect(await entry()).toMatchObject({ name: 'remote', heldSince: undefined });
    const hold = await session.takeKeyboard({ holder: 'page' });
    const heldSince = (await entry())?.heldSince;
    expect(heldSince).toBeGreaterThan(Date.now() - 60_000);
    // A send with input waits for hand-back inside the daemon: the page says the session is busy.
    const waiting = session.startSend({ text: 'echo back-$((6*7))', timeoutMs: 20_000 }).done;
    await until('the page lists it busy', async () => (await entry())?.busy === true);
    await hold.release();
    expect((await waiting).viewport).toMatch(/^back-42\s*$/m);
    expect(await entry()).toMatchObject({ heldSince: undefined, busy: false });
  } finally {
    await model.shutdown();
  }
});
