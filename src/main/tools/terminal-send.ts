/**
 * `terminal_send {sessionId, text?, submit?, keys?, timeoutMs?, waitFor?}` → `{ output, screen?,
 * foreground?, waitReason, inputHidden?, humanHold?, exitCode?, cwd?, sessionStatus, truncated, elapsedMs,
 * hint? }`, rendered by
 * send-result-text.ts (the `hint` holds the notes of that text). Without text and keys the send only
 * waits: how a model keeps waiting for a running command; `text: ""` presses Enter.
 */
import { z } from 'zod';
import { MAX_WAIT_PATTERN_CHARS } from '../../shared/input-limit.js';
import { KEY_NAMES } from '../../shared/keys.js';
import type { Disposable, SendRequest, TerminalSendResult } from '../../shared/types.js';
import { LiveLinesBatcher } from './live-lines.js';
import { sentenceLine } from './render.js';
import {
  hintOutput,
  limitEventsOutput,
  sessionIdArgument,
  sessionStatusOutput,
  statusOutput,
} from './schemas.js';
import { renderSendResult } from './send-result-text.js';
import { DEFAULT_MAX_RESULT_BYTES, defineTool, type TerminalToolContext } from './tool.js';

/** Types into a session (or only waits) until it is ready for input again. */
export const terminalSend = defineTool({
  name: 'terminal_send',
  title: 'Type into terminal',
  description:
    'Type text into a terminal session and press Enter (unless submit is false), then wait until the ' +
    'terminal is ready for input again and return the output. Ready means the shell is back at its ' +
    'prompt, or the running program (a python3 REPL, a y/n question, `read`) is waiting to read input. ' +
    'Without text (and keys), nothing is typed and the call only waits: how to keep waiting for a ' +
    'command that is still running; output that arrived since the previous result comes first. ' +
    'To press Enter alone (a default, an empty passphrase, "Press Enter to continue") send text "". ' +
    'waitReason ([wait: …]): stdin_read = proven ready; running = the wait bound (timeoutMs) passed ' +
    'and the command still runs: call again without text, or terminal_signal SIGINT, never type the ' +
    'next command into it; pattern = waitFor matched (the program may still run); inferred_idle, ' +
    'timeout = NOT proven finished; session_exit = the shell is gone. exitCode ([exit: N]) is present ' +
    "only when the shell's prompt came back; foreground ([foreground: NAME]) is a program other than " +
    'the shell that gets what you type next; hint holds the notes of the text: what is not proven, ' +
    'what to do next, the terminal_read call that pages back when truncated. Start servers and ' +
    'watchers with waitFor (e.g. "Serving HTTP on|Listening on"). One command, or one line of input, ' +
    'per call; prefer non-interactive flags (-y, --no-pager); interrupt with terminal_signal SIGINT, ' +
    'never control characters. Full-screen programs (vim, nano, less, htop) return their screen ' +
    '([screen: …]) instead of output: drive them with keys, e.g. leave vim with ["Escape", {"text": ' +
    '":wq"}, "Enter"], save and leave nano with ["C-o", "Enter", "C-x"], quit less with ["q"].',
  hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  input: z.strictObject({
    sessionId: sessionIdArgument,
    text: z
      .string({ error: 'must be the text to type, as a string (omit it to only wait)' })
      .optional()
      .describe(
        'Text to type, e.g. "ls -la" or "print(6*7)". "" presses Enter alone (with submit true, the ' +
          'default). Omit it (and keys) to type nothing and only wait (keep waiting for a running command).',
      ),
    submit: z
      .boolean({ error: 'must be true (press Enter after the text, default) or false' })
      .default(true)
      .describe(
        'Press Enter after the text (default true; ignored without text and for keys). text "" with ' +
          'submit false would type nothing and is refused: omit text to wait.',
      ),
    timeoutMs: z
      .number({ error: 'must be a number of milliseconds, e.g. 60000' })
      .int('must be a whole number of milliseconds, e.g. 60000')
      .positive('must be 1 or more milliseconds, e.g. 60000')
      .optional()
      .describe(
        'How long this call waits at most before it returns [wait: running] (the command keeps running; ' +
          "call again without text to keep waiting). Default: the terminal engine's own default; the " +
          'server may cap it.',
      ),
    waitFor: z
      .string({ error: 'must be a regular expression as a string, e.g. "Listening on|ready in"' })
      .min(1, 'must not be empty; pass a regular expression such as "Serving HTTP on", or omit it')
      .max(MAX_WAIT_PATTERN_CHARS, `must be at most ${MAX_WAIT_PATTERN_CHARS} characters`)
      .optional()
      .describe(
        'Return with [wait: pattern] as soon as a line of the output matches this regular expression (RE2 ' +
          'syntax: no backreferences or lookaround), e.g. "Serving HTTP on|Listening on|ready in". Use it ' +
          'for servers and watchers that never return to the prompt.',
      ),
    keys: z
      .array(z.union([z.string(), z.strictObject({ text: z.string() })]), {
        error: 'must be a list of key names and {"text": "..."} literals',
      })
      .optional()
      .describe(
        `Instead of text: keys pressed in order, as tmux send-keys names (${KEY_NAMES.join(', ')}) or ` +
          '{"text": "..."} for literal text. No Enter is added; an empty list types nothing and is ' +
          'refused. C-c is only sent to a full-screen program; to interrupt a command use terminal_signal.',
      ),
  }),
  output: z.strictObject({
    output: z.string(),
    foreground: z.strictObject({ pid: z.number().int(), command: z.string() }).optional(),
    waitReason: z.enum([
      'stdin_read',
      'running',
      'pattern',
      'inferred_idle',
      'timeout',
      'session_exit',
      'human',
    ]),
    inputHidden: z.union([z.literal(true), z.literal('likely')]).optional(),
    humanHold: z.enum(['taken_over', 'not_typed', 'wait_only']).optional(),
    exitCode: z.number().int().optional(),
    cwd: z.string().optional(),
    sessionStatus: sessionStatusOutput,
    limitEvents: limitEventsOutput.optional(),
    truncated: z.boolean(),
    elapsedMs: z.number(),
    screen: z
      .strictObject({
        lines: z.array(z.string()),
        cursor: z.strictObject({ row: z.number().int(), col: z.number().int() }),
      })
      .optional(),
    hint: hintOutput,
  }),
  async run(args, ctx) {
    const request: SendRequest = {
      // keys, or text (+ Enter unless submit is false), or neither: a wait that types nothing.
      ...(args.keys !== undefined
        ? { keys: args.keys }
        : args.text === undefined
          ? {}
          : { text: args.text, submit: args.submit }),
      // The engine applies its own default bound and the server's cap (SPEC §7): never guessed here.
      ...(args.timeoutMs === undefined ? {} : { timeoutMs: args.timeoutMs }),
      ...(ctx.maxWaitMs === undefined ? {} : { maxWaitMs: ctx.maxWaitMs }),
      ...(args.waitFor === undefined ? {} : { waitFor: args.waitFor }),
      ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
    };
    const result = await sendWithLiveLines(ctx, args.sessionId, request);
    // The engine says when the cap cut the bound, and by how much: only then does the note appear.
    const cut = result.cappedWait;
    const clampNote =
      cut !== undefined && (result.waitReason === 'running' || result.waitReason === 'timeout')
        ? [
            sentenceLine(
              `[wait bound: ${cut.boundMs} ms, the most this server waits per call, instead of ${cut.askedMs} ms]`,
            ),
          ]
        : [];
    const rendered = renderSendResult(result, {
      sessionId: args.sessionId,
      maxResultBytes: ctx.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
      extraLines: clampNote,
      ...(ctx.watchPage === undefined ? {} : { watchPage: ctx.watchPage }),
    });
    return {
      text: rendered.text,
      json: {
        output: rendered.output,
        ...(result.foreground === undefined
          ? {}
          : { foreground: { pid: result.foreground.pid, command: result.foreground.command } }),
        waitReason: result.waitReason,
        ...(result.inputHidden === undefined ? {} : { inputHidden: result.inputHidden }),
        ...(result.humanHold === undefined ? {} : { humanHold: result.humanHold }),
        ...(result.exitCode === undefined ? {} : { exitCode: result.exitCode }),
        ...(result.cwd === undefined ? {} : { cwd: result.cwd }),
        sessionStatus: statusOutput(result.sessionStatus),
        ...(result.limitEvents === undefined ? {} : { limitEvents: result.limitEvents }),
        truncated: rendered.truncated,
        elapsedMs: result.elapsedMs,
        ...(result.screen === undefined ? {} : { screen: result.screen }),
        ...(rendered.hint === undefined ? {} : { hint: rendered.hint }),
      },
    };
  },
});

/**
 * Runs the send; when the caller takes live output, subscribes before anything is typed (so the echo
 * and the first lines are included) and stops once the send settled (the result carries the rest).
 */
async function sendWithLiveLines(
  ctx: TerminalToolContext,
  sessionId: string,
  request: SendRequest,
): Promise<TerminalSendResult> {
  const onLiveLines = ctx.onLiveLines;
  if (onLiveLines === undefined) return ctx.pty.startSend(ctx.owner, sessionId, request).done;
  const batcher = new LiveLinesBatcher(onLiveLines);
  let subscription: Disposable | undefined;
  try {
    subscription = ctx.pty.onOutput(ctx.owner, sessionId, batcher.push);
    return await ctx.pty.startSend(ctx.owner, sessionId, request).done;
  } finally {
    subscription?.dispose();
    batcher.dispose();
  }
}
