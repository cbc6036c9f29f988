/**
 * `agent-pty` with no subcommand: a person types lines into a real session and sees exactly what a
 * model would receive for each — the output delta, the wait reason, the exit code, the elapsed time.
 */
import { createInterface } from 'node:readline';
import type { PtyEngine, SignalName, SpawnOptions } from '../../shared/types.js';
import { formatSendResult, formatStatus } from './format.js';

const SIGNALS: readonly SignalName[] = ['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGTSTP', 'SIGHUP'];

/** Runs the interactive loop until `:quit`, end of input, or the shell exits. */
export async function runInteractive(engine: PtyEngine, spawnOptions: SpawnOptions): Promise<void> {
  const session = await engine.spawn(spawnOptions);
  const out = process.stdout;
  out.write(`session ${session.id} (pid ${session.pid}) ready. MOTD:\n${session.motd || '(none)'}\n`);
  out.write('Type a command line. :read [offset] [count], :signal NAME, :status, :quit. Ctrl-C cancels.\n');
  const rl = createInterface({ input: process.stdin, output: out, prompt: 'agent-pty> ' });
  let cancelActive: (() => Promise<void>) | undefined;
  // Ctrl-C cancels the running send (a real SIGINT to the session's foreground group), else quits.
  rl.on('SIGINT', () => {
    if (cancelActive !== undefined) void cancelActive().catch(() => undefined);
    else rl.close();
  });
  rl.prompt();
  for await (const line of rl) {
    const trimmed = line.trim();
    try {
      if (trimmed === ':quit' || trimmed === ':q') break;
      if (trimmed === ':status') {
        out.write(`${formatStatus(await session.status())}\n`);
      } else if (trimmed.startsWith(':read')) {
        const [, offset, count] = trimmed.split(/\s+/);
        const page = await session.read({
          offset: offset === undefined ? undefined : Number(offset),
          count: count === undefined ? undefined : Number(count),
        });
        out.write(
          `${page.text}\n[lines ${page.lineBegin}-${page.lineEnd} of ${page.totalLines}${page.truncated ? ', truncated' : ''}]\n`,
        );
      } else if (trimmed.startsWith(':signal')) {
        const name = (trimmed.split(/\s+/)[1] ?? 'SIGINT').toUpperCase() as SignalName;
        if (!SIGNALS.includes(name)) out.write(`signal must be one of ${SIGNALS.join(', ')}\n`);
        else out.write(`${JSON.stringify(await session.signal(name))}\n`);
      } else {
        const op = session.startSend({ text: line });
        cancelActive = op.cancel;
        const result = await op.done.finally(() => {
          cancelActive = undefined;
        });
        out.write(`${formatSendResult(result)}\n`);
        if (result.sessionStatus.kind === 'exited') break;
      }
    } catch (error) {
      const code = (error as { code?: string }).code;
      out.write(`error${code ? ` [${code}]` : ''}: ${(error as Error).message}\n`);
    }
    rl.prompt();
  }
  rl.close();
  await session.close('user quit').catch(() => undefined);
}
