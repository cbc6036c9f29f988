/**
 * Splits a command string into an argv the way a POSIX shell splits words, without running a shell:
 * `agent-pty mcp --world 'box=ssh -p 2222 build-box agent-pty serve --stdio'`. Quoting:
 * - whitespace separates words;
 * - 'single quotes' keep everything literally;
 * - "double quotes" keep everything but `\"`, `\\`, `\$` and `` \` ``, which lose their backslash;
 * - outside quotes a backslash keeps the next character literally.
 * Nothing is expanded: no variables, globs, `~` or command substitution.
 */
import { TerminalError } from '../../shared/errors.js';

/** Characters a backslash escapes inside double quotes (elsewhere there it stays). */
const DOUBLE_QUOTE_ESCAPES = new Set(['"', '\\', '$', '`']);

/** The words of `text`; throws `INVALID_ARGUMENT` on an unterminated quote or a trailing backslash. */
export function splitCommandLine(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    inWord = true;
    if (char === "'") {
      const end = text.indexOf("'", index + 1);
      if (end === -1) throw unterminated(text, "'");
      word += text.slice(index + 1, end);
      index = end;
    } else if (char === '"') {
      let closed = false;
      for (index++; index < text.length; index++) {
        const inner = text[index]!;
        if (inner === '"') {
          closed = true;
          break;
        }
        if (inner === '\\' && DOUBLE_QUOTE_ESCAPES.has(text[index + 1] ?? '')) {
          word += text[++index];
        } else {
          word += inner;
        }
      }
      if (!closed) throw unterminated(text, '"');
    } else if (char === '\\') {
      if (index + 1 >= text.length) {
        throw new TerminalError('INVALID_ARGUMENT', `command ends with a lone backslash: ${text}`);
      }
      word += text[++index];
    } else {
      word += char;
    }
  }
  if (inWord) words.push(word);
  return words;
}

function unterminated(text: string, quote: string): TerminalError {
  return new TerminalError('INVALID_ARGUMENT', `unterminated ${quote} quote in command: ${text}`);
}
