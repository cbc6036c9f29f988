/**
 * `agent-pty` with no subcommand: a person types lines into a real session and watches the output as
 * it arrives, then sees the status lines a model would receive for each send — the wait reason, the
 * exit code, the foreground program, the elapsed time. `:result` shows the last result exactly as the
 * model got it (output included).
 */
import { clearLine, createInterface, cursorTo } from 'node:readline';
import type {
  PtyEngine,
  SendRequest,
  SignalName,
  SpawnOptions,
  TerminalSendResult,
  TerminalSession,
} from '../../shared/types.js';
import { formatSendResult, formatSendStatus, formatStatus } from './format.js';
import { LiveEcho } from './live-echo.js';

const SIGNALS: readonly SignalName[] = ['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGTSTP', 'SIGHUP'];

/** Help line shown at start. */
const COMMANDS_HELP =
  'Type a command line (an empty line presses Enter). :wait [MS] keeps waiting without typing, ' +
  ':waitfor /REGEX/ LINE sends LINE and returns when REGEX matches its output, :result shows the last ' +
  'result as a model got it, :read [offset] [count], :signal NAME, :status, :quit. Ctrl-C cancels a ' +
  'running send (a real SIGINT).';

/** A line of the CLI as a send request, or a message saying how to write it. */
export function parseSendLine(line: string): SendRequest | { error: string } {
  const trimmed = line.trim();
  if (trimmed === ':wait' || trimmed.startsWith(':wait ')) {
    const ms = trimmed.slice(':wait'.length).trim();
    if (ms === '') return {};
    if (!/^[0-9]+$/.test(ms) || Number(ms) < 1)
      return { error: ':wait takes a whole number of ms, e.g. :wait 60000' };
    return { timeoutMs: Number(ms) };
  }
  if (trimmed.startsWith(':waitfor')) {
    const match = /^:waitfor\s+\/(.+?)\/\s+(.+)$/.exec(trimmed);
    if (match === null)
      return {
        error: ':waitfor needs /REGEX/ and a line, e.g. :waitfor /Serving HTTP on/ python3 -m http.server 0',
      };
    return { text: match[2]!, waitFor: match[1]! };
  }
  return { text: line };
}

/** Runs the interactive loop until `:quit`, end of input, or the shell exits. */
export async function runInteractive(engine: PtyEngine, spawnOptions: SpawnOptions): Promise<void> {
  const session = await engine.spawn(spawnOptions);
  const out = process.stdout;
  out.write(`session ${session.id} (pid ${session.pid}) ready. MOTD:\n${session.motd || '(none)'}\n`);
  out.write(`${COMMANDS_HELP}\n`);
  const rl = createInterface({ input: process.stdin, output: out, prompt: 'agent-pty> ' });
  const echo = new LiveEcho({
    write: (text) => out.write(text),
    clearPrompt: () => {
      cursorTo(out, 0);
      clearLine(out, 0);
    },
    redrawPrompt: () => rl.prompt(true),
  });
  const live = session.onOutput(echo.push);
  let cancelActive: (() => Promise<void>) | undefined;
  let lastResult: TerminalSendResult | undefined;
  // Ctrl-C cancels the running send (a real SIGINT to the session's foreground group), else quits.
  rl.on('SIGINT', () => {
    if (cancelActive !== undefined) void cancelActive().catch(() => undefined);
    else rl.close();
  });
  rl.prompt();
  try {
    for await (const line of rl) {
      const trimmed = line.trim();
      try {
        if (trimmed === ':quit' || trimmed === ':q') break;
        if (trimmed === ':status') {
          out.write(`${formatStatus(await session.status())}\n`);
        } else if (trimmed === ':result') {
          out.write(lastResult === undefined ? 'no result yet\n' : `${formatSendResult(lastResult)}\n`);
        } else if (trimmed.startsWith(':read')) {
          await printPage(session, trimmed, out);
        } else if (trimmed.startsWith(':signal')) {
          const name = (trimmed.split(/\s+/)[1] ?? 'SIGINT').toUpperCase() as SignalName;
          if (!SIGNALS.includes(name)) out.write(`signal must be one of ${SIGNALS.join(', ')}\n`);
          else out.write(`${JSON.stringify(await session.signal(name))}\n`);
        } else {
          const request = parseSendLine(line);
          if ('error' in request) {
            out.write(`${request.error}\n`);
          } else {
            echo.beginSend();
            const op = session.startSend(request);
            cancelActive = op.cancel;
            const result = await op.done.finally(() => {
              cancelActive = undefined;
            });
            await echo.endSend(result.viewport);
            lastResult = result;
            out.write(`${formatSendStatus(result)}\n`);
            if (result.sessionStatus.kind === 'exited') break;
          }
        }
      } catch (error) {
        const code = (error as { code?: string }).code;
        out.write(`error${code ? ` [${code}]` : ''}: ${(error as Error).message}\n`);
      }
      rl.prompt();
    }
  } finally {
    live.dispose();
    rl.close();
    await session.close('user quit').catch(() => undefined);
  }
}

/** `:read [offset] [count]`: a page of the scrollback with its position. */
async function printPage(
  session: TerminalSession,
  command: string,
  out: NodeJS.WritableStream,
): Promise<void> {
  const [, offset, count] = command.split(/\s+/);
  const page = await session.read({
    offset: offset === undefined ? undefined : Number(offset),
    count: count === undefined ? undefined : Number(count),
  });
  out.write(
    `${page.text}\n[lines ${page.lineBegin}-${page.lineEnd} of ${page.totalLines}${page.truncated ? ', truncated' : ''}]\n`,
  );
}
