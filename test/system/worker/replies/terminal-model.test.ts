/**
 * The terminal model's replies with a real process: python3 in raw mode asks for the cursor position
 * through a pty and reads the answer from its terminal. The rules, one by one, are in
 * test/unit/worker/output-pipeline.test.ts.
 */
import { spawn } from 'node-pty';
import { afterEach, describe, expect, it } from 'vitest';
import { LineRing } from '../../../../dist/worker/output/line-ring.js';
import { TerminalModel } from '../../../../dist/worker/replies/terminal-model.js';

const open: { dispose(): void }[] = [];

afterEach(() => {
  for (const item of open.splice(0)) item.dispose();
});

describe('TerminalModel with a real process', () => {
  it('answers the cursor position request of python3 reading its terminal in raw mode', async () => {
    const script = [
      'import os, sys, tty',
      'tty.setraw(0)',
      'os.write(1, b"ab\\x1b[6n")',
      'reply = b""',
      'while not reply.endswith(b"R"): reply += os.read(0, 1)',
      'os.write(1, b"\\r\\nGOT " + reply[1:] + b"\\r\\n")',
    ].join('\n');
    const pty = spawn('python3', ['-c', script], {
      cols: 80,
      rows: 24,
      env: { ...process.env, TERM: 'dumb' },
    });
    const r = new TerminalModel({
      cols: 80,
      rows: 24,
      ring: new LineRing({ maxLines: 100, maxBytes: 1 << 16 }),
      reply: (data) => pty.write(data),
      marker: () => false,
    });
    open.push(r);
    let output = '';
    const exited = new Promise<number>((resolve) => pty.onExit(({ exitCode }) => resolve(exitCode)));
    pty.onData((data) => {
      output += data;
      r.write(data);
    });
    expect(await exited).toBe(0);
    expect(output).toContain('GOT [1;3R');
  });

  it('answers python3 asking for the cursor right after redrawing part of a block (issue 20)', async () => {
    // The redraw is a cursor-up frame cut off by the query where its second line would start. The
    // program waits at most 5 s for the answer and prints the position it read, or that none came.
    const script = [
      'import os, re, select, tty',
      'tty.setraw(0)',
      'os.write(1, b"a\\r\\nb\\r\\n\\x1b[2A\\r\\x1b[2Kx\\r\\n\\x1b[6n")',
      'reply = b""',
      'while not reply.endswith(b"R") and select.select([0], [], [], 5)[0]: reply += os.read(0, 1)',
      'cpr = re.search(rb"\\[(\\d+);(\\d+)R$", reply)',
      'os.write(1, b"\\r\\ncpr row=%d col=%d\\r\\n" % (int(cpr[1]), int(cpr[2])) if cpr else b"\\r\\nno reply\\r\\n")',
    ].join('\n');
    const pty = spawn('python3', ['-c', script], {
      cols: 80,
      rows: 24,
      env: { ...process.env, TERM: 'dumb' },
    });
    const r = new TerminalModel({
      cols: 80,
      rows: 24,
      ring: new LineRing({ maxLines: 100, maxBytes: 1 << 16 }),
      reply: (data) => pty.write(data),
      marker: () => false,
    });
    open.push(r);
    let output = '';
    const exited = new Promise<number>((resolve) => pty.onExit(({ exitCode }) => resolve(exitCode)));
    pty.onData((data) => {
      output += data;
      r.write(data);
    });
    expect(await exited).toBe(0);
    // Rows 1 and 2 hold a and b; two up, the frame's one line is redrawn, the cursor is below it.
    expect(output.split('\r\n')).toContain('cpr row=2 col=1');
  });
});
