/**
 * `agent-pty demo`: a short scripted tour that shows, step by step, what a model receives. It must run
 * unattended on a fresh machine, so every step is something bash and python3 always do.
 */

import { findOnPath } from '../../shared/find-on-path.js';
import { DisposableStore } from '../../shared/lifecycle.js';
import type { PtyEngine, TerminalSendResult } from '../../shared/types.js';
import { renderSendResult } from '../tools/send-result-text.js';
import { DEFAULT_MAX_RESULT_BYTES } from '../tools/tool.js';

interface Step {
  /** What the step shows. */
  title: string;
  /** Text typed into the terminal. */
  text: string;
  /** Cancel the send after this many ms (shows cancellation). */
  cancelAfterMs?: number;
  /** Skip unless this program is on PATH. */
  needs?: string;
}

const STEPS: Step[] = [
  { title: 'a command and its exit code', text: 'echo "hello from agent-pty"' },
  { title: 'a failing command', text: 'ls /definitely/not/here' },
  { title: 'the working directory travels with the prompt marker', text: 'cd /tmp' },
  { title: 'one settle after the last line of a multi-step command', text: 'echo one; sleep 0.3; echo two' },
  { title: 'a program waiting for input is proven waiting (read x)', text: 'read -p "name? " x' },
  { title: 'answering it', text: 'agent' },
  { title: 'an interactive REPL settles at its prompt', text: 'python3 -q', needs: 'python3' },
  { title: 'talking to the REPL', text: 'print(6 * 7)', needs: 'python3' },
  { title: 'leaving the REPL', text: 'exit()', needs: 'python3' },
  { title: 'cancelling a long command (real SIGINT)', text: 'sleep 100', cancelAfterMs: 300 },
];

/** Runs the tour; resolves true when every step settled as expected. */
export async function runDemo(engine: PtyEngine, write: (text: string) => void): Promise<boolean> {
  const started = performance.now();
  const session = await engine.spawn({ name: 'demo' });
  write(
    `agent-pty demo — session ${session.id}, shell pid ${session.pid}, ready in ${(performance.now() - started).toFixed(0)} ms\n`,
  );
  let ok = true;
  try {
    for (const step of STEPS) {
      if (step.needs !== undefined && findOnPath(step.needs) === undefined) {
        write(`\n## ${step.title}\n(skipped: ${step.needs} is not installed)\n`);
        continue;
      }
      write(`\n## ${step.title}\n> ${step.text}\n`);
      const op = session.startSend({ text: step.text });
      const stepTimers = new DisposableStore();
      if (step.cancelAfterMs !== undefined) {
        stepTimers.timeout('demo step cancel', step.cancelAfterMs, () => void op.cancel());
      }
      const result: TerminalSendResult = await op.done.finally(() => stepTimers.dispose());
      // Rendered as terminal_send renders it for a model, then the time the send took.
      const rendered = renderSendResult(result, {
        sessionId: session.id,
        maxResultBytes: DEFAULT_MAX_RESULT_BYTES,
      });
      write(`${rendered.text}\n(${result.elapsedMs.toFixed(1)} ms)\n`);
      if (result.waitReason !== 'stdin_read') ok = false;
    }
    const page = await session.read({ count: 5 });
    write(
      `\n## the last 5 lines of scrollback (terminal_read)\n${page.text}\n[lines ${page.lineBegin}-${page.lineEnd} of ${page.totalLines}]\n`,
    );
  } finally {
    const closeStarted = performance.now();
    const outcome = await session.close('demo finished');
    write(
      `\nsession closed in ${(performance.now() - closeStarted).toFixed(0)} ms (${outcome.reason}); no process left behind.\n`,
    );
  }
  return ok;
}
