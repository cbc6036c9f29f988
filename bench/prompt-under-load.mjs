/**
 * Standalone check (not part of `run.mjs`): interactive prompts under load. Two sessions flood on the
 * engine's two threads while an inline session core (the engine's own code, on this thread) sends
 * lines, as fast as they settle, that leave a program waiting for input right after it printed
 * something: `read -p`, the continuation prompt of an unterminated quote, `printf …; read x`, and
 * lines sent to a python3 REPL. Each result must settle `stdin_read` and end with what the program
 * printed before it blocked. That output can still be in the kernel's pty buffers when the program is
 * first seen blocked; the send proves it read by draining the pty (src/worker/pty/pty-output-drain.ts).
 *
 * `--without-drain` replaces the drain by one that claims "empty" without reading, to show what the
 * check catches when the proof is weakened (the confirm then comes one event-loop turn later only).
 *
 *   npm run build && node bench/prompt-under-load.mjs [seconds=30] [--without-drain]
 */
import { createPtyEngine } from '../dist/main/index.js';
import { SessionCore } from '../dist/worker/session.js';
import { ensureLogFile } from './lib/data-file.mjs';
import { InlineSession } from './lib/inline-session.mjs';

const seconds = Number(process.argv.find((arg) => /^\d+$/.test(arg)) ?? 30);
const withoutDrain = process.argv.includes('--without-drain');

/**
 * Drain outcomes seen by the asker's sends, counted by wrapping the port its sends drain through: the
 * session builds its send context once, in its constructor (`buildSendContext`, session.ts), and every
 * send's stdin-wait proof calls `context.output.drain()`. Wrapped on the prototype before the inline
 * session exists; the flooders run on engine threads, with their own copy of the module.
 */
const drains = { empty: 0, read: 0, unavailable: 0 };
const buildSendContext = SessionCore.prototype.buildSendContext;
if (typeof buildSendContext !== 'function')
  throw new Error('SessionCore.buildSendContext is gone: find where sends drain the pty now');
SessionCore.prototype.buildSendContext = function (...args) {
  const context = buildSendContext.apply(this, args);
  const drain = context.output?.drain;
  if (typeof drain !== 'function') throw new Error('the send context has no output.drain port');
  const measured = withoutDrain ? () => 'empty' : drain;
  context.output.drain = () => {
    const outcome = measured();
    drains[outcome] += 1;
    return outcome;
  };
  return context;
};

/** Lines to send, and what the result must end with (`undefined`: back at the shell's prompt). */
const BASH_LINES = [
  { text: "read -p 'value? ' v", endsWith: 'value? ' },
  { text: 'v' },
  { text: 'echo "abc', endsWith: '> ' },
  { text: 'def"' },
  { text: "printf 'out-%s\\n' $((6*7)); read x", endsWith: 'out-42\n' },
  { text: 'x' },
];
const REPL_LINES = [
  { text: '6*7', endsWith: '42\n>>> ' },
  { text: 'print("a" * 3, end=""); import sys; sys.stdout.flush()', endsWith: 'aaa>>> ' },
];

const file = ensureLogFile(100 * 2 ** 20);
const engine = await createPtyEngine({ threads: 2 });
const asker = await InlineSession.start();
let sends = 0;
let missing = 0;
const times = [];
const examples = [];
try {
  const flooders = await Promise.all([engine.spawn(), engine.spawn()]);
  let flooding = true;
  const floods = flooders.map(async (session) => {
    while (flooding) await session.startSend({ text: `head -c 30000000 ${file}` }).done;
  });
  const run = async (lines, until) => {
    while (Date.now() < until) {
      for (const line of lines) {
        const { result, ms } = await asker.send(line.text);
        sends++;
        if (line.endsWith !== undefined) times.push(ms);
        const ok =
          result.waitReason === 'stdin_read' &&
          (line.endsWith === undefined || result.viewport.endsWith(line.endsWith));
        if (ok) continue;
        missing++;
        if (examples.length < 3)
          examples.push(`${line.text} → ${JSON.stringify(result.viewport.slice(-40))}`);
        await asker.send(''); // wait for the late output before the next line
      }
    }
  };
  const half = Date.now() + (seconds * 1000) / 2;
  await run(BASH_LINES, half);
  await asker.send('python3 -q');
  await run(REPL_LINES, half + (seconds * 1000) / 2);
  await asker.send('exit()');
  flooding = false;
  await Promise.all(floods);
} finally {
  await asker.close();
  await engine.close();
}
times.sort((a, b) => a - b);
const p50 = times[Math.floor(times.length / 2)] ?? Number.NaN;
console.log(
  `${sends} interactive sends under load${withoutDrain ? ' (without the drain)' : ''}, ` +
    `${missing} settled without what the program printed before it blocked; ` +
    `send → settle p50 ${p50.toFixed(2)} ms (lines that leave a program waiting); ` +
    `drains: ${drains.empty} empty, ${drains.read} found output, ${drains.unavailable} unavailable`,
);
for (const example of examples) console.log(`  e.g. ${example}`);
process.exitCode = missing === 0 || withoutDrain ? 0 : 1;
// Every stdin wait drains: none counted means the wrapper no longer sees the sends (and
// `--without-drain` would change nothing), as happened once when the session's structure moved.
if (drains.empty + drains.read + drains.unavailable === 0) {
  console.log('no drain was counted: the wrapper above no longer reaches the sends');
  process.exitCode = 1;
}
