/** `terminal_close {sessionId}` → `{ sessionId, outcome: 'closed' | 'already-closing' }`. */
import { z } from 'zod';
import { sessionIdArgument } from './schemas.js';
import { defineTool } from './tool.js';

/** Why a session closed through the tool, as the engine records it. */
const CLOSE_REASON = 'terminal_close';

/** Closes a session and everything running in it. */
export const terminalClose = defineTool({
  name: 'terminal_close',
  title: 'Close terminal',
  description:
    'Close a terminal session: everything running in it is stopped (the whole process tree) and the ' +
    'sessionId becomes invalid. Close sessions you no longer need.',
  hints: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  input: z.strictObject({ sessionId: sessionIdArgument }),
  output: z.strictObject({ sessionId: z.string(), outcome: z.enum(['closed', 'already-closing']) }),
  async run(args, ctx) {
    const result = await ctx.pty.kill(ctx.owner, args.sessionId, CLOSE_REASON);
    const text =
      result.outcome === 'closed'
        ? `Closed terminal session ${result.sessionId}; its processes are gone.`
        : `Terminal session ${result.sessionId} was already closing; it is closed now.`;
    return { text, json: { sessionId: result.sessionId, outcome: result.outcome } };
  },
});
