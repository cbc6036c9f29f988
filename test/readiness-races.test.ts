/**
 * Races that real processes cannot reproduce on demand, pinned with fake /proc samples (SPEC §4.2):
 * the marker arriving before the foreground handoff, a wait that already existed before the write, a
 * changed foreground group, and unreadable state. The readiness code under test is the real one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { resolveEngineConfig } from '../src/shared/config.js';
import { LineRing } from '../src/worker/line-ring.js';
import { OutputWindow } from '../src/worker/output-window.js';
import { baselineOf, judgeReadiness, type ShellIdentity } from '../src/worker/readiness.js';
import { type SendEnvironment, SendOperation } from '../src/worker/send-operation.js';
import type { ForegroundSample, ThreadWait } from '../src/worker/stdin-wait.js';

const NONCE = 'feedface';
const SHELL: ShellIdentity = { pid: 100, pgrp: 100 };
const marker = (exit: number, pid = SHELL.pid) => `133;D;${exit};${NONCE};${pid};/work`;

function thread(pid: number, verdict: ThreadWait['verdict'], switches = 1, syscall = 'read'): ThreadWait {
  return { pid, tid: pid, verdict, switches, syscall };
}

function sample(tpgid: number, members: ThreadWait[]): ForegroundSample {
  return {
    tpgid,
    shellPgrp: SHELL.pgrp,
    members,
    anyWaiting: members.some((m) => m.verdict === 'waiting'),
    at: 0,
  } as ForegroundSample;
}

/** A send environment whose foreground samples the test scripts. */
function fakeEnvironment(
  overrides: Partial<SendEnvironment> & { current: () => ForegroundSample | undefined },
) {
  const config = resolveEngineConfig({
    idleSilenceMs: 150,
    handoffGraceMs: 200,
    pollIntervalMs: 20,
    timeoutMs: 5_000,
  });
  const env: SendEnvironment = {
    config,
    nonce: NONCE,
    sample: overrides.current,
    shell: () => SHELL,
    drainReplies: async () => undefined,
    writeInput: async () => 'written',
    interrupt: () => SHELL.pgrp,
    foreground: () => undefined,
    status: () => ({ kind: 'running' }),
    output: new OutputWindow(new LineRing({ maxLines: 1_000, maxBytes: 65_536 })),
    flushOutput: () => undefined,
    lastReplyAt: () => Number.NEGATIVE_INFINITY,
    ...overrides,
  };
  return env;
}

const ops: SendOperation[] = [];
afterEach(() => {
  for (const op of ops.splice(0)) op.sessionExited(); // clears every timer the send armed
});

describe('judgeReadiness', () => {
  const candidate = { exitCode: 0, shellPid: SHELL.pid, cwd: '/', at: 0 };

  it('prompt evidence needs the shell group in the foreground and the shell blocked on the terminal', () => {
    const atPrompt = sample(100, [thread(100, 'waiting', 1, 'pselect6')]);
    expect(
      judgeReadiness({ candidate, shell: SHELL, sample: atPrompt, baseline: undefined, leftWait: new Set() })
        .kind,
    ).toBe('prompt');
    const jobInFront = sample(200, [thread(200, 'not_waiting')]);
    expect(
      judgeReadiness({
        candidate,
        shell: SHELL,
        sample: jobInFront,
        baseline: undefined,
        leftWait: new Set(),
      }).kind,
    ).toBe('none');
    const shellRunning = sample(100, [thread(100, 'not_waiting')]);
    expect(
      judgeReadiness({
        candidate,
        shell: SHELL,
        sample: shellRunning,
        baseline: undefined,
        leftWait: new Set(),
      }).kind,
    ).toBe('none');
  });

  it('a marker from another pid (a nested shell) is never prompt evidence', () => {
    const nested = { ...candidate, shellPid: 555 };
    const s = sample(100, [thread(100, 'waiting', 1, 'pselect6')]);
    expect(
      judgeReadiness({ candidate: nested, shell: SHELL, sample: s, baseline: undefined, leftWait: new Set() })
        .kind,
    ).toBe('none');
  });

  it('unknown or unreadable state is never positive evidence', () => {
    expect(
      judgeReadiness({ candidate, shell: SHELL, sample: undefined, baseline: undefined, leftWait: new Set() })
        .kind,
    ).toBe('none');
    const unknown = sample(200, [thread(200, 'unknown')]);
    expect(
      judgeReadiness({
        candidate: undefined,
        shell: SHELL,
        sample: unknown,
        baseline: undefined,
        leftWait: new Set(),
      }).kind,
    ).toBe('none');
  });

  it('the shell waiting in its own line editor is not a stdin wait (only its marker proves the prompt)', () => {
    const s = sample(100, [thread(100, 'waiting', 1, 'pselect6')]);
    expect(
      judgeReadiness({
        candidate: undefined,
        shell: SHELL,
        sample: s,
        baseline: undefined,
        leftWait: new Set(),
      }).kind,
    ).toBe('none');
    const readBuiltin = sample(100, [thread(100, 'waiting', 1, 'read')]);
    expect(
      judgeReadiness({
        candidate: undefined,
        shell: SHELL,
        sample: readBuiltin,
        baseline: undefined,
        leftWait: new Set(),
      }).kind,
    ).toBe('stdin_wait');
  });

  it('a wait that existed before the write counts only after the thread ran or left it', () => {
    const before = sample(200, [thread(200, 'waiting', 10)]);
    const baseline = baselineOf(before);
    const same = sample(200, [thread(200, 'waiting', 10)]);
    expect(
      judgeReadiness({ candidate: undefined, shell: SHELL, sample: same, baseline, leftWait: new Set() })
        .kind,
    ).toBe('none');
    const ran = sample(200, [thread(200, 'waiting', 11)]);
    expect(
      judgeReadiness({ candidate: undefined, shell: SHELL, sample: ran, baseline, leftWait: new Set() }).kind,
    ).toBe('stdin_wait');
    expect(
      judgeReadiness({ candidate: undefined, shell: SHELL, sample: same, baseline, leftWait: new Set([200]) })
        .kind,
    ).toBe('stdin_wait');
  });

  it('a different foreground group is new evidence even with unchanged counters', () => {
    const baseline = baselineOf(sample(200, [thread(200, 'waiting', 10)]));
    const other = sample(300, [thread(300, 'waiting', 10)]);
    expect(
      judgeReadiness({ candidate: undefined, shell: SHELL, sample: other, baseline, leftWait: new Set() })
        .kind,
    ).toBe('stdin_wait');
  });
});

describe('SendOperation races', () => {
  it('marker before the foreground handoff: the grace lets the handoff win (stdin_read with exit code)', async () => {
    let current = sample(200, [thread(200, 'not_waiting')]); // the job still owns the foreground
    const op = new SendOperation(fakeEnvironment({ current: () => current }), { text: 'job', submit: true });
    ops.push(op);
    await op.start();
    op.osc(marker(7));
    op.text('$ ');
    op.endOfChunk();
    // Past the silence bound (150 ms) the candidate is kept for handoffGraceMs (200 ms) …
    await new Promise((resolve) => setTimeout(resolve, 220));
    expect(op.settled).toBe(false);
    // … and the kernel now shows the shell back in the foreground, blocked at its prompt.
    current = sample(100, [thread(100, 'waiting', 1, 'pselect6')]);
    const result = await op.done;
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 7 });
  });

  it('marker without a handoff settles inferred_idle only after silence + grace, not before', async () => {
    const current = sample(200, [thread(200, 'not_waiting')]);
    const op = new SendOperation(fakeEnvironment({ current: () => current }), { text: 'job', submit: true });
    ops.push(op);
    const started = performance.now();
    await op.start();
    op.osc(marker(0));
    op.text('$ ');
    op.endOfChunk();
    const result = await op.done;
    expect(result.waitReason).toBe('inferred_idle');
    expect(result.exitCode).toBeUndefined(); // not proven: no marker status reported
    expect(performance.now() - started).toBeGreaterThanOrEqual(150 + 200 - 5);
  });

  it('a pre-existing wait in the same group does not settle the send; the same thread running again does', async () => {
    let current = sample(200, [thread(200, 'waiting', 10)]);
    const op = new SendOperation(fakeEnvironment({ current: () => current }), { text: '1+1', submit: true });
    ops.push(op);
    await op.start(); // the baseline is taken here: thread 200 already waiting with 10 switches
    op.text('1+1');
    op.endOfChunk();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(op.settled).toBe(false);
    current = sample(200, [thread(200, 'waiting', 12)]);
    op.newline();
    op.endOfChunk();
    expect((await op.done).waitReason).toBe('stdin_read');
  });

  it('a stdin wait right after a terminal reply was written is proven only once the reader had time to take it', async () => {
    // The program asked the terminal something and blocks on stdin; our reply is written but not yet
    // read (the pty's flush work and the scheduler lag under load). Its state looks like a stdin wait.
    let current = sample(200, [thread(200, 'not_waiting', 6)]);
    let replyAt = Number.NEGATIVE_INFINITY;
    const op = new SendOperation(fakeEnvironment({ current: () => current, lastReplyAt: () => replyAt }), {
      text: 'ask-the-terminal',
      submit: true,
    });
    ops.push(op);
    await op.start(); // the baseline: the program running
    current = sample(200, [thread(200, 'waiting', 7)]);
    op.text('\x1b[6n');
    replyAt = performance.now();
    op.endOfChunk();
    const started = replyAt;
    const result = await op.done;
    expect(result.waitReason).toBe('stdin_read');
    expect(performance.now() - started).toBeGreaterThanOrEqual(30);
  });

  it('evidence from before the write is discarded at the write boundary', async () => {
    const current = sample(100, [thread(100, 'waiting', 1, 'pselect6')]);
    let release!: () => void;
    const op = new SendOperation(
      fakeEnvironment({
        current: () => current,
        drainReplies: () => new Promise<void>((resolve) => (release = resolve)),
      }),
      { text: 'sleep 1', submit: true },
    );
    ops.push(op);
    const started = op.start();
    // An old prompt (marker + PS1) arrives while replies drain, before the write: it must not count.
    op.osc(marker(0));
    op.text('$ ');
    op.endOfChunk();
    release();
    await started;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(op.settled).toBe(false);
  });
});
