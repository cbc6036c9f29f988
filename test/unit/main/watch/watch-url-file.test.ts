// The watch page's link file (SPEC §13) lives in the daemon's runtime directory under the same rule as
// its socket (private-directory.ts): a directory that is not this user's alone is refused, never used.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { writeWatchUrlFile } from '../../../../src/main/watch/watch-url-file.js';
import { checkSocketDirectory } from '../../../../src/main/worlds/socket-directory.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'watch-url-file-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('writes the link 0600 into a 0700 directory it creates, next to where the socket goes', () => {
  const env = { XDG_RUNTIME_DIR: dir };
  const file = writeWatchUrlFile('http://127.0.0.1:1/?token=t', env, 4242);
  expect(file).toBe(join(dir, 'agent-pty', 'watch-4242.url'));
  expect(readFileSync(file, 'utf8')).toBe('http://127.0.0.1:1/?token=t\n');
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(statSync(join(dir, 'agent-pty')).mode & 0o777).toBe(0o700);
  // The very directory the daemon's socket check accepts.
  expect(checkSocketDirectory(join(dir, 'agent-pty', 'engine.sock'))).toBe('ok');
});

it('refuses a directory another user could enter, and a symlink, exactly as the socket check does', () => {
  const open = join(dir, 'agent-pty');
  mkdirSync(open);
  chmodSync(open, 0o755);
  expect(() => writeWatchUrlFile('u', { XDG_RUNTIME_DIR: dir }, 1)).toThrow(
    expect.objectContaining({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('has mode 0755, not 0700'),
    }),
  );
  expect(() => checkSocketDirectory(join(open, 'engine.sock'))).toThrow(/has mode 0755, not 0700/);
  const other = mkdtempSync(join(tmpdir(), 'watch-url-file-link-'));
  try {
    const linked = join(dir, 'linked');
    mkdirSync(linked);
    symlinkSync(other, join(linked, 'agent-pty'));
    expect(() => writeWatchUrlFile('u', { XDG_RUNTIME_DIR: linked }, 1)).toThrow(
      /refusing the watch page link's directory .* it is a symbolic link; another user may have created it to read the link/,
    );
  } finally {
    rmSync(other, { recursive: true, force: true });
  }
});
