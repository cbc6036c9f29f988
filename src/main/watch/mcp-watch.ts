/**
 * `agent-pty mcp --watch` (SPEC §13): the watch page over the server's own engine. Its stdout is the
 * MCP channel, so the link with the token goes to stderr and to `watch-<pid>.url` (0600); the tools
 * name the page by its address without the token.
 */
import type { PtyEngine } from '../../shared/types.js';
import type { WatchPageAddress } from '../tools/render.js';
import { startWatchServer } from './watch-server.js';
import { removeWatchUrlFile, writeWatchUrlFile } from './watch-url-file.js';

/** A running `--watch` page. */
export interface McpWatch {
  /** How the tools name it. */
  address: WatchPageAddress;
  /** Stops the page and removes its URL file. */
  close(): Promise<void>;
}

/** Starts the page for `engine`'s sessions and publishes its link (stderr and the URL file). */
export async function startMcpWatch(engine: PtyEngine): Promise<McpWatch> {
  const server = await startWatchServer({ engine });
  let urlFile: string;
  try {
    urlFile = writeWatchUrlFile(server.url);
  } catch (error) {
    await server.close();
    throw error;
  }
  process.stderr.write(`agent-pty mcp: watch page: ${server.url}\n(also in ${urlFile})\n`);
  return {
    address: { url: server.pageUrl, urlFile },
    close: async () => {
      removeWatchUrlFile(urlFile);
      await server.close();
    },
  };
}
