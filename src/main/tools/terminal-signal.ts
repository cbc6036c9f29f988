/** `terminal_signal {sessionId, signal}` → `{ delivered, targetPgid, hint? }`. */
import { z } from 'zod';
import { SIGNAL_NAMES } from '../../shared/signals.js';
import { hintField, plainLine, sentenceLine } from './render.js';
import { hintOutput, sessionIdArgument } from './schemas.js';
import { defineTool } from './tool.js';

/** Sends a signal to the foreground program of a session. */
export const terminalSignal = defineTool({
  name: 'terminal_signal',
  title: 'Signal terminal program',
  description:
    'Send a signal to the program running in the foreground of a terminal session: SIGINT interrupts ' +
    'it (like Ctrl-C; the usual way to stop a command or a hung send), SIGTSTP suspends it (Ctrl-Z), ' +
    'SIGTERM asks it to exit, SIGHUP hangs it up, SIGKILL forces it to die (refused for the shell ' +
    'itself: use terminal_close to end the session). Returns as soon as the signal is delivered; ' +
    'use terminal_read or terminal_send afterwards to see the effect.',
  hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  input: z.strictObject({
    sessionId: sessionIdArgument,
    signal: z
      .enum(SIGNAL_NAMES, {
        error: `must be one of ${SIGNAL_NAMES.join(', ')} (SIGINT to interrupt, like Ctrl-C)`,
      })
      .describe('Signal name: SIGINT, SIGTERM, SIGKILL, SIGTSTP or SIGHUP.'),
  }),
  output: z.strictObject({ delivered: z.literal(true), targetPgid: z.number().int(), hint: hintOutput }),
  async run(args, ctx) {
    const result = await ctx.pty.signal(ctx.owner, args.sessionId, args.signal);
    const lines = [
      plainLine(
        `Delivered ${args.signal} to the foreground process group ${result.targetPgid} of ${args.sessionId}.`,
      ),
      sentenceLine(
        `See its effect with terminal_send ${JSON.stringify({ sessionId: args.sessionId })} (no text: ` +
          'it waits until the terminal is ready and returns what was printed), or with terminal_read.',
      ),
    ];
    return {
      text: lines.map((line) => line.text).join(' '),
      json: { delivered: result.delivered, targetPgid: result.targetPgid, ...hintField(lines) },
    };
  },
});
