// Where the daemon's socket lives (SPEC §12): $XDG_RUNTIME_DIR/agent-pty, else /tmp/agent-pty-$UID.
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkSocketDirectory,
  defaultSocketPath,
  prepareSocketDirectory,
  SOCKET_PATH_MAX_BYTES,
} from '../../../../src/main/worlds/socket-directory.js';
import { isTerminalError } from '../../../../src/shared/errors.js';

describe('the default socket', () => {
  it('is under $XDG_RUNTIME_DIR when it is set to an absolute path', () => {
    expect(defaultSocketPath({ XDG_RUNTIME_DIR: '/run/user/1000' }, 1000)).toBe(
      '/run/user/1000/agent-pty/engine.sock',
    );
  });

  it('is /tmp/agent-pty-$UID otherwise (a relative XDG_RUNTIME_DIR is ignored)', () => {
    expect(defaultSocketPath({}, 1000)).toBe('/tmp/agent-pty-1000/engine.sock');
    expect(defaultSocketPath({ XDG_RUNTIME_DIR: 'relative' }, 0)).toBe('/tmp/agent-pty-0/engine.sock');
  });
});

describe('a socket path longer than sun_path holds', () => {
  const within = `/tmp/${'a'.repeat(SOCKET_PATH_MAX_BYTES - '/tmp/'.length - '/engine.sock'.length)}/engine.sock`;
  const beyond = `/tmp/${'a'.repeat(SOCKET_PATH_MAX_BYTES - '/tmp/'.length - '/engine.sock'.length + 1)}/engine.sock`;

  it('is refused with INVALID_CONFIG naming the limit on both ends, before any directory is made', () => {
    expect(Buffer.byteLength(within)).toBe(SOCKET_PATH_MAX_BYTES);
    for (const check of [checkSocketDirectory, prepareSocketDirectory]) {
      let refusal: unknown;
      try {
        check(beyond);
      } catch (error) {
        refusal = error;
      }
      expect(isTerminalError(refusal, 'INVALID_CONFIG')).toBe(true);
      expect(String((refusal as Error).message)).toContain(`at most ${SOCKET_PATH_MAX_BYTES}`);
    }
    expect(existsSync(dirname(beyond))).toBe(false);
    // A path exactly at the limit passes the length check (its directory does not exist: 'missing').
    expect(checkSocketDirectory(within)).toBe('missing');
  });
});
