/**
 * Recording (SPEC §13): `spawn({ record })` writes an asciicast v2 file (0600) from the raw channel —
 * output events only, the private prompt marker removed — that replays to the session's final screen,
 * and never holds what a person typed while the terminal's echo was off. Real bash and python3.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import xtermHeadless from '@xterm/headless';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { testEngine } from '../../../support/engine.js';
import { until } from '../../../support/until.js';

let dir: string;
const savedState = process.env.XDG_STATE_HOME;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'recording-'));
});
afterEach(() => {
  if (savedState === undefined) delete process.env.XDG_STATE_HOME;
  else process.env.XDG_STATE_HOME = savedState;
  rmSync(dir, { recursive: true, force: true });
});

/** The cast's header and events, each line parsed as JSON (throws if any is not). */
function parseCast(file: string): { header: Record<string, unknown>; events: [number, string, string][] } {
  const [first, ...rest] = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '');
  return { header: JSON.parse(first!), events: rest.map((line) => JSON.parse(line)) };
}

/** The visible lines of `rows` × `cols` after writing `data`, trailing blanks trimmed. */
async function screenAfter(rows: number, cols: number, data: string[]): Promise<string[]> {
  const terminal = new xtermHeadless.Terminal({ rows, cols, allowProposedApi: true, scrollback: 0 });
  for (const chunk of data) await new Promise<void>((resolve) => terminal.write(chunk, resolve));
  const buffer = terminal.buffer.active;
  const lines: string[] = [];
  for (let y = 0; y < rows; y++)
    lines.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? '');
  terminal.dispose();
  return lines;
}

it('writes asciicast v2 that replays to the final screen and holds no secret typed while echo was off', async () => {
  const engine = await testEngine({ disposeGraceMs: 300 });
  const file = path.join(dir, 'session.cast');
  const session = await engine.spawn({ record: file, rows: 20, cols: 70 });
  await session.startSend({ text: 'printf "\\033[1;31mred-%s\\033[0m\\n" $((6*7))' }).done;
  const asked = await session.startSend({
    text: `python3 -c 'import getpass; s = getpass.getpass("Passphrase: "); print("len", len(s))'`,
  }).done;
  expect(asked.inputHidden).toBe(true);
  const hold = await session.takeKeyboard({ holder: 'test' });
  await hold.write('open-sesame-7\r');
  await until('the program read it', async () => /len 13/.test((await session.read()).text));
  await hold.release();
  await session.startSend({ text: 'echo done-$((6*7))' }).done;
  const finalScreen = (await session.snapshot()).lines;
  await session.close();

  expect(statSync(file).mode & 0o777).toBe(0o600);
  const { header, events } = parseCast(file);
  expect(header).toMatchObject({ version: 2, width: 70, height: 20 });
  expect(events.length).toBeGreaterThan(2);
  for (const [time, kind, data] of events) {
    expect(typeof time).toBe('number');
    expect(kind).toBe('o'); // output events only
    expect(typeof data).toBe('string');
  }
  const text = events.map(([, , data]) => data).join('');
  expect(text).not.toContain('open-sesame-7');
  expect(text).not.toContain('\x1b]133;D;'); // the private marker is removed
  expect(text).toContain('\x1b[1;31mred-');
  const replayed = await screenAfter(
    20,
    70,
    events.map(([, , data]) => data),
  );
  expect(replayed.map((line) => line.trimEnd())).toEqual(
    [...finalScreen, ...Array(20).fill('')].slice(0, 20).map((line) => line.trimEnd()),
  );
});

it('puts `record: true` under $XDG_STATE_HOME/agent-pty/recordings, and refuses a relative path', async () => {
  process.env.XDG_STATE_HOME = dir;
  const engine = await testEngine({ disposeGraceMs: 300 });
  await expect(engine.spawn({ record: 'relative.cast' as string })).rejects.toMatchObject({
    code: 'INVALID_ARGUMENT',
  });
  const session = await engine.spawn({ record: true, name: 'build' });
  await session.startSend({ text: 'echo rec-$((6*7))' }).done;
  await session.close();
  const recordings = path.join(dir, 'agent-pty', 'recordings');
  const [file] = readdirSync(recordings);
  expect(file).toMatch(/-build\.cast$/);
  expect(
    parseCast(path.join(recordings, file!))
      .events.map(([, , d]) => d)
      .join(''),
  ).toContain('rec-42');
});
