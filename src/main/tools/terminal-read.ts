/**
 * `terminal_read {sessionId, offset?, count?}` → `{ text, totalLines, lineBegin, lineEnd, truncated,
 * hint? }`. Rendered: the lines, then `[lines a-b of n]`, and how to page further back when older lines
 * exist (the `hint` carries that note).
 */
import { z } from 'zod';
import {
  hintField,
  noteLine,
  plainLine,
  type ResultLine,
  readCall,
  renderTruncated,
  textOf,
} from './render.js';
import { capTail } from './result-cap.js';
import { hintOutput, sessionIdArgument } from './schemas.js';
import { DEFAULT_MAX_RESULT_BYTES, defineTool } from './tool.js';

/** Default page size, the engine's own default. */
const DEFAULT_COUNT = 500;

/** Largest page a call may ask for; the engine also bounds a page by bytes. */
const MAX_COUNT = 10_000;

/** Reads a page of a session's scrollback. */
export const terminalRead = defineTool({
  name: 'terminal_read',
  title: 'Read terminal scrollback',
  description:
    "Read lines from a session's scrollback (the output it has printed), without typing anything. " +
    'offset counts lines back from the newest (0 = the page ends at the newest line); count is the ' +
    `number of lines (default ${DEFAULT_COUNT}). Use it to check on a command that was still running ` +
    'when its send returned, or to page back through output a send truncated: the result says which ' +
    'offset shows the previous page.',
  hints: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  input: z.strictObject({
    sessionId: sessionIdArgument,
    offset: z
      .number({ error: 'must be a whole number of lines back from the newest line (0 or more)' })
      .int('must be a whole number of lines back from the newest line (0 or more)')
      .min(0, 'must be 0 or more: it counts lines back from the newest line')
      .optional()
      .describe('Lines back from the newest line where the page ends (default 0).'),
    count: z
      .number({ error: `must be a whole number of lines, 1 to ${MAX_COUNT}` })
      .int(`must be a whole number of lines, 1 to ${MAX_COUNT}`)
      .min(1, `must be at least 1 (default ${DEFAULT_COUNT})`)
      .max(MAX_COUNT, `must be at most ${MAX_COUNT}; page with offset instead`)
      .optional()
      .describe(`Number of lines (default ${DEFAULT_COUNT}, at most ${MAX_COUNT}).`),
  }),
  output: z.strictObject({
    text: z.string(),
    totalLines: z.number().int(),
    lineBegin: z.number().int(),
    lineEnd: z.number().int(),
    truncated: z.boolean(),
    hint: hintOutput,
  }),
  async run(args, ctx) {
    const page = await ctx.pty.read(ctx.owner, args.sessionId, {
      ...(args.offset === undefined ? {} : { offset: args.offset }),
      ...(args.count === undefined ? {} : { count: args.count }),
    });
    // Room for the two trailer lines; their exact length depends on the numbers, bounded here.
    const trailerReserve = 400;
    const capped = capTail(page.text, (ctx.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES) - trailerReserve);
    // Dropped whole lines move the start of the page; a partially kept first line still starts it.
    const lineBegin = Math.min(page.lineBegin + capped.droppedLines, page.lineEnd);
    const truncated = page.truncated || capped.truncated;
    const olderOffset = page.totalLines - lineBegin;
    const footer: ResultLine[] = [
      plainLine(
        page.lineEnd === page.lineBegin
          ? `[lines: none in this range; the scrollback holds ${page.totalLines} lines]`
          : `[lines ${lineBegin + 1}-${page.lineEnd} of ${page.totalLines}]`,
      ),
    ];
    if (truncated) {
      footer.push(
        renderTruncated('Older lines of this page were dropped to fit', args.sessionId, olderOffset),
      );
    } else if (lineBegin > 0) {
      footer.push(
        noteLine(
          '[more]',
          `${lineBegin} older lines; the previous page is ${readCall(args.sessionId, olderOffset)}.`,
        ),
      );
    }
    return {
      text: [...(capped.text === '' ? [] : [capped.text]), textOf(footer)].join('\n'),
      json: {
        text: capped.text,
        totalLines: page.totalLines,
        lineBegin,
        lineEnd: page.lineEnd,
        truncated,
        ...hintField(footer),
      },
    };
  },
});
