/**
 * A strict applier of a one-file unified diff (`diff -u` / `git diff` output), used at install time
 * to patch a copy of node-pty's source (scripts/build-native.mjs). Strict means: every hunk applies
 * exactly where its header says, every context and removed line must match the source byte for byte,
 * and the hunk's line counts must agree with its body. There is no fuzz and no offset search: a
 * source that differs from the one the patch was reviewed against is refused, never patched
 * "nearly right". Plain Node, no dependencies (it runs before anything else of the package is built).
 */

/**
 * One hunk: where it starts in the old and the new file, and its body lines with their prefix.
 * @typedef {{ header: string, oldStart: number, oldCount: number, newStart: number, newCount: number,
 *   lines: { kind: ' ' | '-' | '+', text: string }[] }} Hunk
 */

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** Raised for a patch that cannot be read or does not apply; the message says where and why. */
export class PatchError extends Error {
  constructor(message) {
    super(message);
    this.name = 'PatchError';
  }
}

/**
 * Parses `patchText` (any text before the first `--- ` line is a comment) into the target path named
 * by its `+++` line and its hunks. Throws PatchError on anything malformed or on a second file.
 * @param {string} patchText
 * @returns {{ target: string, hunks: Hunk[] }}
 */
export function parseUnifiedDiff(patchText) {
  const lines = patchText.split('\n');
  if (lines.at(-1) === '') lines.pop();
  let index = lines.findIndex((line) => line.startsWith('--- '));
  if (index === -1 || !lines[index + 1]?.startsWith('+++ ')) {
    throw new PatchError('not a unified diff: no "--- " line followed by a "+++ " line');
  }
  const target = lines[index + 1].slice(4).split('\t')[0];
  index += 2;
  /** @type {Hunk[]} */
  const hunks = [];
  while (index < lines.length) {
    const header = lines[index];
    if (header.startsWith('--- ')) throw new PatchError('the patch touches more than one file');
    const match = HUNK_HEADER.exec(header);
    if (match === null)
      throw new PatchError(`line ${index + 1}: expected a hunk header, got ${JSON.stringify(header)}`);
    const hunk = {
      header,
      oldStart: Number(match[1]),
      oldCount: match[2] === undefined ? 1 : Number(match[2]),
      newStart: Number(match[3]),
      newCount: match[4] === undefined ? 1 : Number(match[4]),
      lines: [],
    };
    index += 1;
    let oldSeen = 0;
    let newSeen = 0;
    while (index < lines.length && (oldSeen < hunk.oldCount || newSeen < hunk.newCount)) {
      const line = lines[index];
      const kind = line.charAt(0);
      if (kind === '\\') {
        throw new PatchError(`line ${index + 1}: "\\ No newline at end of file" is not supported`);
      }
      if (kind !== ' ' && kind !== '-' && kind !== '+') {
        throw new PatchError(`line ${index + 1}: hunk ${header} ends early (${JSON.stringify(line)})`);
      }
      if (kind !== '+') oldSeen += 1;
      if (kind !== '-') newSeen += 1;
      hunk.lines.push({ kind, text: line.slice(1) });
      index += 1;
    }
    if (oldSeen !== hunk.oldCount || newSeen !== hunk.newCount) {
      throw new PatchError(`hunk ${header}: its body has ${oldSeen} old and ${newSeen} new lines`);
    }
    hunks.push(hunk);
  }
  if (hunks.length === 0) throw new PatchError('the patch has no hunks');
  return { target, hunks };
}

/**
 * Applies `patchText` to `source` and returns the patched text. Throws PatchError naming the hunk
 * and the first line that differs when the patch does not apply exactly.
 * @param {string} source
 * @param {string} patchText
 * @returns {string}
 */
export function applyUnifiedDiff(source, patchText) {
  const { hunks } = parseUnifiedDiff(patchText);
  const endsWithNewline = source.endsWith('\n');
  const lines = source.split('\n');
  if (endsWithNewline) lines.pop();
  /** @type {string[]} */
  const out = [];
  let next = 0; // index of the first source line not yet copied
  for (const hunk of hunks) {
    // A hunk that only adds lines names the line after which they go.
    const start = hunk.oldCount === 0 ? hunk.oldStart : hunk.oldStart - 1;
    if (start < next) throw new PatchError(`hunk ${hunk.header} overlaps or precedes the one before it`);
    if (start > lines.length) throw new PatchError(`hunk ${hunk.header} starts past the end of the file`);
    out.push(...lines.slice(next, start));
    const expectedNewStart = hunk.newCount === 0 ? out.length : out.length + 1;
    if (hunk.newStart !== expectedNewStart) {
      throw new PatchError(`hunk ${hunk.header}: the new file would have it at line ${expectedNewStart}`);
    }
    let at = start;
    for (const { kind, text } of hunk.lines) {
      if (kind === '+') {
        out.push(text);
        continue;
      }
      if (lines[at] !== text) {
        const found = at < lines.length ? JSON.stringify(lines[at]) : 'the end of the file';
        throw new PatchError(
          `hunk ${hunk.header} does not apply: line ${at + 1} is ${found}, the patch expects ${JSON.stringify(text)}`,
        );
      }
      if (kind === ' ') out.push(text);
      at += 1;
    }
    next = at;
  }
  out.push(...lines.slice(next));
  return out.join('\n') + (endsWithNewline ? '\n' : '');
}
