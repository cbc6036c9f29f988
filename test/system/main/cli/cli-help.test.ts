// `--help` and `--version` of every command of the built `agent-pty` bin (needs a build): they print
// and exit 0 without starting anything; a wrong argument exits 1 and says how to ask for help.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseCliArgs } from '../../../../dist/main/cli/args.js';

const BIN = new URL('../../../../dist/main/cli/bin.js', import.meta.url).pathname;
const VERSION = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8'))
  .version as string;

/** Runs the bin with stdin closed; resolves with its exit code and output. */
async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args], {
      timeout: 20_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout: string; stderr: string };
    return { code: failed.code ?? -1, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('agent-pty --help and --version', () => {
  it.each([
    [['--help'], /^agent-pty — persistent, interactive terminal sessions[\s\S]*agent-pty mcp \[OPTIONS\]/],
    [['-h'], /^agent-pty — /],
    [['help'], /^agent-pty — /],
    [['--sandbox', 'read-only', '--help'], /^agent-pty — /],
    [['mcp', '--help'], /^agent-pty mcp \[--sandbox MODE\][\s\S]*--max-wait MS[\s\S]*--world NAME=COMMAND/],
    [['mcp', '--workspace', '/tmp', '-h'], /^agent-pty mcp /],
    [['help', 'mcp'], /^agent-pty mcp /],
    [['serve', '--help'], /^agent-pty serve --stdio\n\nMakes this process an execution world/],
    [['demo', '--help'], /^agent-pty demo\n\nRuns a short scripted tour/],
  ])('%j prints its help and exits 0', async (args, help) => {
    const { code, stdout, stderr } = await run(args);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(help);
  });

  it.each([[['--version']], [['-v']], [['mcp', '--version']], [['serve', '--version']], [['demo', '-v']]])(
    '%j prints the version and exits 0',
    async (args) => {
      expect(await run(args)).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
    },
  );

  it('a wrong argument exits 1 and says how to ask for help', async () => {
    const mcp = await run(['mcp', '--port', '1']);
    expect(mcp.code).toBe(1);
    expect(mcp.stderr).toMatch(/unknown argument '--port' \(usage: agent-pty mcp \[--sandbox MODE\]/);
    const top = await run(['--frobnicate']);
    expect(top.code).toBe(1);
    expect(top.stderr).toMatch(/unknown argument '--frobnicate' \(try --help\)/);
    expect((await run(['serve'])).stderr).toMatch(
      /usage: agent-pty serve --stdio \(see agent-pty serve --help\)/,
    );
  });
});

describe('agent-pty command line', () => {
  it('starts the interactive CLI in the MCP default mode (workspace-write of the current directory)', () => {
    expect(parseCliArgs([], '/w')).toEqual({
      command: 'interactive',
      sandbox: 'workspace-write',
      workspace: '/w',
    });
    expect(parseCliArgs(['--sandbox', 'read-only', '--workspace', 'sub'], '/w')).toEqual({
      command: 'interactive',
      sandbox: 'read-only',
      workspace: '/w/sub',
    });
    expect(parseCliArgs(['--sandbox=danger-full-access', '--workspace=/x'], '/w')).toMatchObject({
      sandbox: 'danger-full-access',
      workspace: '/x',
    });
    expect(() => parseCliArgs(['--sandbox', 'open'])).toThrow(/--sandbox must be one of read-only, /);
  });

  it('hands every argument but the subcommand to mcp; a flag value is never taken for a command', () => {
    expect(parseCliArgs(['mcp', '--workspace', 'serve', '--max-wait=900'])).toEqual({
      command: 'mcp',
      mcpArgs: ['--workspace', 'serve', '--max-wait=900'],
    });
    expect(parseCliArgs(['--workspace', 'demo'], '/w')).toMatchObject({
      command: 'interactive',
      workspace: '/w/demo',
    });
    expect(() => parseCliArgs(['help', 'frob'])).toThrow(
      /no command 'frob'; commands: mcp, serve, daemon, demo/,
    );
  });

  it('knows every value flag of mcp: a value written before the command is not taken for it', () => {
    for (const flag of ['--sandbox', '--workspace', '--shell', '--max-wait', '--max-sessions', '--world']) {
      expect(parseCliArgs([flag, '4', 'mcp'])).toEqual({ command: 'mcp', mcpArgs: [flag, '4'] });
    }
  });
});
