/**
 * Benchmark 4 (SPEC §9): closing a session whose shell has background children, and cancelling a
 * running command.
 *
 * Close: `sleep 1000 & sleep 1000 &`, then `session.close()` timed on the host; afterwards no process of
 * the shell's POSIX session (the pty child leads it) may be alive — checked with the benchmark's own
 * /proc scan, against the processes seen before the close (pid + start time) and a fresh scan.
 * Cancel: `sleep 100` until the sleep owns the terminal's foreground, then `op.cancel()` → `op.done`.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { createPtyEngine } from '../dist/main/index.js';
import { check, metric } from './lib/metric.mjs';
import { isLive, processesInSession } from './lib/procfs.mjs';
import { round, summarize } from './lib/stats.mjs';

const REPS_FULL = 10;
const REPS_QUICK = 3;
/** SPEC target for both close and cancel → settle. */
const TARGET_MS = 200;
/** Poll period while waiting for `sleep` to own the foreground (outside the timed span). */
const FOREGROUND_POLL_MS = 2;
/** Give up waiting for the foreground sleep after this long. */
const FOREGROUND_WAIT_MS = 5_000;

export default {
  name: 'close-cancel',
  title: 'Close with background children; cancel → settle',
  async run({ quick, log }) {
    const reps = quick ? REPS_QUICK : REPS_FULL;
    const engine = await createPtyEngine();
    const closeMs = [];
    const cancelMs = [];
    let left = 0;
    let capturedTotal = 0;
    let cancelUnproven = 0;
    try {
      for (let i = 0; i < reps; i++) {
        const session = await engine.spawn();
        await session.startSend({ text: 'sleep 1000 & sleep 1000 &' }).done;
        const before = processesInSession(session.pid).filter((p) => p.state !== 'Z');
        capturedTotal += before.length;
        const started = performance.now();
        await session.close();
        closeMs.push(performance.now() - started);
        const survivors = [
          ...before.filter(isLive),
          ...processesInSession(session.pid).filter((p) => p.state !== 'Z'),
        ];
        left += new Set(survivors.map((p) => p.pid)).size;
      }
      log(`close: ${round(summarize(closeMs).p50)} ms p50, ${capturedTotal} processes seen, ${left} left`);

      const session = await engine.spawn();
      for (let i = 0; i < reps; i++) {
        const op = session.startSend({ text: 'sleep 100' });
        await foregroundSleep(session.pid);
        const started = performance.now();
        await op.cancel();
        const result = await op.done;
        cancelMs.push(performance.now() - started);
        if (result.waitReason !== 'stdin_read' || result.exitCode !== 130) cancelUnproven++;
      }
      log(`cancel: ${round(summarize(cancelMs).p50)} ms p50`);
      await session.close();
    } finally {
      await engine.close();
    }
    const c = summarize(closeMs);
    const k = summarize(cancelMs);
    return {
      metrics: [
        metric({
          id: 'close.p50',
          label: 'close with 2 background children p50',
          value: round(c.p50),
          unit: 'ms',
          target: { op: '<=', value: TARGET_MS },
        }),
        metric({
          id: 'close.max',
          label: 'close with 2 background children max',
          value: round(c.max),
          unit: 'ms',
          target: { op: '<=', value: TARGET_MS },
        }),
        check({ id: 'close.left', label: 'processes left alive after close (all reps)', failures: left }),
        metric({
          id: 'cancel.p50',
          label: 'cancel `sleep 100` → settle p50',
          value: round(k.p50),
          unit: 'ms',
          target: { op: '<=', value: TARGET_MS },
        }),
        metric({
          id: 'cancel.max',
          label: 'cancel `sleep 100` → settle max',
          value: round(k.max),
          unit: 'ms',
          target: { op: '<=', value: TARGET_MS },
        }),
        check({
          id: 'cancel.unproven',
          label: 'cancels not settled as stdin_read with exit 130',
          failures: cancelUnproven,
        }),
      ],
      details: { close: c, cancel: k, processesSeenBeforeClose: capturedTotal },
      notes: [
        `${reps} closes (a fresh session each) and ${reps} cancels (one session).`,
        `Processes seen before the closes (shell + children, all reps): ${capturedTotal}.`,
        'Close time = `session.close()` on the host until it resolved (teardown verified in the engine thread, task finished).',
      ],
    };
  },
};

/** Resolves once a `sleep` in the shell's session is the terminal's foreground process group. */
async function foregroundSleep(sid) {
  const deadline = performance.now() + FOREGROUND_WAIT_MS;
  while (performance.now() < deadline) {
    const sleeper = processesInSession(sid).find((p) => p.comm === 'sleep' && p.pgrp === p.tpgid);
    if (sleeper !== undefined) return;
    await delay(FOREGROUND_POLL_MS);
  }
  throw new Error('sleep 100 never reached the foreground');
}
