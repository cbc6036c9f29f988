/**
 * The six model-facing terminal tools (SPEC §7) and one entry point that runs any of them by name:
 * parse the arguments, run, cap, and turn every failure into an error result the model can act on.
 */
import { describeError } from '../../shared/errors.js';
import { terminalClose } from './terminal-close.js';
import { terminalList } from './terminal-list.js';
import { terminalOpen } from './terminal-open.js';
import { terminalRead } from './terminal-read.js';
import { terminalSend } from './terminal-send.js';
import { terminalSignal } from './terminal-signal.js';
import type { TerminalTool, TerminalToolContext } from './tool.js';
import { describeToolError } from './tool-errors.js';

/** Every tool, in the order a model should meet them. */
export const TERMINAL_TOOLS: readonly TerminalTool[] = [
  terminalOpen,
  terminalSend,
  terminalRead,
  terminalSignal,
  terminalClose,
  terminalList,
];

/** Names of the tools. */
export type TerminalToolName =
  | 'terminal_open'
  | 'terminal_send'
  | 'terminal_read'
  | 'terminal_signal'
  | 'terminal_close'
  | 'terminal_list';

/** Outcome of one call: text for the model and, on success, the JSON result. */
export type TerminalToolOutcome =
  | { isError: false; text: string; json: Record<string, unknown> }
  | { isError: true; text: string; code: string };

/** Runs the tool `name` with raw (unvalidated) arguments; never throws. */
export async function runTerminalTool(
  name: string,
  rawArgs: unknown,
  ctx: TerminalToolContext,
): Promise<TerminalToolOutcome> {
  const tool = TERMINAL_TOOLS.find((candidate) => candidate.name === name);
  if (tool === undefined) {
    const known = TERMINAL_TOOLS.map((candidate) => candidate.name).join(', ');
    return {
      isError: true,
      code: 'INVALID_ARGUMENT',
      text: `Unknown tool "${name}". Available tools: ${known}.`,
    };
  }
  try {
    const result = await tool.run(tool.parse(rawArgs), ctx);
    return { isError: false, text: result.text, json: result.json as Record<string, unknown> };
  } catch (error) {
    const code =
      typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : 'INTERNAL';
    return { isError: true, code, text: describeToolErrorSafely(error) };
  }
}

function describeToolErrorSafely(error: unknown): string {
  try {
    return describeToolError(error);
  } catch (unrenderable) {
    // A thrown value whose message getter itself throws must still produce an error result.
    return `Internal error: ${describeError(unrenderable)}`;
  }
}
