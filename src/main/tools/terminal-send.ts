/**
 * `terminal_send {sessionId, text?, submit?, keys?, timeoutMs?, waitFor?}` → `{ output, foreground?,
 * waitReason, exitCode?, cwd?, sessionStatus, truncated, elapsedMs }`. Rendered: the output of this
 * send, then `[wait: …]`, `[exit: …]` when the shell's prompt proved it, `[foreground: …]` when a
 * program other than the shell holds the terminal, `[session: …]`, a note when the server's cap cut
 * the wait bound, and a truncation note when output was dropped. Without text and keys the send only
 * waits: how a model keeps waiting for a running command; `text: ""` presses Enter.
 */
import { z } from 'zod';
import { KEY_NAMES } from '../../shared/keys.js';
import type { Disposable, SendRequest, TerminalSendResult } from '../../shared/types.js';
import { LiveLinesBatcher } from './live-lines.js';
import {
  renderExit,
  renderForeground,
  renderScreen,
  renderSession,
  renderTruncated,
  renderWait,
} from './render.js';
import { capTail, countLines } from './result-cap.js';
import { sessionIdArgument, sessionStatusOutput, statusOutput } from './schemas.js';
import { DEFAULT_MAX_RESULT_BYTES, defineTool, type TerminalToolContext } from './tool.js';

/** Longest accepted `waitFor` expression (the engine's own bound): a pattern is a few words, not a program. */
const MAX_WAIT_FOR_LENGTH = 4_096;

/** Types into a session (or only waits) until it is ready for input again. */
export const terminalSend = defineTool({
  name: 'terminal_send',
  title: 'Type into terminal',
  description:
    'Type text into a terminal session and press Enter (unless submit is false), then wait until the ' +
    'terminal is ready for input again and return the output. Ready means the shell is back at its ' +
    'prompt, or the running program (a python3 REPL, a y/n question, `read`) is waiting to read input. ' +
    'Without text (and keys), nothing is typed and the call only waits: use it to keep waiting for a ' +
    'command that is still running; output that arrived since the previous result comes first. To press ' +
    'Enter alone (accept a default, an empty passphrase, "Press Enter to continue", nano\'s file-name ' +
    'prompt) send text "" (with submit true, the default). The result ends with ' +
    '[wait: <reason>]: stdin_read = proven ready; running = the wait bound (timeoutMs) passed and the ' +
    'command is still running (call again without text to keep waiting); pattern = your waitFor ' +
    'matched; inferred_idle and timeout = NOT proven finished. Then [exit: <code>] of the last command ' +
    'when the shell prompt came back, [foreground: <program>] when a program other than the shell holds ' +
    'the terminal, and [session: running|exited …]. Start servers and watchers with waitFor (e.g. ' +
    'waitFor "Serving HTTP on|Listening on") so the call returns once they are up. Send one command, or ' +
    'one line of input for the running program, per call. To interrupt a program use terminal_signal ' +
    'SIGINT (do not type control characters). ' +
    'Full-screen programs (vim, nano, less, top, htop) return their rendered [screen: …] instead of ' +
    'output; drive them with keys instead of text, e.g. leave vim with ["Escape", {"text": ":wq"}, ' +
    '"Enter"], save and leave nano with ["C-o", "Enter", "C-x"], quit less with ["q"].',
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
      .max(MAX_WAIT_FOR_LENGTH, `must be at most ${MAX_WAIT_FOR_LENGTH} characters`)
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
    waitReason: z.enum(['stdin_read', 'running', 'pattern', 'inferred_idle', 'timeout', 'session_exit']),
    exitCode: z.number().int().optional(),
    cwd: z.string().optional(),
    sessionStatus: sessionStatusOutput,
    truncated: z.boolean(),
    elapsedMs: z.number(),
    screen: z
      .strictObject({
        lines: z.array(z.string()),
        cursor: z.strictObject({ row: z.number().int(), col: z.number().int() }),
      })
      .optional(),
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
            `[wait bound: ${cut.boundMs} ms, the most this server waits per call, instead of ${cut.askedMs} ms]`,
          ]
        : [];
    const trailer = [
      ...(result.screen === undefined ? [] : [renderScreen(result.screen)]),
      renderWait(result.waitReason, args.sessionId),
      ...(result.exitCode === undefined ? [] : [renderExit(result.exitCode)]),
      ...renderForeground(result.foreground),
      renderSession(result.sessionStatus),
      ...clampNote,
    ];
    // The note's length depends on the kept line count; reserve room for its longest form.
    const noteReserve = renderTruncated('x'.repeat(80), args.sessionId, Number.MAX_SAFE_INTEGER).length + 1;
    const budget =
      (ctx.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES) -
      Buffer.byteLength(trailer.join('\n')) -
      1 -
      noteReserve;
    const capped = capTail(result.viewport, budget);
    const truncated = result.truncated || capped.truncated;
    const kept = countLines(capped.text);
    // Read offsets count back from the newest scrollback line. When the shell's prompt settled the
    // send (an exit code is known), that newest line is the prompt, which the output leaves out.
    const pageBack = kept + (result.exitCode === undefined ? 0 : 1);
    const note = truncated
      ? [
          renderTruncated(
            `older output of this send was dropped, the last ${kept} lines are shown`,
            args.sessionId,
            pageBack,
          ),
        ]
      : [];
    const body = capped.text === '' ? [] : [capped.text.replace(/\n$/, '')];
    return {
      text: [...body, ...trailer, ...note].join('\n'),
      json: {
        output: capped.text,
        ...(result.foreground === undefined
          ? {}
          : { foreground: { pid: result.foreground.pid, command: result.foreground.command } }),
        waitReason: result.waitReason,
        ...(result.exitCode === undefined ? {} : { exitCode: result.exitCode }),
        ...(result.cwd === undefined ? {} : { cwd: result.cwd }),
        sessionStatus: statusOutput(result.sessionStatus),
        truncated,
        elapsedMs: result.elapsedMs,
        ...(result.screen === undefined ? {} : { screen: result.screen }),
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
