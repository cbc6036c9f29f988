/**
 * The watch page in a real browser (SPEC §13): headless Chromium sees a session's output appear (a
 * late viewer from the snapshot), takes over, answers a getpass prompt, hands back; a second tab is
 * refused the keyboard; closing the holder's tab hands back; a browser without the cookie gets 403;
 * the page never resizes the pty; and the model's results never contain the secret.
 */
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterEach, expect } from 'vitest';
import { startWatchServer, type WatchServer } from '../../../../dist/main/watch/watch-server.js';
import { CHROMIUM_PATH, chromiumArgs, chromiumIt } from '../../../support/chromium.js';
import { type TerminalSession, testEngine } from '../../../support/engine.js';
import { until } from '../../../support/until.js';

const browserIt = chromiumIt('watch page browser');
/**
 * Where the test's screenshot goes: docs/watch-page.png when asked (`UPDATE_WATCH_SCREENSHOT=1`, how the
 * committed one was made), else a temporary file, so a run leaves the tracked tree alone.
 */
const SCREENSHOT =
  process.env.UPDATE_WATCH_SCREENSHOT === '1'
    ? new URL('../../../../docs/watch-page.png', import.meta.url).pathname
    : `${tmpdir()}/agent-pty-watch-page-${process.pid}.png`;
const SECRET = 'hunter2-swordfish';

let browser: Browser | undefined;
let server: WatchServer | undefined;

afterEach(async () => {
  await browser?.close();
  browser = undefined;
  await server?.close();
  server = undefined;
});

/** The screen of session `id` as the page's xterm shows it. */
function screenOf(page: Page, id: string): Promise<string> {
  return page.evaluate(
    (sid) =>
      (globalThis as never as { agentPtyWatch: { screenText(id: string): string } }).agentPtyWatch.screenText(
        sid,
      ) ?? '',
    id,
  );
}

async function screenShows(page: Page, id: string, pattern: RegExp): Promise<void> {
  await until(`the page shows ${pattern}`, async () => pattern.test(await screenOf(page, id)), 15_000);
}

async function holdState(page: Page, id: string): Promise<string> {
  return page.$eval(`[data-session="${id}"] .hold-state`, (el) => el.textContent ?? '');
}

async function click(page: Page, id: string, button: string): Promise<void> {
  await page.bringToFront(); // a background tab's clicks wait for it to be painted
  await page.waitForSelector(`[data-session="${id}"] .${button}:not([hidden])`);
  await page.click(`[data-session="${id}"] .${button}`);
}

browserIt(
  'shows output live, takes over for a getpass prompt, refuses a second tab, hands back when the tab closes',
  async () => {
    const engine = await testEngine({ disposeGraceMs: 300 });
    const session: TerminalSession = await engine.spawn({ name: 'build', rows: 24, cols: 90 });
    server = await startWatchServer({ engine, recordingsDir: '/nonexistent' });
    // Output before any viewer: a late viewer starts from the snapshot.
    await session.startSend({ text: 'echo before-$((6*7))' }).done;
    browser = await puppeteer.launch({
      executablePath: CHROMIUM_PATH!,
      args: chromiumArgs(),
      headless: true,
    });
    const page = await browser.newPage();
    await page.setViewport({ width: 1100, height: 760 });
    const response = await page.goto(server.url);
    expect(response?.status()).toBe(200);
    expect(page.url()).toBe(server.pageUrl); // the token left the address bar
    await page.waitForSelector(`[data-session="${session.id}"]`);
    await screenShows(page, session.id, /^before-42$/m);
    // The page sized its terminal to the session's and never resized the pty.
    expect(
      await page.evaluate(
        (sid) =>
          (globalThis as never as { agentPtyWatch: { size(id: string): unknown } }).agentPtyWatch.size(sid),
        session.id,
      ),
    ).toEqual({ rows: 24, cols: 90 });
    // Live output.
    await session.startSend({ text: 'echo live-$((6*7))' }).done;
    await screenShows(page, session.id, /^live-42$/m);

    // Read-only until taken over: keys typed into the page reach nothing.
    await page.click(`[data-session="${session.id}"] .terminal`);
    await page.keyboard.type('echo sneaky-$((6*7))');
    await page.keyboard.press('Enter');

    // The model reaches a password prompt: it is told, and a person takes over.
    const asked = await session.startSend({
      text: `python3 -c 'import getpass; s = getpass.getpass("Password: "); print("got", len(s), "chars")'`,
    }).done;
    expect(asked.inputHidden).toBe(true);
    expect(asked.viewport).not.toContain('sneaky');
    await click(page, session.id, 'take');
    await until('the page holds the keyboard', async () =>
      /you hold the keyboard/.test(await holdState(page, session.id)),
    );

    // A second tab (same browser: the cookie) is refused the keyboard.
    const second = await browser.newPage();
    expect((await second.goto(server.pageUrl))?.status()).toBe(200);
    await second.waitForSelector(`[data-session="${session.id}"]`);
    await until('the second tab sees the hold', async () =>
      /held by another viewer/.test(await holdState(second, session.id)),
    );
    await click(second, session.id, 'take');
    await until('the second tab is refused', async () =>
      /held by another viewer since/.test(
        await second.$eval(`[data-session="${session.id}"] .message`, (el) => el.textContent ?? ''),
      ),
    );
    await click(second, session.id, 'force'); // forcing tells the first tab
    await until('the forced take', async () =>
      /you hold the keyboard/.test(await holdState(second, session.id)),
    );
    await until('the first tab is told', async () =>
      /held by another viewer/.test(await holdState(page, session.id)),
    );
    await click(page, session.id, 'take');
    await click(page, session.id, 'force');
    await until('taken back', async () => /you hold the keyboard/.test(await holdState(page, session.id)));

    // The model's send waits while the person types the secret.
    const model = session.startSend({ text: 'echo model-$((6*7))', timeoutMs: 30_000 });
    await page.bringToFront();
    await page.click(`[data-session="${session.id}"] .terminal`);
    await page.keyboard.type(SECRET);
    await page.keyboard.press('Enter');
    await screenShows(page, session.id, /^got 17 chars$/m);
    // The list says the agent's send is waiting (busy) while the person holds the keyboard.
    await until('the page lists the session busy', async () =>
      /busy: the agent is waiting/.test(
        await page.$eval(`[data-session="${session.id}"] .facts`, (el) => el.textContent ?? ''),
      ),
    );
    await page.screenshot({ path: SCREENSHOT });
    expect(readFileSync(SCREENSHOT).subarray(1, 4).toString()).toBe('PNG');
    if (process.env.UPDATE_WATCH_SCREENSHOT !== '1') rmSync(SCREENSHOT);
    await click(page, session.id, 'release');
    const result = await model.done;
    expect(result.waitReason).toBe('stdin_read');
    expect(result.viewport).toMatch(/^got 17 chars\s*$/m);
    expect(result.viewport).toMatch(/^model-42\s*$/m);
    for (const text of [
      asked.viewport,
      result.viewport,
      JSON.stringify(result),
      await screenOf(page, session.id),
    ]) {
      expect(text).not.toContain(SECRET);
    }

    // Closing the holder's tab hands the keyboard back.
    await click(second, session.id, 'take');
    await until('the second tab holds it', async () =>
      /you hold the keyboard/.test(await holdState(second, session.id)),
    );
    await expect(session.signal('SIGINT')).rejects.toMatchObject({ code: 'HUMAN_HOLDS' });
    await second.close();
    await until('the hold ended with the tab', async () => {
      try {
        await (await session.takeKeyboard({ holder: 'test' })).release();
        return true;
      } catch {
        return false;
      }
    });

    // A browser without the cookie gets nothing.
    const stranger = await browser.createBrowserContext();
    const foreign = await stranger.newPage();
    expect((await foreign.goto(server.pageUrl))?.status()).toBe(403);
    await stranger.close();
  },
  90_000,
);

browserIt(
  "replays a closed session's recording to the screen it ended with",
  async () => {
    const { mkdtempSync } = await import('node:fs');
    const dir = mkdtempSync(`${tmpdir()}/watch-replay-`);
    try {
      const engine = await testEngine({ disposeGraceMs: 300 });
      const session = await engine.spawn({ record: `${dir}/build.cast`, rows: 12, cols: 60 });
      await session.startSend({ text: 'printf "\\033[32mgreen-%s\\033[0m\\n" $((6*7))' }).done;
      const finalLines = (await session.snapshot()).lines;
      await session.close();
      server = await startWatchServer({ engine, recordingsDir: dir });
      browser = await puppeteer.launch({
        executablePath: CHROMIUM_PATH!,
        args: chromiumArgs(),
        headless: true,
      });
      const page = await browser.newPage();
      await page.goto(server.url);
      await page.waitForSelector('#recordings .replay');
      await page.click('#recordings .replay');
      await page.waitForSelector('#replay[data-replayed="build.cast"]');
      const replayed = await page.evaluate(() =>
        (globalThis as never as { agentPtyWatch: { replayText(): string } }).agentPtyWatch.replayText(),
      );
      expect(replayed.split('\n').map((line) => line.trimEnd())).toEqual(
        [...finalLines, ...Array(12).fill('')].slice(0, 12).map((line) => line.trimEnd()),
      );
      expect(replayed).toMatch(/^green-42$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  60_000,
);
