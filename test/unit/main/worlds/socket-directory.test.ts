// Where the daemon's socket lives (SPEC §12): $XDG_RUNTIME_DIR/agent-pty, else /tmp/agent-pty-$UID.
import { describe, expect, it } from 'vitest';
import { defaultSocketPath } from '../../../../src/main/worlds/socket-directory.js';

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
