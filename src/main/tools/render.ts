/**
 * The lines terminal results are made of (SPEC §7): `[wait: <reason>]`, `[exit: <code>]`,
 * `[foreground: <command>]`, `[session: running | exited code=… signal=…]`, a full-screen program's
 * `[screen: …]`, and the notes that explain a result (a running command, an unproven settle, dropped
 * output and how to page back to it).
 *
 * Both forms of a result carry the whole truth: some clients hand the model only the text, others only
 * the JSON. So a line that explains something is a {@link ResultLine} with a `note`, and the JSON
 * result's `hint` is made of exactly those notes ({@link hintOf}): the words cannot drift apart,
 * because the text is built from the same strings.
 */
import type {
  ForegroundProcess,
  HumanHold,
  SessionStatus,
  TerminalScreen,
  WaitReason,
} from '../../shared/types.js';

/** One line of a rendered result. */
export interface ResultLine {
  /** The line as the text shows it. */
  readonly text: string;
  /** The explanation the line carries, verbatim as it appears in `text`; the JSON `hint` joins these. */
  readonly note?: string;
}

/** A line that only states data the JSON result holds as fields. */
export function plainLine(text: string): ResultLine {
  return { text };
}

/** `[tag]` followed by an explanation; the explanation also goes into the JSON result's `hint`. */
export function noteLine(tag: string, note: string): ResultLine {
  return { text: `${tag} ${note}`, note };
}

/** A line that is all explanation (its whole text is the note). */
export function sentenceLine(note: string): ResultLine {
  return { text: note, note };
}

/** The rendered text of some lines. */
export function textOf(lines: readonly ResultLine[]): string {
  return lines.map((line) => line.text).join('\n');
}

/** The JSON result's `hint`: the notes of the lines, in order; undefined when no line explains anything. */
export function hintOf(lines: readonly ResultLine[]): string | undefined {
  const notes = lines.flatMap((line) => (line.note === undefined ? [] : [line.note]));
  return notes.length === 0 ? undefined : notes.join(' ');
}

/** `{ hint }` when the lines explain something, else nothing: spread into a JSON result. */
export function hintField(lines: readonly ResultLine[]): { hint?: string } {
  const hint = hintOf(lines);
  return hint === undefined ? {} : { hint };
}

/**
 * Command names of shells: a foreground that is one of them is the shell itself (at its prompt, its
 * continuation prompt or `read`), which needs no `[foreground: …]` line; anything else (`python3` at
 * `>>>`, `vim`, `sleep`) is named so a model can tell a REPL's prompt from the shell's.
 */
const SHELL_COMMANDS: ReadonlySet<string> = new Set(['bash', 'zsh', 'sh', 'dash', 'pwsh', 'fish', 'ksh']);

/** The call that keeps waiting: `terminal_send` without text for this session, or in general. */
function waitAgainCall(sessionId: string | undefined): string {
  return sessionId === undefined
    ? 'terminal_send without text'
    : `terminal_send ${JSON.stringify({ sessionId })} (no text)`;
}

/** What each wait reason tells the model to do next; proven readiness needs no comment. */
function waitNote(
  reason: WaitReason,
  sessionId: string | undefined,
  humanHold: HumanHold | undefined,
): string | undefined {
  const waitAgain = waitAgainCall(sessionId);
  switch (reason) {
    case 'stdin_read':
      return undefined;
    case 'running':
      return (
        'The command is still running: this send stopped waiting before it finished (it is not done, and' +
        ` not waiting for input). Keep waiting with ${waitAgain}, or stop it with terminal_signal SIGINT.`
      );
    case 'pattern':
      return (
        'The waitFor pattern matched; the command may still be running (a server keeps serving).' +
        ` Follow its output with ${waitAgain} or terminal_read, stop it with terminal_signal SIGINT.`
      );
    case 'inferred_idle':
      return (
        'Not proven finished: output stopped where readiness cannot be observed (an unusual prompt, or' +
        ' a relay such as ssh, script or tmux); the command may still be running or waiting for input.' +
        ` Check with terminal_read, keep waiting with ${waitAgain}, or stop it with terminal_signal SIGINT.`
      );
    case 'timeout':
      return (
        "Not proven finished: this send's wait bound passed and the terminal's state could not be read;" +
        ` the command is probably still running. Keep waiting with ${waitAgain}, check with terminal_read,` +
        ' or stop it with terminal_signal SIGINT.'
      );
    case 'session_exit':
      return 'The shell exited or the session was closed; open a new one with terminal_open.';
    case 'human':
      return humanNote(humanHold, waitAgain);
  }
}

/**
 * What a `human` result tells the model, by which send the hold settled: whether its input was typed
 * decides whether sending it again would run it twice.
 */
function humanNote(humanHold: HumanHold | undefined, waitAgain: string): string {
  switch (humanHold) {
    case 'taken_over':
      return (
        "A person took this terminal's keyboard (the watch page) while this command ran: it was typed and" +
        ` may still be running. Do not send it again; wait with ${waitAgain} after they hand the keyboard back.`
      );
    case 'not_typed':
      return (
        "A person holds this terminal's keyboard (the watch page): nothing of this send was typed. Let them" +
        ` finish; wait with ${waitAgain}, and send your input again once they hand the keyboard back.`
      );
    case 'wait_only':
      return (
        "A person holds this terminal's keyboard (the watch page): this wait's bound ended while they held it" +
        ` (it typed nothing). Keep waiting with ${waitAgain}; it settles when they hand the keyboard back, or ask the user.`
      );
    case undefined:
      return (
        "A person holds this terminal's keyboard (the watch page). Let them finish; wait with" +
        ` ${waitAgain}, and check with terminal_read whether your input was typed before sending it again.`
      );
  }
}

/**
 * `[wait: reason]` plus what the reason means for the next step. With `sessionId`, the note names the
 * exact call that keeps waiting; `humanHold` says which send a `human` result is.
 */
export function renderWait(reason: WaitReason, sessionId?: string, humanHold?: HumanHold): ResultLine {
  const note = waitNote(reason, sessionId, humanHold);
  return note === undefined ? plainLine(`[wait: ${reason}]`) : noteLine(`[wait: ${reason}]`, note);
}

/** `[exit: code]`. */
export function renderExit(code: number): ResultLine {
  return plainLine(`[exit: ${code}]`);
}

/** `[foreground: command]` when something other than the shell holds the terminal, else nothing. */
export function renderForeground(foreground: ForegroundProcess | undefined): ResultLine[] {
  if (foreground === undefined || SHELL_COMMANDS.has(foreground.command)) return [];
  return [plainLine(`[foreground: ${foreground.command}]`)];
}

/** `[session: running]` or `[session: exited code=… signal=…]` (`none` for an absent value). */
export function renderSession(status: SessionStatus): string {
  if (status.kind === 'running') return '[session: running]';
  return `[session: exited code=${status.exitCode ?? 'none'} signal=${status.signal ?? 'none'}]`;
}

/** A `terminal_read` call as the model would write it. */
export function readCall(sessionId: string, offset: number, count?: number): string {
  const args = count === undefined ? { sessionId, offset } : { sessionId, offset, count };
  return `terminal_read ${JSON.stringify(args)}`;
}

/** The truncation note: what was dropped (a sentence without its full stop), and the call that pages back to it. */
export function renderTruncated(what: string, sessionId: string, offset: number): ResultLine {
  return noteLine('[truncated]', `${what}; page back with ${readCall(sessionId, offset)}.`);
}

/** What a model does with a full-screen program's screen. */
const SCREEN_NOTE =
  'A full-screen program owns the terminal; this is its screen (the JSON field screen). Drive it with ' +
  'keys, not text: e.g. ["Escape", {"text": ":q!"}, "Enter"] leaves vim, ["C-x"] leaves nano, ["q"] quits less.';

/**
 * A full-screen program's screen (SPEC §4.3): a header naming the cursor (1-based, as editors count)
 * and how to drive the program, then the screen's lines, trailing blank lines left out.
 */
export function renderScreen(screen: TerminalScreen): ResultLine[] {
  const lines = [...screen.lines];
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const tag = `[screen: cursor at row ${screen.cursor.row + 1}, column ${screen.cursor.col + 1}]`;
  return [noteLine(tag, SCREEN_NOTE), ...lines.map(plainLine)];
}

/** Where a person can type into a session, as the `[input: hidden …]` line names it. */
export interface WatchPageAddress {
  /** The page's address without its token (the token never appears in a result). */
  url: string;
  /** The file that holds the link with the token, when the server wrote one (`mcp --watch`). */
  urlFile?: string;
}

/**
 * `[input: hidden — …]` (SPEC §13): the program waits for input the terminal does not echo, so the model
 * must not guess it. Names what works in this configuration: the running watch page, or how to start one.
 */
export function renderInputHidden(hidden: true | 'likely', watch: WatchPageAddress | undefined): ResultLine {
  const where =
    watch === undefined
      ? "a watch page (none is running: the user starts one with `agent-pty mcp --watch`, or `agent-pty watch` for a daemon's sessions)"
      : `the watch page (${watch.url}${watch.urlFile === undefined ? '' : `, its link with the token is in ${watch.urlFile}`})`;
  const what =
    hidden === true
      ? 'hidden — a password or passphrase prompt'
      : 'likely hidden — this looks like a password or passphrase prompt';
  return sentenceLine(
    `[input: ${what}; ask the user to type it in ${where}, or send it only if the user gave it to you]`,
  );
}
