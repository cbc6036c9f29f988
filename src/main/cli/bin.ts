#!/usr/bin/env node
/** The `agent-pty` command: interactive session, scripted demo, MCP server, or execution world. */
import { readFileSync } from 'node:fs';
import { createPtyEngine } from '../engine.js';
import { runMcpServer } from '../mcp/server.js';
import { createBubblewrapSandbox } from '../sandbox/bubblewrap.js';
import { runServeStdio } from '../worlds/serve-stdio.js';
import { parseCliArgs, USAGE } from './args.js';
import { runDemo } from './demo.js';
import { runInteractive } from './interactive.js';

async function main(argv: string[]): Promise<number> {
  const args = parseCliArgs(argv);
  switch (args.command) {
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      return 0;
    case 'version': {
      const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
      process.stdout.write(`${pkg.version}\n`);
      return 0;
    }
    case 'mcp':
      await runMcpServer(args.mcpArgs);
      return 0;
    case 'serve':
      return runServeStdio();
    case 'demo': {
      const engine = await createPtyEngine();
      try {
        return (await runDemo(engine, (text) => process.stdout.write(text))) ? 0 : 1;
      } finally {
        await engine.close();
      }
    }
    case 'interactive': {
      const engine = await createPtyEngine({ sandbox: createBubblewrapSandbox() });
      try {
        const sandbox =
          args.sandbox === undefined ? undefined : { mode: args.sandbox, workspaceRoot: args.workspace };
        await runInteractive(engine, { cwd: args.workspace, ...(sandbox === undefined ? {} : { sandbox }) });
        return 0;
      } finally {
        await engine.close();
      }
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
  // Unreferenced: a process whose writes are all done exits on its own, at once.
  setTimeout(() => process.exit(code), FINAL_FLUSH_MS).unref();
}

main(process.argv.slice(2)).then(exitWith, (error: unknown) => {
  const code = (error as { code?: string }).code;
  process.stderr.write(
    `agent-pty: ${code ? `[${code}] ` : ''}${(error as Error).message ?? String(error)}\n`,
  );
  exitWith(1);
});
