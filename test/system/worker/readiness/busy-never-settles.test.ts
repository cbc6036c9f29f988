/**
 * Truthful readiness with real processes (SPEC §4.2 as revised): silence never settles a provably busy
 * command, relays and exiting programs are not waits, waiting without typing, waitFor, continuity of
 * output. Each scenario failed on the engine before this revision.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testEngine } from '../../../support/engine.js';

const lines = (text: string) => text.split('\n');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('silence alone never settles a busy command', () => {
  it('`sleep 1.2; echo built-…` waits past idleSilenceMs for the prompt', async () => {
    const engine = await testEngine({ idleSilenceMs: 300 });
    const session = await engine.spawn();
    const result = await session.startSend({ text: 'sleep 1.2; echo built-$((6*7))' }).done;
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, foreground: { command: 'bash' } });
    expect(lines(result.viewport)).toContain('built-42');
  });

  it('an unterminated OSC flood is output, not silence (bytes count, not sanitized text)', async () => {
    const engine = await testEngine({ idleSilenceMs: 200 });
    const session = await engine.spawn();
    const result = await session.startSend({
      text: `printf '\\e]0;'; yes x | head -c 10000000; printf '\\a'; echo flood-$((6*7))`,
    }).done;
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    expect(lines(result.viewport)).toContain('flood-42');
  });

  it('a step past its timeoutMs is `running`; a wait-only send then gives exit code and late output', async () => {
    const engine = await testEngine({ idleSilenceMs: 300 });
    const session = await engine.spawn();
    const first = await session.startSend({ text: 'sleep 2; echo late-$((2*3))', timeoutMs: 1_000 }).done;
    expect(first.waitReason).toBe('running');
    expect(first.exitCode).toBeUndefined();
    expect(first.foreground?.command).toBe('sleep');
    expect(first.elapsedMs).toBeGreaterThanOrEqual(990);
    const rest = await session.startSend({ timeoutMs: 5_000 }).done;
    expect(rest).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, foreground: { command: 'bash' } });
    expect(lines(rest.viewport)).toContain('late-6');
  });

  it('a wait-only send at an idle prompt answers at once', async () => {
    const engine = await testEngine();
    const session = await engine.spawn();
    await session.startSend({ text: 'true' }).done;
    const idle = await session.startSend({}).done;
    expect(idle).toMatchObject({ waitReason: 'stdin_read', viewport: '', foreground: { command: 'bash' } });
    expect(idle.exitCode).toBeUndefined(); // the prompt's status was reported with `true` already
    expect(idle.elapsedMs).toBeLessThan(500);
  });
});

describe('what the probes cannot see', () => {
  it('a relay (`script`) is not proof: inferred_idle after silence, and the next command runs in bash', async () => {
    const engine = await testEngine({ idleSilenceMs: 400 });
    const session = await engine.spawn();
    const relay = await session.startSend({ text: "script -qc 'sleep 1; echo X' /dev/null" }).done;
    expect(relay.waitReason).toBe('inferred_idle');
    expect(relay.elapsedMs).toBeGreaterThanOrEqual(390);
    // Keep waiting (each wait-only send is again inferred_idle while the relay runs) until the prompt.
    let seen = relay.viewport;
    for (let wait = 0; wait < 10; wait++) {
      const more = await session.startSend({ timeoutMs: 5_000 }).done;
      seen += more.viewport;
      if (more.waitReason === 'stdin_read') break;
      expect(more.waitReason).toBe('inferred_idle');
    }
    expect(lines(seen)).toContain('X');
    const next = await session.startSend({ text: 'echo in-bash-$((6*7))' }).done;
    expect(next).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    expect(lines(next.viewport)).toContain('in-bash-42');
  });

  it('a silent unterminated line while nothing runs settles inferred_idle', async () => {
    const engine = await testEngine({ idleSilenceMs: 300 });
    const session = await engine.spawn();
    const result = await session.startSend({ text: "printf 'Password: '; sleep 3" }).done;
    expect(result.waitReason).toBe('inferred_idle');
    await session.signal('SIGINT');
  });
});

describe('proven waits', () => {
  it('rule 4: `read x` given text without Enter is stdin_read after handoffGraceMs, not silence', async () => {
    const engine = await testEngine({ idleSilenceMs: 3_000, handoffGraceMs: 200 });
    const session = await engine.spawn();
    expect((await session.startSend({ text: 'read x' }).done).waitReason).toBe('stdin_read');
    const partial = await session.startSend({ text: 'abc', submit: false }).done;
    expect(partial.waitReason).toBe('stdin_read');
    expect(partial.elapsedMs).toBeGreaterThanOrEqual(190);
    expect(partial.elapsedMs).toBeLessThan(1_500);
    const done = await session.startSend({ text: 'def' }).done;
    expect(done).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    const value = await session.startSend({ text: 'echo "x=$x"' }).done;
    expect(lines(value.viewport)).toContain('x=abcdef');
  });

  it('`read -e` (the shell in its line editor) is stdin_read at once, without an exit code', async () => {
    const engine = await testEngine({ idleSilenceMs: 3_000 });
    const session = await engine.spawn();
    const asked = await session.startSend({ text: "read -e -p 'name? ' v" }).done;
    expect(asked.waitReason).toBe('stdin_read');
    expect(asked.exitCode).toBeUndefined();
    expect(asked.elapsedMs).toBeLessThan(1_000);
    const answered = await session.startSend({ text: 'ada' }).done;
    expect(answered).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
  });

  it('a reader outside the foreground group that opened the terminal itself counts (pinentry-like)', async () => {
    const engine = await testEngine({ idleSilenceMs: 3_000 });
    const session = await engine.spawn();
    const program = [
      'import os, sys',
      'fd = os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY)',
      "os.write(fd, b'PIN: ')",
      "print('pin-' + str(len(os.read(fd, 100).strip()) * 7), flush=True)",
    ].join('; ');
    const asked = await session.startSend({ text: `setsid -w python3 -c "${program}" $(tty)` }).done;
    expect(asked.waitReason).toBe('stdin_read');
    expect(asked.foreground?.command).toMatch(/^python3/);
    expect(asked.elapsedMs).toBeLessThan(2_500);
    const answered = await session.startSend({ text: '123456' }).done;
    expect(answered).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    expect(lines(answered.viewport)).toContain('pin-42');
  });
});

describe('a program that is exiting is never waiting', () => {
  const programs: [string, string, string][] = [
    ['node', 'node', '.exit'],
    ['python3 exit()', 'python3 -q', 'exit()'],
    ['python3 quit()', 'python3 -q', 'quit()'],
    ['sqlite3', 'sqlite3', '.quit'],
    ['bc', 'bc -q', 'quit'],
  ];
  for (const [name, start, leave] of programs) {
    it(`${name}: leaving settles at the shell's prompt with an exit code; the next command runs in bash`, async () => {
      const engine = await testEngine();
      const session = await engine.spawn();
      for (let round = 0; round < 3; round++) {
        const entered = await session.startSend({ text: start }).done;
        expect(entered.waitReason).toBe('stdin_read');
        expect(entered.exitCode).toBeUndefined();
        const left = await session.startSend({ text: leave }).done;
        expect(left, left.viewport).toMatchObject({
          waitReason: 'stdin_read',
          foreground: { command: 'bash' },
        });
        expect(left.exitCode).toBeTypeOf('number');
        const next = await session.startSend({ text: 'echo in-bash-$((6*7))' }).done;
        expect(next).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
        expect(lines(next.viewport)).toContain('in-bash-42');
      }
    });
  }
});

describe('waitFor', () => {
  it('`python3 -m http.server 0` settles `pattern` well under a second; SIGINT then frees it', async () => {
    const engine = await testEngine();
    const session = await engine.spawn();
    const server = await session.startSend({ text: 'python3 -m http.server 0', waitFor: 'Serving HTTP on' })
      .done;
    expect(server.waitReason).toBe('pattern');
    expect(server.elapsedMs).toBeLessThan(1_000);
    expect(server.viewport).toMatch(/Serving HTTP on/);
    expect(server.foreground?.command).toMatch(/^python3/);
    await session.signal('SIGINT');
    const freed = await session.startSend({}).done;
    expect(freed.waitReason).toBe('stdin_read');
    expect(freed.exitCode).toBeTypeOf('number');
  });

  it('the echo of the typed command never matches; the output does', async () => {
    const engine = await testEngine();
    const session = await engine.spawn();
    const result = await session.startSend({ text: 'sleep 0.4; echo waited-ok', waitFor: 'waited-ok' }).done;
    expect(result.waitReason).toBe('pattern');
    expect(result.elapsedMs).toBeGreaterThanOrEqual(390);
    expect(lines(result.viewport)).toContain('waited-ok');
  });

  it('a partial line matches too, and a wait-only send looks at output since the previous result', async () => {
    const engine = await testEngine();
    const session = await engine.spawn();
    const asked = await session.startSend({
      text: "sleep 0.3; printf 'Continue? [y/N] '; sleep 5",
      waitFor: '\\[y/N\\]',
    }).done;
    expect(asked.waitReason).toBe('pattern');
    expect(asked.viewport.endsWith('Continue? [y/N] ')).toBe(true);
    const again = await session.startSend({ waitFor: 'Continue\\?' }).done;
    expect(again.waitReason).toBe('pattern'); // the line arrived before; no new output needed
    await session.signal('SIGINT');
  });
});

describe('continuity of output', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-pty-continuity-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a 50 MB cat ends with the last line of the file; the next result holds only its own command', async () => {
    const file = join(dir, 'big.txt');
    const line = `${'y'.repeat(99)}\n`;
    writeFileSync(file, `${line.repeat(500_000)}last-line-of-the-file\n`);
    const engine = await testEngine();
    const session = await engine.spawn();
    const cat = await session.startSend({ text: `cat ${file}` }).done;
    expect(cat).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, truncated: true });
    expect(cat.viewport.endsWith('last-line-of-the-file')).toBe(true);
    const next = await session.startSend({ text: 'echo tail-check' }).done;
    expect(lines(next.viewport)).toEqual(['echo tail-check', 'tail-check']);
  });

  it("a background job's line printed between sends leads the next result", async () => {
    const engine = await testEngine();
    const session = await engine.spawn();
    await session.startSend({ text: '(sleep 0.3; echo bg-$((6*7))) &' }).done;
    await sleep(800);
    const next = await session.startSend({ text: 'echo fg-$((6*7))' }).done;
    const got = lines(next.viewport);
    expect(got).toContain('bg-42');
    expect(got.indexOf('bg-42')).toBeLessThan(got.indexOf('fg-42'));
    // read() does not move the cursor: the next result starts after this one, not after the read.
    await session.read();
    const after = await session.startSend({ text: 'echo again' }).done;
    expect(after.viewport).not.toContain('bg-42');
  });
});
