/**
 * Named keys (SPEC §4.3): a send may carry `keys`, an ordered list of tmux `send-keys` names and
 * `{ text }` literals, instead of `text`. This module checks such a list and turns it into the bytes a
 * terminal sends for those keys, given the terminal's current modes. Pure: no Node side effects.
 */
import { TerminalError } from './errors.js';

/** One item of a `keys` send: a key name (`Enter`, `C-x`, `Up`) or literal text typed as is. */
export type SendKey = string | { text: string };

/** Terminal modes that change what a key sends. */
export interface KeyModes {
  /** DECCKM (`CSI ? 1 h`): cursor keys and Home/End send `ESC O x` instead of `ESC [ x`. */
  applicationCursorKeys: boolean;
}

const ESC = '\x1b';

/** Keys whose bytes do not depend on a mode. */
const FIXED_KEYS: Readonly<Record<string, string>> = {
  Enter: '\r',
  Escape: ESC,
  Tab: '\t',
  BTab: `${ESC}[Z`,
  BSpace: '\x7f',
  Space: ' ',
  PageUp: `${ESC}[5~`,
  PageDown: `${ESC}[6~`,
  PgUp: `${ESC}[5~`,
  PgDn: `${ESC}[6~`,
  PPage: `${ESC}[5~`,
  NPage: `${ESC}[6~`,
  Insert: `${ESC}[2~`,
  IC: `${ESC}[2~`,
  Delete: `${ESC}[3~`,
  DC: `${ESC}[3~`,
  F1: `${ESC}OP`,
  F2: `${ESC}OQ`,
  F3: `${ESC}OR`,
  F4: `${ESC}OS`,
  F5: `${ESC}[15~`,
  F6: `${ESC}[17~`,
  F7: `${ESC}[18~`,
  F8: `${ESC}[19~`,
  F9: `${ESC}[20~`,
  F10: `${ESC}[21~`,
  F11: `${ESC}[23~`,
  F12: `${ESC}[24~`,
};

/** Cursor keys and Home/End: the final byte after `ESC [` (normal) or `ESC O` (application mode). */
const CURSOR_KEYS: Readonly<Record<string, string>> = {
  Up: 'A',
  Down: 'B',
  Right: 'C',
  Left: 'D',
  Home: 'H',
  End: 'F',
};

/** `C-a`…`C-z`: a letter with Control. */
const CONTROL_LETTER = /^C-([a-zA-Z])$/;
/** One printable character (not a control): a key of its own. */
const SINGLE_CHARACTER = /^[^\p{Cc}]$/u;
/** `M-x`: one printable ASCII character with Meta (sent as ESC before it). */
const META_CHARACTER = /^M-([\x21-\x7e])$/;

/** The names a `keys` item may use, for error messages and tool descriptions. */
export const KEY_NAMES: readonly string[] = [
  ...Object.keys(FIXED_KEYS),
  ...Object.keys(CURSOR_KEYS),
  'C-a…C-z',
  'M-<char>',
  'any single character (q, i, :)',
];

/**
 * Bytes a terminal in its default line mode (ISIG) turns into a signal for its foreground process
 * group, with the key that types each and what it raises. They follow the `C-c` rule in every input
 * form (SPEC §4.4): a key name, a `{ text }` key, or inside `text`.
 */
const SIGNALLING_CONTROLS: ReadonlyMap<string, { key: string; raises: string }> = new Map([
  ['\x03', { key: 'C-c', raises: 'SIGINT' }],
  ['\x1a', { key: 'C-z', raises: 'SIGTSTP' }],
  ['\x1c', { key: 'C-\\', raises: 'SIGQUIT' }],
]);

/** Finds a signalling control character (linear scan; `text` may be a megabyte). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the class is exactly those control codes.
const SIGNALLING_CONTROL = /[\x03\x1a\x1c]/;

/**
 * Throws `KEY_REFUSED` when `text`, written to the terminal, would make it signal (`\x03`, `\x1a`,
 * `\x1c`) while the shell or a line-mode program holds it (`fullScreen` false). `where` names the
 * input for the message (`text`, `keys[2]`). A full-screen program reads these bytes as keys.
 */
export function refuseSignallingInput(text: string, fullScreen: boolean, where: string): void {
  if (fullScreen) return;
  const found = SIGNALLING_CONTROL.exec(text)?.[0];
  if (found === undefined) return;
  const { key, raises } = SIGNALLING_CONTROLS.get(found)!;
  const instead =
    raises === 'SIGQUIT'
      ? 'stop the program with terminal_signal (SIGINT, SIGTERM or SIGKILL)'
      : `send ${raises} with terminal_signal${raises === 'SIGINT' ? ' or cancel the send' : ''}`;
  throw new TerminalError(
    'KEY_REFUSED',
    `${where} holds ${key} (${JSON.stringify(found)}), which the terminal would turn into ${raises}: it is ` +
      `refused while the shell or a line-mode program holds the terminal; ${instead}. ${key} is sent only ` +
      'to a full-screen program',
  );
}

/**
 * Checks every item of `keys` (before anything is written): unknown names are refused with
 * `UNKNOWN_KEY` listing the valid ones; `C-c`, `C-z` and literal text holding their bytes (or `C-\`'s)
 * with `KEY_REFUSED` unless `fullScreen`.
 */
export function validateKeys(keys: readonly SendKey[], fullScreen: boolean): void {
  if (!Array.isArray(keys)) throw new TerminalError('INVALID_ARGUMENT', 'keys must be an array');
  for (const [index, key] of keys.entries()) {
    if (typeof key === 'object' && key !== null && typeof key.text === 'string') {
      refuseSignallingInput(key.text, fullScreen, `keys[${index}]`);
      continue;
    }
    if (typeof key !== 'string') {
      throw new TerminalError(
        'INVALID_ARGUMENT',
        `keys[${index}] must be a key name or { text: string }, got ${JSON.stringify(key)}`,
      );
    }
    const bytes = encodeNamedKey(key, { applicationCursorKeys: false });
    if (bytes === undefined) {
      throw new TerminalError(
        'UNKNOWN_KEY',
        `unknown key ${JSON.stringify(key)} at keys[${index}]; valid names: ${KEY_NAMES.join(', ')}, ` +
          'or { text: "..." } for literal text',
      );
    }
    refuseSignallingInput(bytes, fullScreen, `keys[${index}]`);
  }
}

/** The bytes for `keys` in order, for a terminal in `modes` (call {@link validateKeys} first). */
export function encodeKeys(keys: readonly SendKey[], modes: KeyModes): string {
  let out = '';
  for (const key of keys) {
    if (typeof key === 'string') out += encodeNamedKey(key, modes) ?? '';
    else out += key.text;
  }
  return out;
}

/** The bytes of one named key, or undefined when the name is unknown. */
function encodeNamedKey(name: string, modes: KeyModes): string | undefined {
  if (Object.hasOwn(FIXED_KEYS, name)) return FIXED_KEYS[name];
  if (Object.hasOwn(CURSOR_KEYS, name)) {
    return `${ESC}${modes.applicationCursorKeys ? 'O' : '['}${CURSOR_KEYS[name]}`;
  }
  const control = CONTROL_LETTER.exec(name);
  if (control !== null) return String.fromCharCode(control[1]!.toLowerCase().charCodeAt(0) - 0x60);
  const meta = META_CHARACTER.exec(name);
  if (meta !== null) return `${ESC}${meta[1]}`;
  // As in tmux, a single character is the key that types it (`q` quits less, `i` inserts in vim).
  if (SINGLE_CHARACTER.test(name)) return name;
  return undefined;
}
