// The child of bench/limits.mjs that measures the noisy neighbour (SPEC §4.8): `true` send→settle
// of one session while another session on the same engine thread floods, fork-bombs, hogs memory or
// redraws a maximal screen. Started inside an outer cgroup (bench/lib/outer-cgroup.mjs) and refuses
// to run anything dangerous otherwise. Prints one JSON line.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { createPtyEngine } from '../../dist/main/index.js';
import { summarize } from './stats.mjs';

const [outerLeaf, sendsText] = process.argv.slice(2);
const SENDS = Number(sendsText);
const WARMUP = 5;
const MIB = 1024 * 1024;

for (const controller of ['pids', 'memory']) {
  const line = readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .find((entry) => entry.split(':')[1]?.split(',').includes(controller));
  if (!line?.endsWith(`/${outerLeaf}`)) {
    process.stdout.write(`${JSON.stringify({ error: `not inside the outer ${controller} cgroup` })}\n`);
    process.exit(3);
  }
}

/** A python program (base64, so no quoting survives the shell) that redraws a 500 × 500 screen forever. */
const REDRAW = Buffer.from(
  [
    'import sys',
    "sys.stdout.write('\\x1b[?1049h')",
    'f = 0',
    'while True:',
    "    sys.stdout.write('\\x1b[H' + '\\r\\n'.join(chr(97 + (f + r) % 26) * 500 for r in range(500)))",
    '    sys.stdout.flush()',
    '    f += 1',
  ].join('\n'),
).toString('base64');

/** What the noisy session runs, and its own spawn options. */
const NOISE = {
  idle: { spawn: {}, text: undefined },
  flood: { spawn: {}, text: 'yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' },
  'fork bomb': { spawn: { limits: { pids: 256 } }, text: 'b(){ b|b& }; b' },
  'memory hog': {
    spawn: { limits: { memoryBytes: 320 * MIB } },
    text: 'while :; do python3 -c "a = bytearray(1 << 30)"; done',
  },
  'maximal screen': {
    spawn: { rows: 500, cols: 500 },
    text: `python3 -c "$(printf '%s' '${REDRAW}' | base64 -d)"`,
  },
};

const engine = await createPtyEngine({ threads: 1, tmpfsBytes: 16 * MIB });
const report = { sends: SENDS, conditions: {} };
try {
  const neighbour = await engine.spawn();
  for (const [name, noise] of Object.entries(NOISE)) {
    const noisy = await engine.spawn(noise.spawn);
    const running =
      noise.text === undefined ? undefined : noisy.startSend({ text: noise.text, timeoutMs: 600_000 });
    // Let the noise get going (a bomb reaches its limit, a flood its full rate).
    await delay(noise.text === undefined ? 0 : 1_000);
    const samples = [];
    let unproven = 0;
    for (let i = 0; i < WARMUP + SENDS; i++) {
      const started = performance.now();
      const result = await neighbour.startSend({ text: 'true' }).done;
      const ms = performance.now() - started;
      if (i >= WARMUP) samples.push(ms);
      if (result.waitReason !== 'stdin_read') unproven++;
    }
    const closeStarted = performance.now();
    await noisy.close();
    const closeMs = performance.now() - closeStarted;
    const settled = running === undefined ? undefined : await running.done;
    report.conditions[name] = {
      true: summarize(samples),
      unproven,
      noisyCloseMs: closeMs,
      noisyEvents: settled?.limitEvents ?? null,
    };
  }
} finally {
  await engine.close();
}
process.stdout.write(`${JSON.stringify(report)}\n`);
