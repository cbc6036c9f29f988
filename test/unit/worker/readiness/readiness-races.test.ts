/**
 * Races that real processes cannot reproduce on demand, pinned with fake /proc samples (SPEC §4.2):
 * the marker arriving before the foreground handoff, a wait that already existed before the write, a
 * changed foreground group, and unreadable state. The readiness code under test is the real one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { resolveEngineConfig } from '../../../../src/shared/config.js';
import { unenforcedLimits } from '../../../../src/shared/session-limits.js';
import { OutputPipeline } from '../../../../src/worker/output-pipeline.js';
import type { ForegroundSample, ThreadWait } from '../../../../src/worker/proc/stdin-wait.js';
import {
  baselineOf,
  judgeReadiness,
  type ReadinessInput,
  type ReadinessVerdict,
  type ShellIdentity,
} from '../../../../src/worker/readiness/readiness.js';
import { SendOperation } from '../../../../src/worker/readiness/send-operation.js';
import type { OutputPort, SendContext, TerminalPort } from '../../../../src/worker/readiness/send-ports.js';
import { bashDialect } from '../../../../src/worker/shell/bash.js';

const NONCE = 'feedface';
const SHELL: ShellIdentity = {
  pid: 100,
  pgrp: 100,
  markerPid: 100,
  isLineEditorWait: bashDialect.isLineEditorWait,
};
/**
 * How much earlier than `performance.now()` says a Node timer may fire: libuv measures a timer from the
 * loop time it cached when the current loop iteration began (in whole milliseconds), not from the moment
 * `setTimeout` was called. A 3 ms window was once measured as 2.48 ms.
 */
const TIMER_SLACK_MS = 1.5;

let promptsShown = 0;
/** Our marker payload; each call is a new prompt unless `prompt` repeats an earlier number (a repaint). */
const marker = (exit: number, prompt = ++promptsShown, pid = SHELL.pid) =>
  `133;D;${exit};${NONCE};${pid};${prompt};/work`;

function thread(pid: number, verdict: ThreadWait['verdict'], switches = 1, syscall = 'read'): ThreadWait {
  return { pid, tid: pid, verdict, switches, syscall };
}

function sample(tpgid: number, members: ThreadWait[]): ForegroundSample {
  return {
    tpgid,
    shellPgrp: SHELL.pgrp,
    members,
    anyWaiting: members.some((m) => m.verdict === 'waiting'),
    relay: false,
    at: 0,
  } as ForegroundSample;
}

/** judgeReadiness with the shell's line editor counting, as it does outside a cancel. */
function judge(
  input: Omit<ReadinessInput, 'shellEditorCounts'> & { shellEditorCounts?: boolean },
): ReadinessVerdict {
  return judgeReadiness({ shellEditorCounts: true, ...input });
}

/** Each send environment's output pipeline: the session's own (output-pipeline.ts), not a copy. */
const pipelines = new WeakMap<SendContext, OutputPipeline>();
/** The send each environment's pipeline feeds. */
const listeners = new WeakMap<SendContext, SendOperation>();
/** The pipeline a send is fed through. */
const pipelineOf = new WeakMap<SendOperation, OutputPipeline>();

/** A send on `env`, cleaned up after the test; feed it with the helpers below. */
function newOp(env: SendContext, options: ConstructorParameters<typeof SendOperation>[1]): SendOperation {
  const op = new SendOperation(env, options);
  listeners.set(env, op);
  pipelineOf.set(op, pipelines.get(env)!);
  ops.push(op);
  return op;
}

/** Output as the pty hands it over: queued in the pipeline, processed by `endOfChunk` (or its turn). */
function write(op: SendOperation, data: string): void {
  pipelineOf.get(op)!.write(data);
}

/** An OSC (our marker or not), as the shell prints it. */
function osc(op: SendOperation, payload: string): void {
  write(op, `\x1b]${payload}\x07`);
}

/** Printable text. */
function text(op: SendOperation, s: string): void {
  write(op, s);
}

/** A line end, as a pty delivers it. */
function newline(op: SendOperation): void {
  write(op, '\r\n');
}

/** The end of a pty read: the pipeline processes what was written (and tells the send). */
function endOfChunk(op: SendOperation): void {
  pipelineOf.get(op)!.flush();
}

/** What a test scripts of a send's session; the rest is a session at rest. */
interface FakeSession {
  /** The foreground sample now. */
  current: () => ForegroundSample | undefined;
  drainReplies?: TerminalPort['drainReplies'];
  lastReplyAt?: TerminalPort['lastReplyAt'];
  /** Delivers what the test scripted as read from the pty (the pipeline then processes it). */
  flushOutput?: () => void;
  drainOutput?: OutputPort['drain'];
  /** Called when the send samples /proc while its own flush of the output port is still running. */
  sampledInsideFlush?: () => void;
}

/** A send environment whose foreground samples the test scripts. */
function fakeEnvironment(fake: FakeSession): SendContext {
  const config = resolveEngineConfig({
    idleSilenceMs: 150,
    handoffGraceMs: 200,
    pollIntervalMs: 20,
    timeoutMs: 5_000,
  });
  let env: SendContext | undefined;
  const pipeline = new OutputPipeline({
    rows: 24,
    cols: 80,
    config,
    nonce: NONCE,
    prompt: bashDialect.prompt,
    replies: { offer: () => undefined, markerParsed: () => undefined },
    listener: () => (env === undefined ? undefined : listeners.get(env)),
  });
  openPipelines.push(pipeline);
  const window = pipeline.output;
  let cursor = window.mark();
  /** Calls of the output port's flush in progress (the pipeline may feed the send meanwhile). */
  let flushDepth = 0;
  env = {
    config,
    exactTier: true,
    terminal: {
      drainReplies: fake.drainReplies ?? (async () => undefined),
      writeInput: async () => 'written',
      interrupt: () => SHELL.pgrp,
      lastReplyAt: fake.lastReplyAt ?? (() => Number.NEGATIVE_INFINITY),
    },
    probe: {
      sample: () => {
        if (flushDepth > 0) fake.sampledInsideFlush?.();
        return fake.current();
      },
      shell: () => SHELL,
      foreground: () => undefined,
      status: () => ({
        kind: 'running',
        containment: 'process-tree',
        limits: unenforcedLimits('no cgroups'),
      }),
    },
    output: {
      prompt: pipeline.prompt,
      window,
      resultCursor: () => cursor,
      advanceResultCursor: (mark) => {
        cursor = mark;
      },
      // A test's own flush delivers what it scripted as read from the pty; the pipeline then processes
      // everything read, as the session's flush does.
      flush: () => {
        flushDepth++;
        try {
          fake.flushOutput?.();
          pipeline.flush();
        } finally {
          flushDepth--;
        }
      },
      drain: fake.drainOutput ?? (() => 'unavailable'),
    },
  };
  pipelines.set(env, pipeline);
  return env;
}

const openPipelines: OutputPipeline[] = [];

/** bash blocked at its prompt, owning the terminal (no input can be typed ahead of a job). */
const AT_PROMPT = sample(SHELL.pgrp, [thread(SHELL.pid, 'waiting', 1, 'pselect6')]);

const ops: SendOperation[] = [];
afterEach(() => {
  for (const op of ops.splice(0)) op.sessionExited(); // clears every timer the send armed
  for (const pipeline of openPipelines.splice(0)) pipeline.dispose();
});

describe('judgeReadiness', () => {
  const candidate = { exitCode: 0, shellPid: SHELL.pid, promptNumber: 1, cwd: '/', at: 0, reported: false };

  it('a prompt read after the write boundary, with the shell still in the wait it was in before the write, is the previous prompt', () => {
    // The shell printed marker + prompt and blocked before the write; node-pty read those bytes only after
    // the boundary, and the kernel has not yet woken the shell with this send's input (its counters are
    // unchanged). Settling here would report the previous command's exit code before this one ran.
    const baseline = baselineOf(sample(100, [thread(100, 'waiting', 7, 'pselect6')]));
    const stillThere = sample(100, [thread(100, 'waiting', 7, 'pselect6')]);
    expect(
      judge({ candidate, shell: SHELL, sample: stillThere, baseline, leftWait: new Set() }).kind,
    ).not.toBe('prompt');
    // Once it ran (read this send's input, printed its own prompt), the same wait is new evidence.
    const ranSince = sample(100, [thread(100, 'waiting', 9, 'pselect6')]);
    expect(judge({ candidate, shell: SHELL, sample: ranSince, baseline, leftWait: new Set() }).kind).toBe(
      'prompt',
    );
  });

  it('prompt evidence needs the shell group in the foreground and the shell blocked on the terminal', () => {
    const atPrompt = sample(100, [thread(100, 'waiting', 1, 'pselect6')]);
    expect(
      judge({ candidate, shell: SHELL, sample: atPrompt, baseline: undefined, leftWait: new Set() }).kind,
    ).toBe('prompt');
    const jobInFront = sample(200, [thread(200, 'not_waiting')]);
    expect(
      judge({
        candidate,
        shell: SHELL,
        sample: jobInFront,
        baseline: undefined,
        leftWait: new Set(),
      }).kind,
    ).toBe('none');
    const shellRunning = sample(100, [thread(100, 'not_waiting')]);
    expect(
      judge({
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
      judge({ candidate: nested, shell: SHELL, sample: s, baseline: undefined, leftWait: new Set() }).kind,
    ).not.toBe('prompt'); // the shell in its line editor is a stdin wait at most: no exit code
  });

  it('unknown or unreadable state is never positive evidence', () => {
    expect(
      judge({ candidate, shell: SHELL, sample: undefined, baseline: undefined, leftWait: new Set() }).kind,
    ).toBe('none');
    const unknown = sample(200, [thread(200, 'unknown')]);
    expect(
      judge({
        candidate: undefined,
        shell: SHELL,
        sample: unknown,
        baseline: undefined,
        leftWait: new Set(),
      }).kind,
    ).toBe('none');
  });

  it('the shell waiting in its own line editor is a stdin wait (a continuation prompt), except during a cancel', () => {
    const s = sample(100, [thread(100, 'waiting', 1, 'pselect6')]);
    const input = {
      candidate: undefined,
      shell: SHELL,
      sample: s,
      baseline: undefined,
      leftWait: new Set<number>(),
    };
    expect(judge(input).kind).toBe('stdin_wait');
    expect(judge({ ...input, shellEditorCounts: false }).kind).toBe('none');
    const readBuiltin = sample(100, [thread(100, 'waiting', 1, 'read')]);
    expect(judge({ ...input, sample: readBuiltin, shellEditorCounts: false }).kind).toBe('stdin_wait');
  });

  it('a relay (the wait also watches a socket or pty master) is never a stdin wait', () => {
    const relay = sample(200, [thread(200, 'relay', 1, 'poll')]);
    expect(
      judge({ candidate: undefined, shell: SHELL, sample: relay, baseline: undefined, leftWait: new Set() })
        .kind,
    ).toBe('none');
  });

  it('a reader outside the foreground group counts when its wait is new, not when it predates the write', () => {
    const pinentry = { ...thread(300, 'waiting', 4), outside: true };
    const job = thread(200, 'not_waiting', 9, 'wait4');
    const fresh = judge({
      candidate: undefined,
      shell: SHELL,
      sample: sample(200, [job, pinentry]),
      baseline: baselineOf(sample(200, [job])),
      leftWait: new Set(),
    });
    expect(fresh).toMatchObject({ kind: 'stdin_wait', pid: 300 });
    const old = judge({
      candidate: undefined,
      shell: SHELL,
      sample: sample(200, [job, pinentry]),
      baseline: baselineOf(sample(100, [pinentry])),
      leftWait: new Set(),
    });
    expect(old.kind).toBe('none'); // a change of foreground does not make an outsider's old wait new
  });

  it('a wait that existed before the write is fresh once the thread ran or left it, else unwoken', () => {
    const before = sample(200, [thread(200, 'waiting', 10)]);
    const baseline = baselineOf(before);
    const same = sample(200, [thread(200, 'waiting', 10)]);
    const unwoken: ReadinessVerdict = judge({
      candidate: undefined,
      shell: SHELL,
      sample: same,
      baseline,
      leftWait: new Set(),
    });
    expect(unwoken).toMatchObject({ kind: 'unwoken_wait', tid: 200, switches: 10 });
    const ran = sample(200, [thread(200, 'waiting', 11)]);
    expect(
      judge({ candidate: undefined, shell: SHELL, sample: ran, baseline, leftWait: new Set() }).kind,
    ).toBe('stdin_wait');
    expect(
      judge({ candidate: undefined, shell: SHELL, sample: same, baseline, leftWait: new Set([200]) }).kind,
    ).toBe('stdin_wait');
  });

  it('a different foreground group is new evidence even with unchanged counters', () => {
    const baseline = baselineOf(sample(200, [thread(200, 'waiting', 10)]));
    const other = sample(300, [thread(300, 'waiting', 10)]);
    expect(
      judge({ candidate: undefined, shell: SHELL, sample: other, baseline, leftWait: new Set() }).kind,
    ).toBe('stdin_wait');
  });
});

describe('SendOperation races', () => {
  it('marker before the foreground handoff: the grace lets the handoff win (stdin_read with exit code)', async () => {
    let current = AT_PROMPT; // the shell reads the line at once
    const op = newOp(fakeEnvironment({ current: () => current }), { text: 'job', submit: true });
    await op.start();
    current = sample(200, [thread(200, 'not_waiting')]); // the job still owns the foreground
    osc(op, marker(7));
    text(op, '$ ');
    endOfChunk(op);
    // Past the silence bound (150 ms) the candidate is kept for handoffGraceMs (200 ms) …
    await new Promise((resolve) => setTimeout(resolve, 220));
    expect(op.settled).toBe(false);
    // … and the kernel now shows the shell back in the foreground, blocked at its next prompt.
    current = sample(100, [thread(100, 'waiting', 3, 'pselect6')]);
    const result = await op.done;
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 7 });
  });

  it('marker without a handoff settles inferred_idle only after silence + grace, not before', async () => {
    let current = AT_PROMPT;
    const op = newOp(fakeEnvironment({ current: () => current }), { text: 'job', submit: true });
    const started = performance.now();
    await op.start();
    current = sample(200, [thread(200, 'not_waiting')]);
    osc(op, marker(0));
    text(op, '$ ');
    endOfChunk(op);
    const result = await op.done;
    expect(result.waitReason).toBe('inferred_idle');
    expect(result.exitCode).toBeUndefined(); // not proven: no marker status reported
    expect(performance.now() - started).toBeGreaterThanOrEqual(150 + 200 - 5);
  });

  it('a pre-existing wait the write did not wake is proven only after handoffGraceMs of unchanged counters', async () => {
    const current = sample(200, [thread(200, 'waiting', 10)]);
    const op = newOp(fakeEnvironment({ current: () => current }), { text: 'abc', submit: false });
    await op.start(); // the baseline is taken here: thread 200 already waiting with 10 switches
    text(op, 'abc'); // the echo (canonical mode: the line discipline echoes, the reader sleeps on)
    endOfChunk(op);
    const echoAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(op.settled).toBe(false);
    const result = await op.done;
    expect(result.waitReason).toBe('stdin_read');
    expect(performance.now() - echoAt).toBeGreaterThanOrEqual(200 - 5); // handoffGraceMs
  });

  it('a pre-existing wait in the same group that the write woke settles once it runs again', async () => {
    let current = sample(200, [thread(200, 'waiting', 10)]);
    const op = newOp(fakeEnvironment({ current: () => current }), { text: '1+1', submit: true });
    await op.start();
    current = sample(200, [thread(200, 'not_waiting', 11)]);
    text(op, '1+1');
    endOfChunk(op);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(op.settled).toBe(false);
    current = sample(200, [thread(200, 'waiting', 12)]);
    newline(op);
    endOfChunk(op);
    expect((await op.done).waitReason).toBe('stdin_read');
  });

  it('the shell in its line editor after only part of the typed line arrived is no proof; after the Enter it is', async () => {
    // Under load the kernel can hand bash `echo x` before the final \r: readline echoes it and waits for
    // the rest, in its line editor, with nothing run yet. That must not settle as a continuation prompt.
    let current = sample(SHELL.pgrp, [thread(SHELL.pid, 'waiting', 10, 'pselect6')]);
    const op = newOp(fakeEnvironment({ current: () => current }), { text: 'echo x', submit: true });
    await op.start();
    current = sample(SHELL.pgrp, [thread(SHELL.pid, 'waiting', 11, 'pselect6')]);
    text(op, 'echo x');
    endOfChunk(op);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(op.settled).toBe(false);
    // The Enter's echo arrived and the shell waits in its line editor again: a continuation prompt.
    newline(op);
    text(op, '> ');
    current = sample(SHELL.pgrp, [thread(SHELL.pid, 'waiting', 12, 'pselect6')]);
    endOfChunk(op);
    expect((await op.done).waitReason).toBe('stdin_read');
  });

  it('at the wait bound: `running` when the foreground was read, `timeout` when it could not be', async () => {
    const busy = sample(200, [thread(200, 'not_waiting', 3, 'clock_nanosleep')]);
    const seen = newOp(fakeEnvironment({ current: () => busy }), {
      text: 'sleep 9',
      submit: true,
      timeoutMs: 400,
    });
    await seen.start();
    newline(seen);
    endOfChunk(seen);
    const running = await seen.done;
    expect(running.waitReason).toBe('running'); // silence (150 ms) did not settle it: the line ended
    expect(running.elapsedMs).toBeGreaterThanOrEqual(395);
    const blind = newOp(fakeEnvironment({ current: () => undefined }), {
      text: 'x',
      submit: true,
      timeoutMs: 400,
    });
    await blind.start();
    expect((await blind.done).waitReason).toBe('timeout');
  });

  it('a relay settles inferred_idle after the silence bound, never stdin_read', async () => {
    const relay = sample(200, [thread(200, 'relay', 3, 'poll')]);
    relay.relay = true;
    const op = newOp(fakeEnvironment({ current: () => relay }), {
      text: 'script -qc sh /dev/null',
      submit: true,
    });
    await op.start();
    newline(op);
    endOfChunk(op);
    const started = performance.now();
    const result = await op.done;
    expect(result.waitReason).toBe('inferred_idle');
    expect(performance.now() - started).toBeGreaterThanOrEqual(150 - 5);
  });

  it('a stdin wait right after a terminal reply was written is proven only once the reader had time to take it', async () => {
    // The program asked the terminal something and blocks on stdin; our reply is written but not yet
    // read (the pty's flush work and the scheduler lag under load). Its state looks like a stdin wait.
    let current = sample(200, [thread(200, 'not_waiting', 6)]);
    let replyAt = Number.NEGATIVE_INFINITY;
    const op = newOp(fakeEnvironment({ current: () => current, lastReplyAt: () => replyAt }), {
      text: 'ask-the-terminal',
      submit: true,
    });
    await op.start(); // the baseline: the program running
    current = sample(200, [thread(200, 'waiting', 7)]);
    text(op, '\x1b[6n');
    replyAt = performance.now();
    endOfChunk(op);
    const started = replyAt;
    const result = await op.done;
    expect(result.waitReason).toBe('stdin_read');
    expect(performance.now() - started).toBeGreaterThanOrEqual(30 - TIMER_SLACK_MS);
  });

  it('a stdin wait settles once a drain proves its output read, on the next turns, without a quiet window', async () => {
    let current = AT_PROMPT; // the shell owns the terminal at the write
    const drains: string[] = [];
    const op = newOp(
      fakeEnvironment({
        current: () => current,
        drainOutput: () => {
          drains.push('empty');
          return 'empty';
        },
      }),
      { text: 'read x', submit: true },
    );
    await op.start();
    current = sample(200, [thread(200, 'waiting', 7)]);
    text(op, 'read x'); // the echo, the send's first output: its writer may block moments later
    newline(op);
    endOfChunk(op);
    for (let turn = 0; turn < 5 && !op.settled; turn++) await new Promise((r) => setImmediate(r));
    expect(op.settled).toBe(true);
    expect((await op.done).waitReason).toBe('stdin_read');
    expect(drains.length).toBeGreaterThanOrEqual(2); // at the first sighting and at the confirm
  });

  it('a stdin wait is not proven while a drain still finds output, however long the wait looks unchanged', async () => {
    let current = AT_PROMPT; // the shell owns the terminal at the write
    let pending: 'read' | 'empty' = 'read';
    const op = newOp(fakeEnvironment({ current: () => current, drainOutput: () => pending }), {
      text: 'python3',
      submit: true,
    });
    await op.start();
    current = sample(200, [thread(200, 'waiting', 7)]);
    text(op, '>>> ');
    endOfChunk(op);
    // Far past the confirm window (3 ms) with the same thread, counters and output: the kernel still
    // held output, so the prompt the reader printed may not be in the result yet.
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(op.settled).toBe(false);
    pending = 'empty';
    expect((await op.done).waitReason).toBe('stdin_read');
  });

  it('a line sent to a REPL blocked at its prompt is read now, not typed ahead: no pending-input window', async () => {
    // python3 owns the terminal and waits at `>>> ` when the line is written; it reads it, prints, waits again.
    let current = sample(200, [thread(200, 'waiting', 7, 'pselect6')]);
    const op = newOp(fakeEnvironment({ current: () => current, drainOutput: () => 'empty' }), {
      text: '6*7',
      submit: true,
    });
    await op.start();
    current = sample(200, [thread(200, 'waiting', 9, 'pselect6')]);
    text(op, '6*7');
    newline(op);
    text(op, '42');
    newline(op);
    text(op, '>>> ');
    endOfChunk(op);
    for (let turn = 0; turn < 5 && !op.settled; turn++) await new Promise((r) => setImmediate(r));
    expect(op.settled).toBe(true); // a typed-ahead line would wait out 15 ms first
    expect((await op.done).viewport).toBe('6*7\n42\n>>> ');
  });

  it('the rest of a burst, flushed by the probe that spins after its first part, keeps the probes spinning', async () => {
    // python3 echoes `6*7` (a burst after a pause: probes spin), then prints `42` and `>>> ` 0.3 ms
    // later; the spinning probe flushes that chunk itself before it samples.
    let current = sample(200, [thread(200, 'waiting', 7, 'pselect6')]);
    let rest: (() => void) | undefined;
    const op = newOp(
      fakeEnvironment({
        current: () => current,
        drainOutput: () => 'empty',
        flushOutput: () => {
          const deliver = rest;
          rest = undefined;
          deliver?.();
        },
      }),
      { text: '6*7', submit: true },
    );
    await op.start();
    current = sample(200, [thread(200, 'not_waiting', 8)]);
    text(op, '6*7');
    newline(op);
    endOfChunk(op);
    rest = () => {
      current = sample(200, [thread(200, 'waiting', 9, 'pselect6')]);
      text(op, '42');
      newline(op);
      text(op, '>>> ');
      endOfChunk(op);
    };
    for (let turn = 0; turn < 6 && !op.settled; turn++) await new Promise((r) => setImmediate(r));
    expect(op.settled).toBe(true); // not after QUIET_PROBE_MS
    expect((await op.done).viewport).toBe('6*7\n42\n>>> ');
  });

  it("a prompt the probe's own flush processes is judged after that flush returned, never inside it", async () => {
    // The probe flushes the output port before it samples; the real pipeline then processes the pending
    // chunk (the command's output, marker and prompt) and feeds it to this very send. Reacting to the
    // prompt candidate there ran a second probe inside the first one's flush (it sampled /proc while the
    // flush was on the stack) before the first step went on with state it had read before the flush.
    let current = AT_PROMPT;
    let insideFlush = 0;
    let pending: (() => void) | undefined; // read from the pty, waiting to be processed
    const op = newOp(
      fakeEnvironment({
        current: () => current,
        sampledInsideFlush: () => insideFlush++,
        flushOutput: () => {
          const deliver = pending;
          pending = undefined;
          deliver?.();
        },
      }),
      { text: 'echo hi', submit: true },
    );
    await op.start();
    pending = () => {
      current = sample(SHELL.pgrp, [thread(SHELL.pid, 'waiting', 2, 'pselect6')]);
      text(op, 'echo hi');
      newline(op);
      text(op, 'hi');
      newline(op);
      osc(op, marker(0));
      text(op, '$ ');
    };
    const result = await op.done;
    expect(pending).toBeUndefined(); // the probe's flush delivered it
    expect(insideFlush).toBe(0);
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    expect(result.viewport.split('\n')).toContain('hi');
  });

  it('a flood after a pause ends the spin: /proc is not sampled on every turn while it flows', async () => {
    // The thread cannot keep up (each chunk queues behind the last): chunks start processing right
    // after the one before, each a full read. The first came after a pause and starts a spin; the
    // flood that follows must end it rather than pay a sample per turn for its whole duration.
    let samples = 0;
    const busy = sample(200, [thread(200, 'not_waiting', 3)]);
    const op = newOp(
      fakeEnvironment({
        current: () => {
          samples++;
          return busy;
        },
      }),
      { text: 'cat big.log', submit: true },
    );
    await op.start();
    await new Promise((resolve) => setTimeout(resolve, 5)); // the pause before the flood
    const started = performance.now();
    while (performance.now() - started < 20) {
      text(op, 'x'.repeat(4096));
      endOfChunk(op);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(op.settled).toBe(false);
    // Bounded by its output, the spin samples on its first few turns (17 here), and a probe samples now and
    // then when a turn is slow; unbounded, it sampled on every turn of the flood (469 here).
    expect(samples).toBeLessThanOrEqual(60);
  });

  it('input longer than one write slice is confirmed over the pending-input window, drained output or not', async () => {
    // A raw-mode reader (readline) can block between two slices: the second is still in the kernel's
    // input buffer, which no output drain touches.
    let current = AT_PROMPT;
    const op = newOp(fakeEnvironment({ current: () => current, drainOutput: () => 'empty' }), {
      text: `x = '${'a'.repeat(1100)}'`,
      submit: true,
    });
    await op.start();
    current = sample(200, [thread(200, 'waiting', 7, 'pselect6')]);
    text(op, 'x = ');
    const echoAt = performance.now();
    endOfChunk(op);
    expect((await op.done).waitReason).toBe('stdin_read');
    expect(performance.now() - echoAt).toBeGreaterThanOrEqual(15 - TIMER_SLACK_MS); // PENDING_INPUT_CONFIRM_MS
  });

  it('without a drain (paused reading, unknown node-pty) a stdin wait is confirmed over the quiet window', async () => {
    let current = AT_PROMPT; // the shell owns the terminal at the write
    const op = newOp(fakeEnvironment({ current: () => current }), { text: 'read x', submit: true });
    await op.start();
    current = sample(200, [thread(200, 'waiting', 7)]);
    text(op, 'read x');
    newline(op);
    const echoAt = performance.now();
    endOfChunk(op);
    expect((await op.done).waitReason).toBe('stdin_read');
    expect(performance.now() - echoAt).toBeGreaterThanOrEqual(3 - TIMER_SLACK_MS); // STDIN_CONFIRM_MS
  });

  it('a repaint of the prompt the input was typed at (the shell redraws on SIGWINCH) is not the next prompt', async () => {
    // A resize right before a send: the pty sends SIGWINCH, and bash's readline prints its prompt again
    // (marker included) — under load only after the write boundary, before it reads the input. The
    // shell is back in its line editor, woken since the boundary: everything but the prompt number
    // looks like the prompt after the command.
    let current = sample(100, [thread(100, 'waiting', 1, 'pselect6')]);
    const env = fakeEnvironment({ current: () => current });
    const pipeline = pipelines.get(env)!;
    pipeline.write(`\x1b]${marker(0, 4)}\x07$ `); // the prompt before the send, shown
    pipeline.flush();
    const op = newOp(env, { text: 'echo hi', submit: true });
    await op.start();
    current = sample(100, [thread(100, 'waiting', 2, 'pselect6')]);
    osc(op, marker(0, 4));
    text(op, '$ ');
    endOfChunk(op);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(op.settled).toBe(false);
    // The shell reads the line, runs it, and shows its next prompt.
    text(op, 'echo hi');
    newline(op);
    text(op, 'hi');
    newline(op);
    osc(op, marker(0, 5));
    text(op, '$ ');
    current = sample(100, [thread(100, 'waiting', 3, 'pselect6')]);
    endOfChunk(op);
    const result = await op.done;
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    expect(result.viewport.split('\n')).toContain('hi');
  });

  it('input written while the shell is on its way back to its prompt is not answered by that prompt', async () => {
    // `terminal_signal SIGINT` ended a job and the next send wrote at once: the shell already owned the
    // terminal again but had not printed its prompt (nothing was reading). That prompt, with the
    // interrupted job's 130, arrives after the write boundary, and the shell blocks at it — under load
    // for longer than any confirm window (CI saw it) — before the typed-ahead line reaches readline.
    // It is not this input's prompt: with input typed ahead, the first new prompt never is.
    let current = sample(100, [thread(100, 'not_waiting', 5, 'wait4')]);
    const op = newOp(fakeEnvironment({ current: () => current }), { text: 'echo done', submit: true });
    await op.start();
    osc(op, marker(130));
    text(op, '$ ');
    current = sample(100, [thread(100, 'waiting', 6, 'pselect6')]);
    endOfChunk(op);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(op.settled).toBe(false);
    // readline gets the line: echo, output, the next prompt.
    current = sample(100, [thread(100, 'not_waiting', 7)]);
    text(op, 'echo done');
    newline(op);
    text(op, 'done');
    newline(op);
    osc(op, marker(0));
    text(op, '$ ');
    current = sample(100, [thread(100, 'waiting', 9, 'pselect6')]);
    endOfChunk(op);
    const result = await op.done;
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
    expect(result.viewport.split('\n')).toContain('done');
  });

  it('a prompt followed by output still in the kernel (the echo of part of the input) does not settle', async () => {
    // The shell was at a prompt whose bytes had not been read at the write boundary; it read the first
    // part of the line (the kernel handed it over without the `\r`), echoed it and blocked for the rest.
    // Sampled now, it looks like the prompt after a command; the echo is still in the kernel.
    let current = sample(100, [thread(100, 'waiting', 4, 'pselect6')]);
    let inKernel: (() => void) | undefined; // output the shell wrote that no read has taken yet
    let read: (() => void) | undefined; // read from the pty, waiting to be processed
    let drains = 0;
    const op = newOp(
      fakeEnvironment({
        current: () => current,
        drainOutput: () => {
          drains++;
          if (inKernel === undefined) return 'empty';
          read = inKernel;
          inKernel = undefined;
          return 'read';
        },
        flushOutput: () => {
          const deliver = read;
          read = undefined;
          deliver?.();
        },
      }),
      { text: 'echo done', submit: true },
    );
    await op.start();
    osc(op, marker(130));
    text(op, '$ ');
    current = sample(100, [thread(100, 'waiting', 5, 'pselect6')]);
    inKernel = () => text(op, 'echo d');
    endOfChunk(op);
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(drains).toBeGreaterThan(0);
    expect(op.settled).toBe(false);
    // The rest of the line arrives, the command runs, its prompt follows.
    text(op, 'one');
    newline(op);
    text(op, 'done');
    newline(op);
    osc(op, marker(0));
    text(op, '$ ');
    current = sample(100, [thread(100, 'waiting', 7, 'pselect6')]);
    endOfChunk(op);
    expect(await op.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 });
  });

  it('evidence from before the write is discarded at the write boundary', async () => {
    const current = sample(100, [thread(100, 'waiting', 1, 'pselect6')]);
    let release!: () => void;
    const op = newOp(
      fakeEnvironment({
        current: () => current,
        drainReplies: () => new Promise<void>((resolve) => (release = resolve)),
      }),
      { text: 'sleep 1', submit: true },
    );
    const started = op.start();
    // An old prompt (marker + PS1) arrives while replies drain, before the write: it must not count.
    osc(op, marker(0));
    text(op, '$ ');
    endOfChunk(op);
    release();
    await started;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(op.settled).toBe(false);
  });
});
