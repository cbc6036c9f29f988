/**
 * Limit events in the words of a result (SPEC §4.8): `terminal_send` renders what its result's
 * `limitEvents` say and carries them in its JSON; `terminal_open` reports the session's limits.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runTerminalTool, TERMINAL_TOOLS } from '../../../../src/main/tools/catalog.js';
import { renderLimitEvents } from '../../../../src/main/tools/limit-note.js';
import type { TerminalToolContext } from '../../../../src/main/tools/tool.js';
import type { SessionLimits } from '../../../../src/shared/types.js';
import { createFakeHost, type FakeHost } from '../../../support/fake-host.js';

const MIB = 1024 * 1024;
const LIMITS: SessionLimits = {
  memory: { bytes: 512 * MIB, engineBytes: 2048 * MIB, enforcedBy: 'cgroup-v1' },
  pids: { max: 256, enforcedBy: 'cgroup-v1' },
  cpu: { weight: 'equal', enforcedBy: 'cgroup-v1' },
};

describe('the words of limit events', () => {
  it('names an OOM kill and refused forks with the limits they hit, and nothing without events', () => {
    expect(renderLimitEvents({ oomKills: 1, pidsRefused: 312 }, LIMITS)).toEqual([
      '[limit: out of memory — a process was killed (session memory limit 512 MiB)]',
      '[limit: process limit reached — 312 forks refused (session limit 256)]',
    ]);
    expect(renderLimitEvents({ oomKills: 3, pidsRefused: 0 }, LIMITS)).toEqual([
      '[limit: out of memory — 3 processes were killed (session memory limit 512 MiB)]',
    ]);
    expect(renderLimitEvents(undefined, LIMITS)).toEqual([]);
    expect(renderLimitEvents({ oomKills: 0, pidsRefused: 1 }, LIMITS)).toEqual([
      '[limit: process limit reached — 1 fork refused (session limit 256)]',
    ]);
  });
});

describe('terminal tools carry limits and limit events', () => {
  let fixture: FakeHost;
  let ctx: TerminalToolContext;

  beforeEach(async () => {
    fixture = await createFakeHost('limit-note-');
    ctx = { pty: fixture.host.service('pty'), owner: 'model' };
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  it('terminal_send renders the events after the session line and returns them; terminal_open the limits', async () => {
    const opened = await runTerminalTool('terminal_open', {}, ctx);
    if (opened.isError) throw new Error(opened.text);
    const session = fixture.engine.spawned.at(-1)!;
    session.status_ = { ...session.status_, limits: LIMITS };
    session.script = () => ({
      viewport: 'Killed\n',
      exitCode: 137,
      limitEvents: { oomKills: 1, pidsRefused: 0 },
      sessionStatus: { kind: 'running', containment: 'cgroup', limits: LIMITS },
    });
    const sessionId = (opened.json as { sessionId: string }).sessionId;
    const sent = await runTerminalTool('terminal_send', { sessionId, text: 'python3 hog.py' }, ctx);
    if (sent.isError) throw new Error(sent.text);
    expect(sent.text.split('\n')).toContain(
      '[limit: out of memory — a process was killed (session memory limit 512 MiB)]',
    );
    expect(sent.json).toMatchObject({ limitEvents: { oomKills: 1, pidsRefused: 0 } });
    // A client that reads only the JSON gets the same words (SPEC §7 "Both forms carry the whole truth").
    expect((sent.json as { hint?: string }).hint).toContain(
      '[limit: out of memory — a process was killed (session memory limit 512 MiB)]',
    );
    const send = TERMINAL_TOOLS.find((tool) => tool.name === 'terminal_send')!;
    expect(send.output.safeParse(sent.json).error).toBeUndefined();
    const open = TERMINAL_TOOLS.find((tool) => tool.name === 'terminal_open')!;
    expect(open.output.safeParse(opened.json).error).toBeUndefined();
    expect(opened.json).toHaveProperty('limits.memory.enforcedBy');
  });
});
