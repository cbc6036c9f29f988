#!/usr/bin/env node
/**
 * The `agent-pty` command: interactive session, MCP server, execution world, or scripted demo. Each
 * command's code is loaded only when it runs, so `--help` and `--version` answer at once, without
 * loading the engine.
 */
import { readFileSync } from 'node:fs';
import { DisposableStore } from '../../shared/lifecycle.js';
import { parseCliArgs } from './args.js';
import { COMMAND_HELP } from './usage.js';

async function main(argv: string[]): Promise<number> {
  const args = parseCliArgs(argv);
  switch (args.command) {
    case 'help':
      process.stdout.write(`${COMMAND_HELP[args.topic]}\n`);
      return 0;
    case 'version': {
      const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
      process.stdout.write(`${pkg.version}\n`);
      return 0;
    }
    case 'mcp': {
      const { runMcpServer } = await import('../mcp/server.js');
      await runMcpServer(args.mcpArgs);
      return 0;
    }
    case 'daemon': {
      const { runDaemonCommand } = await import('../daemon/daemon-command.js');
      return runDaemonCommand(args);
    }
    case 'watch': {
      const { runWatch } = await import('./watch-command.js');
      return runWatch(args.watchArgs);
    }
    case 'attach': {
      const { runAttach } = await import('./attach-command.js');
      return runAttach(args.attachArgs);
    }
    case 'serve': {
      const { runServeStdio } = await import('../worlds/serve-stdio.js');
      return runServeStdio();
    }
    case 'demo': {
      const [{ createPtyEngine }, { runDemo }] = await Promise.all([
        import('../engine/engine.js'),
        import('./demo.js'),
      ]);
      const engine = await createPtyEngine();
      try {
        return (await runDemo(engine, (text) => process.stdout.write(text))) ? 0 : 1;
      } finally {
        await engine.close();
      }
    }
    case 'interactive': {
      const { runInteractive } = await import('./interactive.js');
      if (args.notice !== undefined) process.stderr.write(`agent-pty: ${args.notice}\n`);
      // A narrowed root stays implicit (the policy takes the cwd), so the sandbox keeps $HOME private.
      return runInteractive({
        mode: args.sandbox,
        ...(args.notice === undefined ? { workspaceRoot: args.workspace } : {}),
      });
    }
  }
}

/**
 * How long the process may wait, once its work is done, for stdout to take what is still buffered. A
 * client that stopped reading never takes it, and a pending write would keep the process alive
 * forever (SPEC §4.8: a server whose stdin closed exits within 5 s, even when its stdout is blocked).
 */
const FINAL_FLUSH_MS = 2_000;

/** Ends the process with `code` once stdout is flushed, or after {@link FINAL_FLUSH_MS} regardless. */
function exitWith(code: number): void {
  process.exitCode = code;
  // Unreferenced: a process whose writes are all done exits on its own, at once. The store is never
  // disposed: the timer's lifetime is the process's, which it ends.
  new DisposableStore().timeout('cli final flush bound', FINAL_FLUSH_MS, () => process.exit(code), {
    unref: true,
  });
}

main(process.argv.slice(2)).then(exitWith, (error: unknown) => {
  const code = (error as { code?: string }).code;
  process.stderr.write(
    `agent-pty: ${code ? `[${code}] ` : ''}${(error as Error).message ?? String(error)}\n`,
  );
  exitWith(1);
});
