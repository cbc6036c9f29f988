// The command lines of SPEC §12: `agent-pty daemon [--socket PATH] [--config FILE] [--status | --stop]`
// and `agent-pty mcp --daemon [--socket PATH]`.
import { describe, expect, it } from 'vitest';
import { parseCliArgs } from '../../../../src/main/cli/args.js';
import { parseMcpOptions } from '../../../../src/main/mcp/options.js';

describe('agent-pty daemon', () => {
  it('runs in the foreground by default; --status and --stop ask the running one; paths resolve against the cwd', () => {
    expect(parseCliArgs(['daemon'], '/w')).toEqual({ command: 'daemon', action: 'run' });
    expect(parseCliArgs(['daemon', '--socket', 's/engine.sock', '--config=d.json'], '/w')).toEqual({
      command: 'daemon',
      action: 'run',
      socket: '/w/s/engine.sock',
      config: '/w/d.json',
    });
    expect(parseCliArgs(['daemon', '--status'], '/w')).toMatchObject({ action: 'status' });
    expect(parseCliArgs(['daemon', '--stop', '--socket', '/s'], '/w')).toMatchObject({
      action: 'stop',
      socket: '/s',
    });
  });

  it('refuses both actions at once, an unknown flag and a flag without its value', () => {
    expect(() => parseCliArgs(['daemon', '--status', '--stop'])).toThrow(/one of --status and --stop/);
    expect(() => parseCliArgs(['daemon', '--frob'])).toThrow(/unknown argument '--frob'/);
    expect(() => parseCliArgs(['daemon', '--socket'])).toThrow(/--socket needs a value/);
  });
});

describe('agent-pty mcp --daemon', () => {
  it('takes --daemon with an optional --socket, and refuses --socket alone', () => {
    expect(parseMcpOptions(['--daemon'], '/w/project', '/home/u').daemon).toEqual({});
    expect(parseMcpOptions(['--daemon', '--socket', 'run/e.sock'], '/w/project', '/home/u').daemon).toEqual({
      socket: '/w/project/run/e.sock',
    });
    expect(parseMcpOptions([], '/w/project', '/home/u').daemon).toBeUndefined();
    expect(() => parseMcpOptions(['--socket', '/s'], '/w/project', '/home/u')).toThrow(
      /--socket needs --daemon/,
    );
  });
});
