/**
 * Finds the JSON-RPC `id` of a line too long to parse (SPEC §4.7), from its first and last few KiB
 * only: a top-level `"id"` member that comes before the first large value (clients that write `id`
 * first), or that is the object's last member (the MCP SDK writes `{method, params, jsonrpc, id}`).
 * Exact on those shapes and never fooled by an `"id"` nested in the params; `undefined` otherwise.
 */
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

/**
 * The top-level object's last member is `"id": <string | integer>`: the text ends with it and the
 * closing brace. A nested `"id"` is followed by a second brace or bracket and cannot match; a string
 * value cannot end in an unescaped quote before `}`.
 */
const TRAILING_ID = /[{,]\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/;

/** The id of a line whose first bytes are `head` and last bytes are `tail` (latin1 text of each). */
export function findRequestId(head: string, tail: string): RequestId | undefined {
  return leadingId(head) ?? trailingId(tail);
}

function trailingId(tail: string): RequestId | undefined {
  const token = TRAILING_ID.exec(tail)?.[1];
  return token === undefined ? undefined : idOf(token);
}

/** Walks the top-level members of the object `text` starts, until `id` or until the text runs out. */
function leadingId(text: string): RequestId | undefined {
  let at = skipSpace(text, 0);
  if (text[at] !== '{') return undefined;
  at = skipSpace(text, at + 1);
  for (;;) {
    const keyEnd = stringEnd(text, at);
    if (keyEnd === undefined) return undefined;
    const key = text.slice(at, keyEnd);
    at = skipSpace(text, keyEnd);
    if (text[at] !== ':') return undefined;
    at = skipSpace(text, at + 1);
    const valueEnd = valueEndAt(text, at);
    if (valueEnd === undefined) return undefined;
    if (key === '"id"') return idOf(text.slice(at, valueEnd));
    at = skipSpace(text, valueEnd);
    if (text[at] !== ',') return undefined;
    at = skipSpace(text, at + 1);
  }
}

/** A JSON-RPC id token (a JSON string or an integer), or `undefined` when it is neither. */
function idOf(token: string): RequestId | undefined {
  if (token.startsWith('"')) {
    try {
      return JSON.parse(token) as string;
    } catch {
      return undefined;
    }
  }
  const value = Number(token);
  return /^-?\d+$/.test(token) && Number.isSafeInteger(value) ? value : undefined;
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && ' \t\r\n'.includes(text[at]!)) at++;
  return at;
}

/** End (exclusive) of the JSON string starting at `at`, or `undefined` when it does not end in `text`. */
function stringEnd(text: string, at: number): number | undefined {
  if (text[at] !== '"') return undefined;
  for (let i = at + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i + 1;
  }
  return undefined;
}

/** End (exclusive) of the JSON value starting at `at`, or `undefined` when it does not end in `text`. */
function valueEndAt(text: string, at: number): number | undefined {
  const first = text[at];
  if (first === '"') return stringEnd(text, at);
  if (first === '{' || first === '[') {
    let depth = 0;
    for (let i = at; i < text.length; i++) {
      const char = text[i];
      if (char === '"') {
        const end = stringEnd(text, i);
        if (end === undefined) return undefined;
        i = end - 1;
      } else if (char === '{' || char === '[') depth++;
      else if (char === '}' || char === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return undefined;
  }
  // A number or a literal (true, false, null): up to the next delimiter.
  let end = at;
  while (end < text.length && !',}] \t\r\n'.includes(text[end]!)) end++;
  return end > at && end < text.length ? end : undefined;
}
