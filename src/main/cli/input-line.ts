/**
 * What a line typed into the interactive CLI asks for. Lines are typed into the session, except the
 * CLI's own `:` commands. Sends become the arguments of the model's own `terminal_send`
 * tool (without `sessionId`), so the tool validates them and answers mistakes in its own words.
 */
import type { SendKey } from '../../shared/keys.js';

/** `terminal_send` arguments of a typed line (the CLI adds the sessionId). */
export interface CliSendArgs {
  text?: string;
  submit?: boolean;
  keys?: SendKey[];
  timeoutMs?: number;
  waitFor?: string;
}

/** One typed line, understood. */
export type CliAction =
  | { kind: 'send'; args: CliSendArgs }
  | { kind: 'read'; args: { offset?: number; count?: number } }
  | { kind: 'signal'; signal: string }
  | { kind: 'status' }
  | { kind: 'result' }
  | { kind: 'help' }
  | { kind: 'quit' }
  | { kind: 'error'; message: string };

/** The CLI's commands, for the banner and `:help`. */
export const CLI_COMMANDS_HELP =
  'Type a command line; an empty line presses Enter. :keys NAME… presses named keys (tmux names such as ' +
  'Escape, Enter, Tab, Up, C-x, F1; {text} types text literally, e.g. :keys Escape {:q!} Enter), ' +
  ':wait [MS] keeps waiting without typing, :waitfor /REGEX/ LINE sends LINE and returns when REGEX ' +
  'matches its output, :result shows the last result as the model got it, :read [offset] [count], ' +
  ':signal NAME, :status, :help, :quit. Ctrl-C interrupts a running send (a real SIGINT).';

/** A `:keys` item: `{…}` is literal text (it may hold spaces, not `}`), anything else a key name. */
const KEY_ITEM = /\{([^}]*)\}|(\S+)/g;

/** Parses one typed line. */
export function parseInputLine(line: string): CliAction {
  const trimmed = line.trim();
  const [word = '', ...rest] = trimmed.split(/\s+/);
  const tail = trimmed.slice(word.length).trim();
  if (!trimmed.startsWith(':')) {
    // An empty line is input, not a wait: it presses Enter (a "press Enter to continue", an empty
    // passphrase). Waiting without typing is `:wait`.
    return { kind: 'send', args: line === '' ? { text: '', submit: true } : { text: line } };
  }
  switch (word) {
    case ':quit':
    case ':q':
      return { kind: 'quit' };
    case ':status':
      return { kind: 'status' };
    case ':result':
      return { kind: 'result' };
    case ':help':
      return { kind: 'help' };
    case ':wait': {
      if (tail === '') return { kind: 'send', args: {} };
      if (!/^[0-9]+$/.test(tail) || Number(tail) < 1) {
        return { kind: 'error', message: ':wait takes a whole number of ms, e.g. :wait 60000' };
      }
      return { kind: 'send', args: { timeoutMs: Number(tail) } };
    }
    case ':waitfor': {
      const match = /^\/(.+?)\/\s+(.+)$/.exec(tail);
      if (match === null) {
        return {
          kind: 'error',
          message:
            ':waitfor needs /REGEX/ and a line, e.g. :waitfor /Serving HTTP on/ python3 -m http.server 0',
        };
      }
      return { kind: 'send', args: { text: match[2]!, waitFor: match[1]! } };
    }
    case ':keys': {
      const keys = [...tail.matchAll(KEY_ITEM)].map(
        (item): SendKey => (item[1] === undefined ? item[2]! : { text: item[1] }),
      );
      if (keys.length === 0) {
        return { kind: 'error', message: ':keys needs key names, e.g. :keys Escape {:q!} Enter' };
      }
      return { kind: 'send', args: { keys } };
    }
    case ':read': {
      const [offset, count] = rest;
      return {
        kind: 'read',
        args: {
          ...(offset === undefined ? {} : { offset: Number(offset) }),
          ...(count === undefined ? {} : { count: Number(count) }),
        },
      };
    }
    case ':signal':
      return { kind: 'signal', signal: (rest[0] ?? 'SIGINT').toUpperCase() };
    default:
      // Not a CLI command (bash's `:` builtin, a REPL's own colon commands): typed as it is.
      return { kind: 'send', args: { text: line } };
  }
}
