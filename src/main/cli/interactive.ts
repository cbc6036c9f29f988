/**
 * `agent-pty` with no subcommand: a person types lines into a real session and sees exactly what a
 * model gets (SPEC §7). The session runs on the same local harness as `agent-pty mcp`, in the same
 * default sandbox mode (`workspace-write` of the workspace), and every line goes through the model's
 * own tools (`terminal_open`, `terminal_send`, `terminal_read`, …): the banner is `terminal_open`'s
 * text, results are `terminal_send`'s text — screens of full-screen programs included — and mistakes
 * are answered with the tools' own error messages. Output is shown live as it arrives, so after a send
 * only the rest of the result (status lines, screen, notes) is printed; `:result` shows the whole text.
 */
import { clearLine, createInterface, cursorTo } from 'node:readline';
import type { SandboxMode } from '../../shared/types.js';
import { createLocalHost } from '../harness/local-host.js';
import { runTerminalTool, type TerminalToolOutcome } from '../tools/catalog.js';
import { sendResultTrailer } from '../tools/send-result-text.js';
import type { TerminalToolContext } from '../tools/tool.js';
import { CLI_COMMANDS_HELP, parseInputLine } from './input-line.js';
import { LiveEcho } from './live-echo.js';

/** Owner id of the CLI's sessions in the harness. */
const CLI_OWNER = 'cli';

/** Options of {@link runInteractive}. */
export interface InteractiveOptions {
  /** Sandbox mode of the session (the CLI's default is the MCP server's, `workspace-write`). */
  mode: SandboxMode;
  /**
   * Workspace root: the session's cwd, and writable in `workspace-write`. Omitted: the current
   * directory, taken as not named (a root of `/` or `$HOME` then shows nothing of `$HOME`, SPEC §4.1).
   */
  workspaceRoot?: string;
}

/**
 * Runs the interactive loop until `:quit`, end of input, or the shell exits. Resolves with the exit
 * code: 1 when the session could not be opened (the reason is printed), else 0.
 */
export async function runInteractive(options: InteractiveOptions): Promise<number> {
  const out = process.stdout;
  const host = await createLocalHost({
    mode: options.mode,
    ...(options.workspaceRoot === undefined ? {} : { workspaceRoot: options.workspaceRoot }),
  });
  const pty = host.service('pty');
  const ctx: TerminalToolContext = { pty, owner: CLI_OWNER };
  try {
    const opened = await runTerminalTool('terminal_open', {}, ctx);
    out.write(`${opened.text}\n`);
    if (opened.isError) return 1;
    const sessionId = opened.json.sessionId as string;
    out.write(`${CLI_COMMANDS_HELP}\n`);
    await converse(ctx, sessionId, out);
    return 0;
  } finally {
    await pty.disposeOwned(CLI_OWNER, 'user quit').catch((alreadyGone: unknown) => {
      // The session may have ended with its shell; disposing the host below closes the rest.
      void alreadyGone;
    });
    await host.dispose();
  }
}

/** The read-eval-print loop over one open session. */
async function converse(ctx: TerminalToolContext, sessionId: string, out: NodeJS.WriteStream): Promise<void> {
  const rl = createInterface({ input: process.stdin, output: out, prompt: 'agent-pty> ' });
  const echo = new LiveEcho({
    write: (text) => out.write(text),
    clearPrompt: () => {
      cursorTo(out, 0);
      clearLine(out, 0);
    },
    redrawPrompt: () => rl.prompt(true),
  });
  const live = ctx.pty.onOutput(ctx.owner, sessionId, echo.push);
  let sending = false;
  let lastResult: TerminalToolOutcome | undefined;
  // Ctrl-C during a send interrupts the command the way a model would (terminal_signal SIGINT: a real
  // SIGINT to the foreground group); the send then settles at the prompt. Otherwise it quits.
  // Lives as long as the readline interface, which ends with this loop.
  rl.on('SIGINT', () => {
    if (!sending) {
      rl.close();
      return;
    }
    void ctx.pty.signal(ctx.owner, sessionId, 'SIGINT').catch((error: unknown) => {
      out.write(`\n${(error as Error).message}\n`);
    });
  });
  const tool = (name: string, args: Record<string, unknown>) =>
    runTerminalTool(name, { sessionId, ...args }, ctx);
  rl.prompt();
  try {
    for await (const line of rl) {
      const action = parseInputLine(line);
      if (action.kind === 'quit') break;
      switch (action.kind) {
        case 'error':
          out.write(`${action.message}\n`);
          break;
        case 'help':
          out.write(`${CLI_COMMANDS_HELP}\n`);
          break;
        case 'result':
          out.write(lastResult === undefined ? 'no result yet\n' : `${lastResult.text}\n`);
          break;
        case 'status':
          out.write(`${(await runTerminalTool('terminal_list', {}, ctx)).text}\n`);
          break;
        case 'read':
          out.write(`${(await tool('terminal_read', action.args)).text}\n`);
          break;
        case 'signal':
          out.write(`${(await tool('terminal_signal', { signal: action.signal })).text}\n`);
          break;
        case 'send': {
          echo.beginSend();
          sending = true;
          const result = await tool('terminal_send', { ...action.args }).finally(() => {
            sending = false;
          });
          const output = result.isError ? '' : (result.json.output as string);
          await echo.endSend(output);
          lastResult = result;
          out.write(`${result.isError ? result.text : sendResultTrailer(result.text, output)}\n`);
          if (!result.isError && (result.json.sessionStatus as { kind: string }).kind === 'exited') return;
          break;
        }
      }
      rl.prompt();
    }
  } finally {
    live.dispose();
    rl.close();
  }
}
