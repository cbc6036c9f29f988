// Cost of the hidden-input check of SPEC §13 per settle (target: at most 0.1 ms): the verdict a
// session adds to a `stdin_read` result — one termios read of the pty master, and where the flags
// cannot prove it, the password-prompt words on the tail of the partial line. Measured against a live
// bash at its prompt (canonical off: the words are checked), with a 64 KiB viewport whose last line is
// a prompt, and with a short one. Needs the build (npm run build). Usage: node bench/hidden-input.mjs [N]
import { ptyBinding } from '../dist/worker/pty/pty-binding.js';
import { readTerminalLocalFlags } from '../dist/worker/pty/terminal-local-flags.js';
import { HiddenInputVerdicts } from '../dist/worker/readiness/hidden-input.js';

const settles = Number(process.argv[2] ?? 100_000);
if (!(settles > 0)) throw new Error(`usage: node bench/hidden-input.mjs [N > 0], got ${process.argv[2]}`);
const term = ptyBinding().nodePty.spawn('/bin/bash', ['--noprofile', '--norc', '-i'], { env: { PS1: '$ ' } });
const { fd } = term;
await new Promise((resolve) => term.onData((chunk) => chunk.includes('$ ') && resolve()));

const status = { kind: 'running', containment: 'process-tree', limits: {} };
const cases = {
  'raw-mode password prompt, 64 KiB viewport': `${'build output line\n'.repeat(3640)}Password: `,
  'python REPL prompt, short viewport': 'Python 3.11\n>>> ',
  'bash prompt after output mentioning a password, short': 'Password: changed\n',
};
for (const [name, viewport] of Object.entries(cases)) {
  const results = Array.from({ length: settles }, () => ({
    viewport,
    waitReason: 'stdin_read',
    sessionStatus: status,
    truncated: false,
    elapsedMs: 1,
    foreground: { pid: 1, command: 'python3' },
  }));
  const verdicts = new HiddenInputVerdicts();
  // Warm-up: 5 000 verdicts on fresh send keys (results repeat when N is smaller than that).
  for (let i = 0; i < 5_000; i++) verdicts.apply({}, results[i % settles], () => readTerminalLocalFlags(fd));
  const start = process.hrtime.bigint();
  let flagged = 0;
  for (let i = 0; i < settles; i++) {
    if (verdicts.apply(results[i], results[i], () => readTerminalLocalFlags(fd)).inputHidden !== undefined)
      flagged++;
  }
  const perSettleUs = Number(process.hrtime.bigint() - start) / settles / 1000;
  process.stdout.write(
    `${name}: ${perSettleUs.toFixed(2)} µs per settle (target ≤ 100 µs), ${flagged}/${settles} flagged\n`,
  );
}
term.kill('SIGKILL');
