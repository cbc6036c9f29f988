/**
 * Full-screen programs and named keys (SPEC §4.3), against the real programs: the send's result
 * carries the rendered `screen` while a program owns the alternate screen, its redraws stay out of the
 * scrollback, keys drive it, and the shell's prompt comes back with exit code 0.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TerminalSendResult, type TerminalSession, testEngine } from '../../../support/engine.js';

const ROWS = 20;
const COLS = 70;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'agent-pty-screen-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Waits (sends without input) while a full-screen program still shows its screen: a program may be
 * seen reading the terminal on its way out (vim answering its own terminal queries), and a model then
 * waits once more, as it would.
 */
async function untilScreenGone(
  session: TerminalSession,
  result: TerminalSendResult,
): Promise<TerminalSendResult> {
  let current = result;
  for (let attempt = 0; attempt < 5 && current.screen !== undefined; attempt++) {
    current = await session.startSend({}).done;
  }
  return current;
}

async function openSession(): Promise<TerminalSession> {
  const engine = await testEngine();
  return engine.spawn({ cwd: dir, rows: ROWS, cols: COLS });
}

describe('full-screen programs through keys', () => {
  it('vim: the screen is read, text typed, :wq through keys, exit 0, the file holds the text', async () => {
    const session = await openSession();
    const opened = await session.startSend({ text: 'vim -n -u NONE notes.txt' }).done;
    expect(opened.waitReason).toBe('stdin_read');
    expect(opened.screen?.lines).toHaveLength(ROWS);
    expect(opened.screen?.lines[1]).toBe('~'); // an empty buffer's filler rows, trimmed
    expect(opened.screen?.cursor).toEqual({ row: 0, col: 0 });
    const typed = await session.startSend({ keys: ['i', { text: `sum ${6 * 7}` }, 'Escape'] }).done;
    expect(typed.screen?.lines[0]).toBe('sum 42');
    const quit = await session.startSend({ keys: ['Escape', { text: ':wq' }, 'Enter'] }).done;
    expect(quit.screen).toBeUndefined();
    expect(quit.exitCode).toBe(0);
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('sum 42\n');
    // The redraws never entered the scrollback: it holds the command line, not `~` rows.
    const page = await session.read();
    expect(page.text).toContain('vim -n -u NONE notes.txt');
    expect(page.text.split('\n').filter((line) => line === '~')).toEqual([]);
    await session.close();
  });

  it('nano: type, save with C-o Enter, leave with C-x', async () => {
    const session = await openSession();
    const opened = await session.startSend({ text: 'nano -I draft.txt' }).done;
    expect(opened.screen?.lines.some((line) => line.includes('draft.txt'))).toBe(true);
    const typed = await session.startSend({ keys: [{ text: `nano-${6 * 7}` }] }).done;
    expect(typed.screen?.lines).toContain('nano-42');
    const saved = await session.startSend({ keys: ['C-o', 'Enter', 'C-x'] }).done;
    expect(saved.screen).toBeUndefined();
    expect(saved.exitCode).toBe(0);
    expect(readFileSync(join(dir, 'draft.txt'), 'utf8')).toBe('nano-42\n');
    await session.close();
  });

  it('less starts without a warning, pages with keys, quits with q', async () => {
    const session = await openSession();
    const opened = await session.startSend({ text: 'seq 1000 2000 | less' }).done;
    expect(opened.viewport).not.toContain('not fully functional');
    expect(opened.screen?.lines[0]).toBe('1000');
    const paged = await session.startSend({ keys: ['Space'] }).done;
    expect(paged.screen?.lines[0]).toBe(String(1000 + ROWS - 1));
    const quit = await session.startSend({ keys: ['q'] }).done;
    expect(quit.screen).toBeUndefined();
    expect(quit.exitCode).toBe(0);
    await session.close();
  });

  it('htop renders its screen and quits with q', async () => {
    const session = await openSession();
    const opened = await session.startSend({ text: 'htop' }).done;
    expect(opened.screen?.lines.some((line) => /PID\s+USER/.test(line))).toBe(true);
    const quit = await session.startSend({ keys: ['q'] }).done;
    expect(quit.screen).toBeUndefined();
    expect(quit.exitCode).toBe(0);
    await session.close();
  });

  it('top renders and quits with q (procps top draws on the main screen: its frame is read as lines)', async () => {
    const session = await openSession();
    const opened = await session.startSend({ text: 'top -d 5' }).done;
    const frame = opened.screen?.lines.join('\n') ?? opened.viewport;
    expect(frame).toMatch(/PID\s+USER/);
    // One frame, not a stream of redraws.
    expect(frame.match(/PID\s+USER/g)).toHaveLength(1);
    const quit = await session.startSend({ keys: ['q'] }).done;
    expect(quit.exitCode).toBe(0);
    await session.close();
  });

  it('cursor keys follow the application cursor mode a program sets', async () => {
    const session = await openSession();
    // vim turns application cursor keys on: Up must arrive as ESC O A, which vim reads as Up.
    await session.startSend({ text: 'vim -n -u NONE -c "set nocompatible" lines.txt' }).done;
    await session.startSend({ keys: ['i', { text: 'one' }, 'Enter', { text: 'two' }, 'Up', { text: '!' }] })
      .done;
    const written = await untilScreenGone(
      session,
      await session.startSend({ keys: ['Escape', { text: ':wq' }, 'Enter'] }).done,
    );
    expect(written.exitCode).toBe(0);
    expect(readFileSync(join(dir, 'lines.txt'), 'utf8')).toBe('one!\ntwo\n');
    // The shell's own line editor is in normal mode: Up recalls the previous command.
    const recalled = await session.startSend({ keys: ['Up', 'C-u', { text: 'echo ok-$((6*7))' }, 'Enter'] })
      .done;
    expect(recalled.viewport.split('\n')).toContain('ok-42');
    await session.close();
  });
});

describe('named keys: refusals before anything is written', () => {
  it('an unknown name is refused with UNKNOWN_KEY listing the valid names, and nothing is typed', async () => {
    const session = await openSession();
    await expect(session.startSend({ keys: [{ text: 'echo typed' }, 'Entr'] }).done).rejects.toMatchObject({
      code: 'UNKNOWN_KEY',
      message: expect.stringContaining('Enter'),
    });
    const next = await session.startSend({ text: 'echo next-$((6*7))' }).done;
    expect(next.viewport.split('\n')).toEqual(['echo next-$((6*7))', 'next-42']);
    await session.close();
  });

  it('C-c is refused while the shell holds the terminal (KEY_REFUSED points to the signal tool)', async () => {
    const session = await openSession();
    await expect(session.startSend({ keys: ['C-c'] }).done).rejects.toMatchObject({
      code: 'KEY_REFUSED',
      message: expect.stringContaining('signal'),
    });
    await session.close();
  });

  it('\\x03, \\x1a and \\x1c are refused in every input form while a line-mode program holds the terminal', async () => {
    const session = await openSession();
    // A foreground command that reads nothing: the terminal, in its default line mode, would turn each
    // of these bytes into a signal for it (^C SIGINT, ^Z SIGTSTP, ^\ SIGQUIT).
    const sleeping = session.startSend({ text: 'sleep 30', timeoutMs: 300 });
    expect((await sleeping.done).waitReason).toBe('running');
    const attempts: Array<{ keys: Array<string | { text: string }> } | { text: string; submit?: boolean }> = [
      { keys: ['C-c'] },
      { keys: ['C-z'] },
      { keys: ['C-C'] },
      { keys: [{ text: '\u0003' }] },
      { keys: ['q', { text: 'a\u001ab' }] },
      { text: '\u0003' },
      { text: 'echo \u001c', submit: false },
      { text: 'x\u001a' },
    ];
    for (const attempt of attempts) {
      await expect(session.startSend(attempt).done, JSON.stringify(attempt)).rejects.toMatchObject({
        code: 'KEY_REFUSED',
        message: expect.stringContaining('signal'),
      });
    }
    // None of them reached the sleep: it is still running, and a real SIGTERM ends it now (a ^C or ^Z
    // that got through would have left 130 or 148 instead).
    await session.signal('SIGTERM');
    expect(await session.startSend({}).done).toMatchObject({ waitReason: 'stdin_read', exitCode: 143 });
    // At the shell's own prompt too.
    await expect(session.startSend({ text: '\u0003' }).done).rejects.toMatchObject({ code: 'KEY_REFUSED' });
    const next = await session.startSend({ text: 'echo next-$((6*7))' }).done;
    expect(next.viewport.split('\n')).toEqual(['echo next-$((6*7))', 'next-42']);
    await session.close();
  });

  it('C-c reaches a full-screen program (nano reports the cursor position on C-c)', async () => {
    const session = await openSession();
    await session.startSend({ text: 'nano -I cc.txt' }).done;
    const literal = await session.startSend({ keys: [{ text: '\u0003' }] }).done;
    expect(literal.screen?.lines.some((line) => /col\s+1\/\s*1\b/.test(line))).toBe(true);
    // After a typed character the cursor is in column 2: only a new report can say so (the first one
    // stays on the status bar).
    await session.startSend({ keys: ['x'] }).done;
    const answered = await session.startSend({ keys: ['C-c'] }).done;
    expect(answered.screen?.lines.some((line) => /col\s+2\/\s*2\b/.test(line))).toBe(true);
    await session.startSend({ keys: ['C-x'] }).done;
    const left = await session.startSend({ keys: ['n'] }).done;
    expect(left.exitCode).toBe(0);
    await session.close();
  });
});

describe('what the model reads (README examples)', () => {
  it('man ls reads NAME, not NNAAMMEE', async () => {
    const session = await openSession();
    const result = await session.startSend({ text: 'MANWIDTH=60 man ls 2>/dev/null | head -n 8' }).done;
    const lines = result.viewport.split('\n');
    expect(lines).toContain('NAME');
    expect(result.viewport).not.toContain('NNAAMMEE');
    expect(lines.some((line) => /^\s+ls - list directory contents$/.test(line))).toBe(true);
    await session.close();
  });

  it('a spinner, a progress bar and cursor-up progress read as their final state', async () => {
    const session = await openSession();
    const spinner = await session.startSend({
      text: `printf 'working |\\b/\\b-\\b\\\\\\b'; printf 'ok-%s\\n' $((6*7))`,
    }).done;
    expect(spinner.viewport.split('\n')).toContain('working ok-42');
    const script = [
      'for l in a b c; do echo "$l: waiting"; done',
      'for i in 1 2 3; do printf "\\e[3A"; for l in a b c; do printf "\\r\\e[2K%s: step %s\\n" $l $i; done; done',
      'printf "\\rdone-%s\\n" $((6*7))',
    ].join('; ');
    const progress = await session.startSend({ text: script }).done;
    const lines = progress.viewport.split('\n');
    expect(lines.slice(-4)).toEqual(['a: step 3', 'b: step 3', 'c: step 3', 'done-42']);
    expect(lines.filter((line) => /^[abc]: waiting$/.test(line))).toEqual([]);
    await session.close();
  });
});
