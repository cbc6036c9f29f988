/**
 * `terminal_send {sessionId, text, submit?}` → `{ output, waitReason, exitCode?, cwd?, sessionStatus,
 * truncated, elapsedMs }`. Rendered: the output of this send, then `[wait: …]`, `[exit: …]` when the
 * shell's prompt proved it, `[session: …]`, and a truncation note when output was dropped.
 */
import { z } from 'zod';
import { KEY_NAMES } from '../../shared/keys.js';
import { renderExit, renderScreen, renderSession, renderTruncated, renderWait } from './render.js';
import { capTail, countLines } from './result-cap.js';
import { sessionIdArgument, sessionStatusOutput } from './schemas.js';
import { DEFAULT_MAX_RESULT_BYTES, defineTool } from './tool.js';

/** Types into a session and waits until it is ready for input again. */
export const terminalSend = defineTool({
  name: 'terminal_send',
  title: 'Type into terminal',
  description:
    'Type text into a terminal session and press Enter (unless submit is false), then wait until the ' +
    'terminal is ready for input again and return the output this produced. Ready means the shell is ' +
    'back at its prompt, or the running program (a python3 REPL, a y/n question, `read`) is waiting to ' +
    'read input. The result ends with [wait: <reason>] (stdin_read = proven ready; inferred_idle and ' +
    'timeout = NOT proven, the command may still be running), [exit: <code>] of the last command when ' +
    'the shell prompt came back, and [session: running|exited …]. Send one command, or one line of ' +
    'input for the running program, per call. To interrupt a program use terminal_signal SIGINT ' +
    '(do not type control characters). Use submit=false to type without pressing Enter. ' +
    'Full-screen programs (vim, nano, less, top, htop) return their rendered [screen: …] instead of ' +
    'output; drive them with keys instead of text, e.g. leave vim with ["Escape", {"text": ":wq"}, ' +
    '"Enter"], save and leave nano with ["C-o", "Enter", "C-x"], quit less with ["q"].',
  hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  input: z.strictObject({
    sessionId: sessionIdArgument,
    text: z
      .string({ error: 'must be the text to type, as a string (use "" to just press Enter)' })
      .optional()
      .describe('Text to type, e.g. "ls -la" or "print(6*7)". Use "" with submit=true to press Enter.'),
    submit: z
      .boolean({ error: 'must be true (press Enter after the text, default) or false' })
      .default(true)
      .describe('Press Enter after the text (default true).'),
    keys: z
      .array(z.union([z.string(), z.strictObject({ text: z.string() })]), {
        error: 'must be a list of key names and {"text": "..."} literals',
      })
      .optional()
      .describe(
        `Instead of text: keys pressed in order, as tmux send-keys names (${KEY_NAMES.join(', ')}) or ` +
          '{"text": "..."} for literal text. No Enter is added. C-c is only sent to a full-screen ' +
          'program; to interrupt a command use terminal_signal.',
      ),
  }),
  output: z.strictObject({
    output: z.string(),
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
    const operation = ctx.pty.startSend(ctx.owner, args.sessionId, {
      // keys, or text (+ Enter unless submit is false), or neither: a wait that types nothing.
      ...(args.keys !== undefined
        ? { keys: args.keys }
        : args.text === undefined
          ? { text: '', submit: false }
          : { text: args.text, submit: args.submit }),
      ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
    });
    const result = await operation.done;
    const trailer = [
      ...(result.screen === undefined ? [] : [renderScreen(result.screen)]),
      renderWait(result.waitReason),
      ...(result.exitCode === undefined ? [] : [renderExit(result.exitCode)]),
      renderSession(result.sessionStatus),
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
        waitReason: result.waitReason,
        ...(result.exitCode === undefined ? {} : { exitCode: result.exitCode }),
        ...(result.cwd === undefined ? {} : { cwd: result.cwd }),
        sessionStatus: result.sessionStatus,
        truncated,
        elapsedMs: result.elapsedMs,
        ...(result.screen === undefined ? {} : { screen: result.screen }),
      },
    };
  },
});
