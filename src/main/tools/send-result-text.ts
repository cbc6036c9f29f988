/**
 * A send result as a model receives it (SPEC §7): the output of the send (its tail, within the result
 * cap), then a full-screen program's screen, `[wait: …]`, `[exit: …]`, `[foreground: …]`,
 * `[session: …]`, any note the caller adds, and a truncation note with the `terminal_read` call that
 * pages back. The `terminal_send` tool, the demo and the interactive CLI all render with this, so a
 * person sees exactly what a model gets; `hint` carries the same notes for clients that read only JSON.
 */
import type { TerminalSendResult } from '../../shared/types.js';
import { renderLimitEvents } from './limit-note.js';
import {
  hintOf,
  plainLine,
  type ResultLine,
  renderExit,
  renderForeground,
  renderInputHidden,
  renderScreen,
  renderSession,
  renderTruncated,
  renderWait,
  sentenceLine,
  textOf,
  type WatchPageAddress,
} from './render.js';
import { capTail, countLines } from './result-cap.js';

/** How to render one send result. */
export interface SendResultTextOptions {
  /** The session the send ran in: notes name the exact calls that continue it. */
  sessionId: string;
  /** Cap of the whole text in UTF-8 bytes; the output's tail is kept. */
  maxResultBytes: number;
  /** Lines the caller adds after the status lines (e.g. a server's wait bound note). */
  extraLines?: readonly ResultLine[];
  /** The watch page a hidden-input note names (SPEC §13); absent: none runs. */
  watchPage?: WatchPageAddress;
}

/** A rendered send result. */
export interface SendResultText {
  /** The whole text. */
  text: string;
  /** The kept output (the JSON `output`). */
  output: string;
  /** Whether older output was dropped, by the engine or by the cap. */
  truncated: boolean;
  /** The notes of the text, for the JSON `hint`. */
  hint: string | undefined;
}

/** Renders a send result within `maxResultBytes`. */
export function renderSendResult(result: TerminalSendResult, options: SendResultTextOptions): SendResultText {
  const { sessionId } = options;
  const status: ResultLine[] = [
    ...(result.screen === undefined ? [] : renderScreen(result.screen)),
    renderWait(result.waitReason, sessionId, result.humanHold),
    ...(result.inputHidden === undefined ? [] : [renderInputHidden(result.inputHidden, options.watchPage)]),
    ...(result.exitCode === undefined ? [] : [renderExit(result.exitCode)]),
    ...renderForeground(result.foreground),
    plainLine(renderSession(result.sessionStatus)),
    ...renderLimitEvents(result.limitEvents, result.sessionStatus.limits).map(sentenceLine),
    ...(options.extraLines ?? []),
  ];
  // The note's length depends on the kept line count; reserve room for its longest form.
  const noteReserve =
    Buffer.byteLength(truncatedLine(sessionId, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER).text) + 1;
  const budget = options.maxResultBytes - Buffer.byteLength(textOf(status)) - 1 - noteReserve;
  const capped = capTail(result.viewport, budget);
  const truncated = result.truncated || capped.truncated;
  const kept = countLines(capped.text);
  // Read offsets count back from the newest scrollback line. When the shell's prompt settled the
  // send (an exit code is known), that newest line is the prompt, which the output leaves out.
  const pageBack = kept + (result.exitCode === undefined ? 0 : 1);
  const trailerLines = [...status, ...(truncated ? [truncatedLine(sessionId, kept, pageBack)] : [])];
  const body = capped.text.replace(/\n$/, '');
  const trailer = textOf(trailerLines);
  return {
    text: body === '' ? trailer : `${body}\n${trailer}`,
    output: capped.text,
    truncated,
    hint: hintOf(trailerLines),
  };
}

/**
 * The text after the output, given the JSON `output` it was rendered with: what a person who watched
 * the output arrive live has not seen yet (the inverse of the layout of {@link renderSendResult}).
 */
export function sendResultTrailer(text: string, output: string): string {
  const body = output.replace(/\n$/, '');
  return body === '' ? text : text.slice(body.length + 1);
}

function truncatedLine(sessionId: string, kept: number, pageBack: number): ResultLine {
  return renderTruncated(
    `Older output of this send was dropped, the last ${kept} lines are shown`,
    sessionId,
    pageBack,
  );
}
