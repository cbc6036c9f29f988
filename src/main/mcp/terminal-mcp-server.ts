/**
 * The six terminal tools as an MCP server (SPEC §7), on the SDK's low-level `Server`: `tools/list`
 * publishes each tool's JSON schemas, description and hints; `tools/call` answers with the rendered
 * text as content and the JSON result as `structuredContent`, or with an `isError` result whose text
 * says what to do instead. Transport-agnostic: `server.ts` connects it to stdio.
 */
import { readFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { PtyService } from '../harness/pty-service.js';
import { runTerminalTool, TERMINAL_TOOLS } from '../tools/catalog.js';
import { TERMINAL_TOOLS_GUIDANCE } from '../tools/guidance.js';

/** Server name announced to clients. */
export const MCP_SERVER_NAME = 'agent-pty';

/** Options of {@link createTerminalMcpServer}. */
export interface TerminalMcpServerOptions {
  /** Where sessions live. */
  pty: PtyService;
  /** The connection's owner id: its sessions are invisible to other owners. */
  owner: string;
  /** Cap of a result's text (default 64 KiB). */
  maxResultBytes?: number;
  /** Appended to the instructions (e.g. the sandbox mode this server enforces). */
  instructionsSuffix?: string;
}

/** Creates an unconnected MCP server serving the terminal tools for one owner. */
export function createTerminalMcpServer(options: TerminalMcpServerOptions): Server {
  const server = new Server(
    { name: MCP_SERVER_NAME, title: 'Terminal sessions', version: packageVersion() },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: `${TERMINAL_TOOLS_GUIDANCE}${options.instructionsSuffix ?? ''}`,
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TERMINAL_TOOLS.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema as { type: 'object' },
      outputSchema: tool.outputSchema as { type: 'object' },
      annotations: { title: tool.title, ...tool.hints },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const outcome = await runTerminalTool(request.params.name, request.params.arguments ?? {}, {
      pty: options.pty,
      owner: options.owner,
      // Aborted when the client cancels this request or the connection closes: a running send is
      // then interrupted (a real SIGINT) instead of holding the session until its timeout.
      signal: extra.signal,
      ...(options.maxResultBytes === undefined ? {} : { maxResultBytes: options.maxResultBytes }),
    });
    const content = [{ type: 'text' as const, text: outcome.text }];
    return outcome.isError ? { content, isError: true } : { content, structuredContent: outcome.json };
  });

  return server;
}

/** The package version, for the server's `initialize` answer. */
function packageVersion(): string {
  // src/main/mcp and dist/main/mcp are both three levels below the package root.
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return pkg.version ?? '0.0.0';
}
