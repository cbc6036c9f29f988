// The interactive CLI (`node dist/main/cli/bin.js`, needs a build) driven like a person at a real
// terminal: node-pty runs it, the test types lines and reads the screen's byte stream. Output must
// appear as it arrives, before the send settles, and not a second time at the settle; results read
// as the model's tools render them, screens included; the session runs confined like `mcp`'s.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type IPty, spawn } from 'node-pty';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseInputLine } from '../../../../dist/main/cli/input-line.js';

const BIN = new URL('../../../../dist/main/cli/bin.js', import.meta.url).pathname;

/** Upper bound for a line to appear on the CLI's screen. */
const SCREEN_WAIT_MS = 10_000;

interface Screen {
  cli: IPty;
  /** Everything the CLI printed, `\r\n` turned into `\n`. */
  text(): string;
  /** Resolves with the time (ms since start) at which `needle` first appeared at or after `from`. */
  seen(needle: string, from?: number): Promise<number>;
  /** Time (ms since start) at which the screen text first reached `index` characters. */
  timeAt(index: number): number;
  exited: Promise<number>;
}

let workspace: string;
let running: IPty | undefined;

beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), 'cli-interactive-'));
});

afterEach(() => {
  running?.kill('SIGKILL');
  running = undefined;
  rmSync(workspace, { recursive: true, force: true });
});

function startCli(): Screen {
  const started = performance.now();
  const cli = spawn(process.execPath, [BIN, '--workspace', workspace], {
    cols: 200,
    rows: 50,
    cwd: workspace,
    env: { ...process.env, NO_COLOR: '1' } as Record<string, string>,
  });
  running = cli;
  let text = '';
  const arrivals: Array<{ end: number; at: number }> = [];
  const waiters: Array<{ needle: string; from: number; resolve: (at: number) => void }> = [];
  cli.onData((data) => {
    text += data.replace(/\r\n/g, '\n');
    const at = performance.now() - started;
    arrivals.push({ end: text.length, at });
    for (const waiter of [...waiters]) {
      const index = text.indexOf(waiter.needle, waiter.from);
      if (index !== -1) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(timeAt(index + waiter.needle.length));
      }
    }
  });
  const timeAt = (index: number) => arrivals.find((arrival) => arrival.end >= index)?.at ?? Number.NaN;
  const exited = new Promise<number>((resolve) => {
    cli.onExit(({ exitCode }) => {
      running = undefined;
      resolve(exitCode);
    });
  });
  return {
    cli,
    text: () => text,
    timeAt,
    exited,
    seen: (needle, from = 0) => {
      const index = text.indexOf(needle, from);
      if (index !== -1) return Promise.resolve(timeAt(index + needle.length));
      return new Promise<number>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`"${needle}" did not appear:\n${text}`)),
          SCREEN_WAIT_MS,
        );
        waiters.push({
          needle,
          from,
          resolve: (at) => {
            clearTimeout(timer);
            resolve(at);
          },
        });
      });
    },
  };
}

/** Types a line into the CLI and returns where the screen text stood before it. */
function type(screen: Screen, line: string): number {
  const from = screen.text().length;
  screen.cli.write(`${line}\r`);
  return from;
}

function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

describe('interactive CLI under a pty', () => {
  it('prints output as it arrives, before the send settles, and does not print it again at the settle', async () => {
    const screen = startCli();
    await screen.seen('agent-pty> ');
    const from = type(screen, 'for i in 1 2 3; do echo tick-$((i*7)); sleep 0.4; done');
    const firstTick = await screen.seen('tick-7\n', from);
    const settled = await screen.seen('[wait: stdin_read]', from);
    // tick-7 was on screen while the loop still ran (~0.8 s before its end), not with the result.
    expect(settled - firstTick).toBeGreaterThan(500);
    const shown = screen.text().slice(from);
    for (const tick of ['tick-7', 'tick-14', 'tick-21']) expect(occurrences(shown, `${tick}\n`)).toBe(1);
    expect(shown).toMatch(/tick-21\n(?:.*\n)?\[wait: stdin_read\]\n\[exit: 0\]\n\[session: running\]\n/);
    // :result shows the send as the model received it: the output and the same status lines.
    const resultFrom = type(screen, ':result');
    await screen.seen('[session: running]', resultFrom + ':result'.length);
    expect(screen.text().slice(resultFrom)).toMatch(
      /tick-7\ntick-14\ntick-21\n\[wait: stdin_read\]\n\[exit: 0\]/,
    );
    type(screen, ':quit');
    expect(await screen.exited).toBe(0);
  });

  it(':waitfor returns when the pattern matches; :wait keeps waiting without typing and shows the rest live', async () => {
    const screen = startCli();
    await screen.seen('agent-pty> ');
    const from = type(screen, ":waitfor /up-[0-9]+/ bash -c 'echo up-$((6*7)); sleep 1; echo end-$((6*7))'");
    await screen.seen('[wait: pattern]', from);
    expect(screen.text().slice(from)).not.toContain('end-42');
    const waitFrom = type(screen, ':wait');
    const end = await screen.seen('end-42\n', waitFrom);
    const settled = await screen.seen('[wait: stdin_read]', waitFrom);
    expect(settled).toBeGreaterThanOrEqual(end);
    expect(screen.text().slice(waitFrom)).toMatch(/\[wait: stdin_read\]\n\[exit: 0\]\n/);
    expect(occurrences(screen.text(), 'end-42\n')).toBe(1);
    type(screen, ':quit');
    expect(await screen.exited).toBe(0);
  });
});

describe('interactive CLI under a pty: what the model sees', () => {
  it('an empty line answers a program waiting for a line with Enter, not the next command', async () => {
    const screen = startCli();
    await screen.seen('agent-pty> ');
    const asked = type(screen, 'read -p "go? " x');
    await screen.seen('[wait: stdin_read]', asked);
    const entered = type(screen, '');
    await screen.seen('[exit: 0]', entered);
    const echoed = type(screen, 'echo "x=[$x]-$((6*7))"');
    await screen.seen('[exit: 0]', echoed);
    expect(screen.text().slice(echoed)).toMatch(/\nx=\[\]-42\n/);
    type(screen, ':quit');
    expect(await screen.exited).toBe(0);
  });
  it('starts confined like mcp (workspace-write of the workspace) and says its mode and containment in the banner and :status', async () => {
    const screen = startCli();
    await screen.seen('agent-pty> ');
    // The banner is terminal_open's own text.
    expect(screen.text()).toMatch(
      new RegExp(
        `^Opened terminal session shell-1 \\(shell, bash, pid \\d+, sandbox workspace-write, workspace ${workspace}, containment (pid-namespace\\+cgroup|pid-namespace)\\)\\.`,
      ),
    );
    const from = type(screen, 'touch inside-$((6*7)) && touch /etc/agent-pty-outside; echo "rc=$?"');
    await screen.seen('[wait: stdin_read]', from);
    expect(screen.text().slice(from)).toMatch(/Read-only file system\nrc=1\n/);
    expect(readFileSync(join(workspace, 'inside-42'), 'utf8')).toBe('');
    expect(existsSync('/etc/agent-pty-outside')).toBe(false);
    const statusFrom = type(screen, ':status');
    await screen.seen('[session: running]', statusFrom + ':status'.length);
    expect(screen.text().slice(statusFrom)).toMatch(
      new RegExp(
        `\\nshell-1  shell  bash  pid \\d+  workspace-write, workspace ${workspace}  containment (pid-namespace\\+cgroup|pid-namespace)  \\[session: running\\]\\n`,
      ),
    );
    type(screen, ':quit');
    expect(await screen.exited).toBe(0);
  });

  it("shows a full-screen program's screen as the model gets it, in the result and in :result; :keys drives it", async () => {
    const screen = startCli();
    await screen.seen('agent-pty> ');
    const from = type(screen, 'vim -u NONE -i NONE notes.txt');
    await screen.seen('[foreground: vim]', from);
    const header =
      '[screen: cursor at row 1, column 1] A full-screen program owns the terminal; this is its screen ' +
      '(the JSON field screen). Drive it with keys, not text';
    expect(screen.text().slice(from)).toContain(header);
    expect(screen.text().slice(from)).toMatch(
      /\n~\n~\n[\s\S]*"notes\.txt" \[New\]?[^\n]*\n\[wait: stdin_read\]\n\[foreground: vim\]\n/,
    );
    const resultFrom = type(screen, ':result');
    await screen.seen('[foreground: vim]', resultFrom + ':result'.length);
    expect(screen.text().slice(resultFrom)).toContain(header);
    const keysFrom = type(screen, ':keys i {hello from keys} Escape {:wq} Enter');
    await screen.seen('[exit: 0]', keysFrom + 20);
    expect(screen.text().slice(keysFrom)).toMatch(
      /\[wait: stdin_read\]\n\[exit: 0\]\n\[session: running\]\n/,
    );
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('hello from keys\n');
    // A name that is not a key comes back as the tool's own error, and nothing is typed.
    const badFrom = type(screen, ':keys Escape Frobnicate');
    await screen.seen('Frobnicate', badFrom + ':keys Escape Frobnicate'.length);
    await screen.seen('agent-pty> ', badFrom + ':keys Escape Frobnicate'.length);
    expect(screen.text().slice(badFrom)).toMatch(/unknown key/i);
    type(screen, ':quit');
    expect(await screen.exited).toBe(0);
  });
});

describe('interactive CLI lines', () => {
  it('an empty line presses Enter (text "" with submit), :wait only waits, :waitfor sends with a pattern, mistakes say how to write them', () => {
    expect(parseInputLine('')).toEqual({ kind: 'send', args: { text: '', submit: true } });
    expect(parseInputLine('ls -la')).toEqual({ kind: 'send', args: { text: 'ls -la' } });
    expect(parseInputLine(':wait')).toEqual({ kind: 'send', args: {} });
    expect(parseInputLine(' :wait 45000 ')).toEqual({ kind: 'send', args: { timeoutMs: 45_000 } });
    expect(parseInputLine(':wait soon')).toEqual({
      kind: 'error',
      message: ':wait takes a whole number of ms, e.g. :wait 60000',
    });
    expect(parseInputLine(':waitfor /Serving HTTP on/ python3 -m http.server 0')).toEqual({
      kind: 'send',
      args: { text: 'python3 -m http.server 0', waitFor: 'Serving HTTP on' },
    });
    expect(parseInputLine(':waitfor ready npm start')).toMatchObject({
      kind: 'error',
      message: expect.stringMatching(/^:waitfor needs \/REGEX\//),
    });
  });

  it(':keys takes tmux key names and {…} literals in order; other lines and : words are typed as they are', () => {
    expect(parseInputLine(':keys Escape {:q!} Enter')).toEqual({
      kind: 'send',
      args: { keys: ['Escape', { text: ':q!' }, 'Enter'] },
    });
    expect(parseInputLine(':keys {git chec} Tab C-x {}')).toEqual({
      kind: 'send',
      args: { keys: [{ text: 'git chec' }, 'Tab', 'C-x', { text: '' }] },
    });
    expect(parseInputLine(':keys')).toMatchObject({
      kind: 'error',
      message: expect.stringMatching(/^:keys needs key names/),
    });
    expect(parseInputLine(':read 10 5')).toEqual({ kind: 'read', args: { offset: 10, count: 5 } });
    expect(parseInputLine(':signal sigterm')).toEqual({ kind: 'signal', signal: 'SIGTERM' });
    expect(parseInputLine(': noop')).toEqual({ kind: 'send', args: { text: ': noop' } });
    expect(parseInputLine(':status')).toEqual({ kind: 'status' });
    expect(parseInputLine(':q')).toEqual({ kind: 'quit' });
  });
});
