// SPEC §4.7: no code path signals a process group it did not just verify, and never pid -1 or 1.
// The real path: a terminal whose foreground group holds no process of the session's tree is refused
// with SIGNAL_FAILED (and the stranger in that group is left alone). The unknown-group values (tpgid
// -1, 0, 1) cannot be produced by a live terminal on demand, so they are checked on the pure rule.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ProcStat } from '../../../../dist/shared/proc-stat.js';
import { groupOwnedByTree } from '../../../../dist/worker/proc/foreground-group.js';
import { isAlive, testEngine } from '../../../support/engine.js';
import { until } from '../../../support/until.js';

const FIXTURE = new URL('../../../fixtures/orphan-foreground.py', import.meta.url).pathname;

function stat(pid: number, pgrp: number, state = 'S'): ProcStat {
  return {
    pid,
    comm: 'x',
    state,
    ppid: 1,
    pgrp,
    session: 1,
    ttyNr: 0,
    tpgid: pgrp,
    flags: 0,
    threads: 1,
    startTime: 1,
  };
}

describe('foreground group as a signal target', () => {
  it('is refused when unknown (-1, 0) or init (1), even if a process of the tree claims it', () => {
    for (const tpgid of [-1, 0, 1]) expect(groupOwnedByTree(tpgid, [stat(tpgid, tpgid)])).toBeUndefined();
  });

  it('is accepted only when a live process of the tree is a member', () => {
    const tree = [stat(100, 100), stat(101, 101), stat(102, 103, 'Z')];
    expect(groupOwnedByTree(101, tree)).toBe(101);
    expect(groupOwnedByTree(103, tree)).toBeUndefined(); // only a zombie is in it
    expect(groupOwnedByTree(555, tree)).toBeUndefined(); // nobody of ours is in it
  });

  it('signal() refuses a foreground group with no process of the session, and leaves its member alone', async () => {
    const engine = await testEngine({ idleSilenceMs: 300, handoffGraceMs: 100 });
    const session = await engine.spawn();
    const op = session.startSend({ text: `python3 ${FIXTURE}` });
    op.done.catch(() => undefined); // settles as session_exit when the session closes
    let seen = '';
    let match: RegExpExecArray | null = null;
    const deadline = Date.now() + 8_000;
    while (match === null && Date.now() < deadline) {
      seen += (await op.readOutput()).delta;
      match = /orphan-group-(\d+) member-(\d+)/.exec(seen);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (match === null) throw new Error(`the fixture never handed the terminal over: ${seen}`);
    const group = Number(match[1]);
    const member = Number(match[2]);
    // The terminal's foreground group really is the orphan group (field 8 of the shell's stat).
    const shellStat = readFileSync(`/proc/${session.pid}/stat`, 'utf8');
    expect(Number(shellStat.slice(shellStat.lastIndexOf(')') + 2).split(' ')[5])).toBe(group);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGKILL'] as const) {
      await expect(session.signal(signal)).rejects.toMatchObject({ code: 'SIGNAL_FAILED' });
    }
    expect(isAlive(member)).toBe(true);
    await session.close();
    // Teardown still reaches it: it is a member of the session's POSIX session.
    await until('the orphan to die with the session', () => !isAlive(member));
  });
});
