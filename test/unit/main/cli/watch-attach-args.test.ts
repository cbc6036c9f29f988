/**
 * The command lines of `agent-pty watch [--port N] [--socket PATH]` and `agent-pty attach NAME
 * [--force]` (SPEC §13): what they take, and a clear refusal of anything else.
 */
import { expect, it } from 'vitest';
import { parseCliArgs } from '../../../../src/main/cli/args.js';
import { parseAttachOptions } from '../../../../src/main/cli/attach-command.js';
import { parseWatchOptions } from '../../../../src/main/cli/watch-command.js';

it('routes watch and attach to their own parsers, their values never taken for a command', () => {
  expect(parseCliArgs(['watch', '--port', '8080'])).toEqual({
    command: 'watch',
    watchArgs: ['--port', '8080'],
  });
  expect(parseCliArgs(['--socket', 'mcp', 'watch'])).toEqual({
    command: 'watch',
    watchArgs: ['--socket', 'mcp'],
  });
  expect(parseCliArgs(['attach', 'build'])).toEqual({ command: 'attach', attachArgs: ['build'] });
  expect(parseCliArgs(['watch', '--help'])).toEqual({ command: 'help', topic: 'watch' });
});

it('takes a port, a socket (default: the daemon’s in the runtime directory), and nothing else', () => {
  expect(parseWatchOptions([], { XDG_RUNTIME_DIR: '/run/user/7' })).toEqual({
    port: undefined,
    socket: '/run/user/7/agent-pty/engine.sock',
  });
  expect(parseWatchOptions(['--port=8080', '--socket', '/tmp/s.sock'], {})).toEqual({
    port: 8080,
    socket: '/tmp/s.sock',
  });
  expect(() => parseWatchOptions(['--port', '0'], {})).toThrow(/--port must be 1-65535/);
  expect(() => parseWatchOptions(['--token', 'x'], {})).toThrow(/unknown argument '--token'/);
});

it('attaches to one named session, optionally by force', () => {
  expect(parseAttachOptions(['build'])).toEqual({ name: 'build', force: false });
  expect(parseAttachOptions(['--force', 'build'])).toEqual({ name: 'build', force: true });
  expect(() => parseAttachOptions([])).toThrow(/usage: agent-pty attach NAME/);
  expect(() => parseAttachOptions(['a', 'b'])).toThrow(/usage/);
  expect(() => parseAttachOptions(['--url', 'x'])).toThrow(/unknown argument '--url'/);
});
