/**
 * The raw channel and `snapshot()` (SPEC §2), against real bash and vim: a late viewer's snapshot,
 * written into a fresh @xterm/headless terminal of the same size, is the session's screen (cells,
 * attributes, cursor, alternate screen), and the chunks after it continue that screen exactly; the
 * pty's text arrives whole and without the private marker; a viewer that stops reading costs bounded
 * memory and sees `dropped`; disposing a view or closing the session stops its traffic and leaves
 * nothing on the engine thread.
 */
import xtermHeadless, { type Terminal } from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import {
  type RawChunk,
  type RawView,
  type TerminalSession,
  type TerminalSnapshot,
  testEngine,
  testingEngine,
} from '../../../support/engine.js';
import { until } from '../../../support/until.js';

const ROWS = 12;
const COLS = 50;

/** A viewer: a fresh terminal of the session's size, drawn from a snapshot and the chunks after it. */
class Viewer {
  readonly terminal: Terminal;
  readonly chunks: RawChunk[] = [];
  /** Writes into the terminal not yet parsed. */
  private pending = 0;
  view: RawView | undefined;

  constructor(rows = ROWS, cols = COLS) {
    this.terminal = new xtermHeadless.Terminal({ rows, cols, allowProposedApi: true, scrollback: 0 });
  }

  static async open(session: TerminalSession): Promise<Viewer> {
    const viewer = new Viewer();
    viewer.view = await session.openRaw((chunk) => viewer.receive(chunk));
    // Chunks may arrive before the snapshot is in hand: they wait in `chunks` and are written after it.
    viewer.write(viewer.view.snapshot.ansi);
    for (const chunk of viewer.chunks) viewer.write(chunk.data);
    return viewer;
  }

  get text(): string {
    return this.chunks.map((chunk) => chunk.data).join('');
  }

  private receive(chunk: RawChunk): void {
    this.chunks.push(chunk);
    if (this.view !== undefined) this.write(chunk.data);
  }

  private write(data: string): void {
    this.pending += 1;
    this.terminal.write(data, () => {
      this.pending -= 1;
    });
  }

  /** Resolves once everything received is parsed. */
  async parsed(): Promise<void> {
    await until('the viewer parsed what it received', () => this.pending === 0);
  }

  dispose(): void {
    this.view?.dispose();
    this.terminal.dispose();
  }
}

/** Every cell of the visible screen with its attributes, the cursor, the buffer and the input modes. */
function screenOf(terminal: Terminal): unknown {
  const buffer = terminal.buffer.active;
  const rows: string[] = [];
  for (let y = 0; y < terminal.rows; y++) {
    const line = buffer.getLine(buffer.viewportY + y);
    const cells: string[] = [];
    for (let x = 0; x < terminal.cols; x++) {
      const cell = line?.getCell(x);
      if (cell === undefined) continue;
      const chars = cell.getChars() || ' ';
      const attributes = [
        cell.getFgColorMode(),
        cell.getFgColor(),
        cell.getBgColorMode(),
        cell.getBgColor(),
        cell.isBold(),
        cell.isItalic(),
        cell.isUnderline(),
        cell.isInverse(),
        cell.isDim(),
      ].join(',');
      cells.push(attributes === '0,-1,0,-1,0,0,0,0,0' ? chars : `${chars}[${attributes}]`);
    }
    rows.push(cells.join(''));
  }
  return {
    rows,
    cursor: { x: buffer.cursorX, y: buffer.cursorY },
    buffer: buffer.type,
    applicationCursorKeys: terminal.modes.applicationCursorKeysMode,
    bracketedPaste: terminal.modes.bracketedPasteMode,
  };
}

/** The session's screen as its snapshot reproduces it in a fresh terminal. */
async function screenFromSnapshot(snapshot: TerminalSnapshot): Promise<unknown> {
  const terminal = new xtermHeadless.Terminal({
    rows: snapshot.rows,
    cols: snapshot.cols,
    allowProposedApi: true,
    scrollback: 0,
  });
  await new Promise<void>((resolve) => terminal.write(snapshot.ansi, resolve));
  const screen = screenOf(terminal);
  terminal.dispose();
  return screen;
}

async function openSession(): Promise<TerminalSession> {
  const engine = await testEngine();
  return engine.spawn({ rows: ROWS, cols: COLS });
}

describe('raw channel and snapshot', () => {
  it('a late viewer starts from the screen an early viewer drew, and both follow it', async () => {
    const session = await openSession();
    const early = await Viewer.open(session);
    await session.startSend({ text: 'seq 1 30; echo sum-$((6*7))' }).done;
    await session.startSend({
      text: "printf '\\e[31mred\\e[0m \\e[1;44mbold-blue\\e[0m \\e[4munder\\e[0m\\n'",
    }).done;
    const late = await Viewer.open(session);
    await late.parsed();
    await until('the early viewer drew everything', async () => {
      await early.parsed();
      return JSON.stringify(screenOf(early.terminal)) === JSON.stringify(screenOf(late.terminal));
    }).catch(() => undefined); // compared below, so a failure shows the difference
    expect(screenOf(late.terminal)).toEqual(screenOf(early.terminal));
    const lines = late.view!.snapshot.lines;
    expect(lines).toContain('sum-42');
    expect(lines).toContain('red bold-blue under');
    // The colours are cells' attributes in the snapshot, not text.
    const drawn = screenOf(late.terminal) as { rows: string[] };
    // `r` of "red": a palette colour (any mode but the default 0), colour 1.
    expect(drawn.rows.some((row) => /^r\[[1-9]\d*,1,0,-1,/.test(row))).toBe(true);
    // What follows the snapshot continues it: both viewers draw the next command the same.
    await session.startSend({ text: 'echo next-$((7*8))' }).done;
    const current = await screenFromSnapshot(await session.snapshot());
    await until('both viewers drew the next command', async () => {
      await early.parsed();
      await late.parsed();
      const want = JSON.stringify(current);
      return (
        JSON.stringify(screenOf(late.terminal)) === want && JSON.stringify(screenOf(early.terminal)) === want
      );
    }).catch(() => undefined);
    expect(screenOf(late.terminal)).toEqual(current);
    expect(screenOf(early.terminal)).toEqual(current);
    expect(late.text).toContain('next-56');
    early.dispose();
    late.dispose();
    await session.close();
  });

  it('a viewer that joins during a flood of colours and edits continues the screen exactly', async () => {
    const session = await openSession();
    // Colours and line edits (cursor back, erase), which the terminal model parses rather than holds:
    // the viewer joins while a parse is in flight and must start from the exact point after it.
    const flood = session.startSend({
      text: "for i in $(seq 1 40000); do printf '\\e[3%dmc-%d\\e[0m plain\\e[2D\\e[K %d\\n' $((i%7)) $i $i; done; echo end-$((6*7))",
    });
    await until('the flood is under way', async () => (await session.read({ count: 1 })).totalLines > 2000);
    const viewer = await Viewer.open(session);
    expect((await flood.done).viewport).toContain('end-42');
    const current = await screenFromSnapshot(await session.snapshot());
    await until('the viewer drew the end', async () => {
      await viewer.parsed();
      return JSON.stringify(screenOf(viewer.terminal)) === JSON.stringify(current);
    }).catch(() => undefined);
    expect(screenOf(viewer.terminal)).toEqual(current);
    expect(viewer.chunks.every((chunk) => chunk.dropped === 0)).toBe(true);
    viewer.dispose();
    await session.close();
  });

  it('vim in the alternate screen: cells, cursor and modes, then the keys that follow', async () => {
    const session = await openSession();
    const opened = await session.startSend({ text: 'vim -n -u NONE -c "set nocompatible"' }).done;
    expect(opened.screen).toBeDefined();
    await session.startSend({ keys: ['i', { text: `line-${6 * 7}` }, 'Enter', { text: 'second' }] }).done;
    const viewer = await Viewer.open(session);
    await viewer.parsed();
    const snapshot = viewer.view!.snapshot;
    expect(snapshot.alternateScreen).toBe(true);
    expect(snapshot.lines[0]).toBe('line-42');
    expect(snapshot.cursor).toMatchObject({ row: 1, col: 6 });
    const drawn = screenOf(viewer.terminal) as { cursor: unknown; buffer: string };
    expect(drawn.buffer).toBe('alternate');
    expect(drawn.cursor).toEqual({ x: 6, y: 1 });
    expect(drawn).toEqual(await screenFromSnapshot(await session.snapshot()));
    // Keys typed after the snapshot reach the viewer as vim redraws the screen.
    await session.startSend({ keys: ['Escape', { text: 'ggdd' }] }).done;
    const edited = await session.snapshot();
    expect(edited.lines[0]).toBe('second');
    const current = await screenFromSnapshot(edited);
    await until('the viewer drew the edit', async () => {
      await viewer.parsed();
      return JSON.stringify(screenOf(viewer.terminal)) === JSON.stringify(current);
    }).catch(() => undefined);
    expect(screenOf(viewer.terminal)).toEqual(current);
    await session.startSend({ keys: [{ text: ':q!' }, 'Enter'] }).done;
    viewer.dispose();
    await session.close();
  });

  it('a character split across pty reads arrives whole, and the private marker never', async () => {
    const session = await openSession();
    const viewer = await Viewer.open(session);
    // The euro sign's three bytes in two writes, far enough apart to be two reads.
    const split = await session.startSend({
      text: "printf 'eu-\\xe2\\x82'; sleep 0.3; printf '\\xac-ro\\n'",
    }).done;
    expect(split.viewport).toContain('eu-€-ro');
    for (let i = 0; i < 3; i++) await session.startSend({ text: `echo p-$((${i}+40))` }).done;
    await until('the viewer got the last command', () => viewer.text.includes('p-42'));
    expect(viewer.text).toContain('eu-€-ro');
    expect(viewer.text).not.toContain('\ufffd');
    expect(viewer.text).not.toContain('133;D;');
    expect(viewer.view!.snapshot.ansi).not.toContain('133;D;');
    expect(viewer.chunks.every((chunk) => chunk.dropped === 0)).toBe(true);
    viewer.dispose();
    await session.close();
  });

  it('a viewer that stops reading costs bounded memory and sees what it missed counted', async () => {
    const session = await openSession();
    const chunks: RawChunk[] = [];
    let blocked = false;
    const view = await session.openRaw((chunk) => {
      chunks.push(chunk);
      if (blocked) return;
      blocked = true;
      // The host stops reading (this thread sleeps) while the session floods: the engine's ring fills.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3_000);
    });
    const flooded = 40 * 1024 * 1024;
    const flood = session.startSend({
      text: `head -c ${flooded} /dev/zero | tr '\\0' 'y'; echo; echo done-$((6*7))`,
    });
    const result = await flood.done;
    expect(result.viewport).toContain('done-42');
    await until('the view reported the drop', () => chunks.some((chunk) => chunk.dropped > 0), 15_000);
    const received = chunks.reduce((sum, chunk) => sum + chunk.data.length, 0);
    const dropped = chunks.reduce((sum, chunk) => sum + chunk.dropped, 0);
    expect(received).toBeLessThan(flooded);
    expect(dropped).toBeGreaterThan(0);
    // The session still answers, and the viewer keeps receiving once it reads again.
    expect((await session.startSend({ text: 'echo after-$((6*7))' }).done).viewport).toContain('after-42');
    await until('the viewer receives again', () => chunks.some((chunk) => chunk.data.includes('after-42')));
    view.dispose();
    await session.close();
  });

  it('dispose and close stop the traffic and leave nothing on the engine thread', async () => {
    const engine = await testingEngine({ threads: 1 });
    const session = await engine.spawn({ rows: ROWS, cols: COLS });
    const held = async (): Promise<number> =>
      (await engine.threadDiagnostics()).ownedResources['raw channel subscriber'] ?? 0;
    const first = await Viewer.open(session);
    const second = await Viewer.open(session);
    expect(await held()).toBe(2);
    await session.startSend({ text: 'echo one-$((6*7))' }).done;
    await until('both viewers got it', () => first.text.includes('one-42') && second.text.includes('one-42'));
    first.dispose();
    await until('the engine let the first view go', async () => (await held()) === 1);
    const before = first.chunks.length;
    await session.startSend({ text: 'echo two-$((6*7))' }).done;
    await until('the second viewer got it', () => second.text.includes('two-42'));
    expect(first.chunks.length).toBe(before);
    await session.close();
    expect(await held()).toBe(0);
    await expect(session.openRaw(() => undefined)).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    second.dispose();
  });
});
