// Cost of reading a pty master's termios local flags (readTerminalLocalFlags: one tcgetattr through
// agent-pty's pty addon), the check SPEC §13's watcher makes. Prints the mean per call over N calls
// against a live bash; needs the build (npm run build). Usage: node bench/local-flags.mjs [N]
import { ptyBinding } from '../dist/worker/pty/pty-binding.js';
import { readTerminalLocalFlags } from '../dist/worker/pty/terminal-local-flags.js';

const calls = Number(process.argv[2] ?? 200_000);
const term = ptyBinding().nodePty.spawn('/bin/bash', ['--noprofile', '--norc', '-i'], { env: { PS1: '$ ' } });
const { fd } = term;
await new Promise((resolve) => term.onData((chunk) => chunk.includes('$ ') && resolve()));
for (let i = 0; i < 10_000; i++) readTerminalLocalFlags(fd); // warm-up (JIT)
const start = process.hrtime.bigint();
let canonical = 0;
for (let i = 0; i < calls; i++) if (readTerminalLocalFlags(fd).canonical) canonical++;
const perCallNs = Number(process.hrtime.bigint() - start) / calls;
process.stdout.write(
  `readTerminalLocalFlags: ${(perCallNs / 1000).toFixed(2)} µs per call over ${calls} calls (${canonical} canonical)\n`,
);
term.kill('SIGKILL');
