/**
 * The six terminal tools as an MCP server (SPEC §7), on the SDK's low-level `Server`: `tools/list`
 * publishes each tool's JSON schemas, description and hints; `tools/call` answers with the rendered
 * text as content and the JSON result as `structuredContent`, or with an `isError` result whose text
 * says what to do instead. A cancelled call ends only its wait (the send settles `running`; nothing is
 * signalled), a call that asked for progress receives the send's output lines as
 * `notifications/progress` while it runs, and no call waits longer than `maxWaitMs`.
 * Transport-agnostic: `server.ts` connects it to stdio.
 */
import { readFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type ProgressToken,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { PtyService } from '../harness/pty-service.js';
import { runTerminalTool, TERMINAL_TOOLS } from '../tools/catalog.js';
import { TERMINAL_TOOLS_GUIDANCE } from '../tools/guidance.js';
import type { LiveLinesBatch } from '../tools/live-lines.js';
import type { WatchPageAddress } from '../tools/render.js';
import { MCP_DEFAULT_MAX_SESSIONS, MCP_DEFAULT_MAX_WAIT_MS } from './options.js';

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
  /**
   * Longest wait of one `terminal_send` call in ms; larger `timeoutMs` values (and the engine's
   * default) are clamped to it. Default {@link MCP_DEFAULT_MAX_WAIT_MS}.
   */
  maxWaitMs?: number;
  /** Most terminals the connection may hold at once (`--max-sessions`). Default {@link MCP_DEFAULT_MAX_SESSIONS}. */
  maxSessions?: number;
  /** Appended to the instructions (e.g. the sandbox mode this server enforces). */
  instructionsSuffix?: string;
  /** The watch page of `--watch` (SPEC §13), named by hidden-input notes; never its token. */
  watchPage?: WatchPageAddress;
}

/** Creates an unconnected MCP server serving the terminal tools for one owner. */
export function createTerminalMcpServer(options: TerminalMcpServerOptions): Server {
  const maxWaitMs = options.maxWaitMs ?? MCP_DEFAULT_MAX_WAIT_MS;
  const server = new Server(
    { name: MCP_SERVER_NAME, title: 'Terminal sessions', version: packageVersion() },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: serverInstructions(maxWaitMs, options.instructionsSuffix ?? ''),
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
    const progressToken = extra._meta?.progressToken;
    const outcome = await runTerminalTool(request.params.name, request.params.arguments ?? {}, {
      pty: options.pty,
      owner: options.owner,
      // Aborted when the client cancels this request (often its own request timeout) or the
      // connection closes: the send stops waiting and settles `running`, and the command goes on.
      // Interrupting it is the model's decision (terminal_signal), never a side effect of a timeout.
      signal: extra.signal,
      maxWaitMs,
      maxSessions: options.maxSessions ?? MCP_DEFAULT_MAX_SESSIONS,
      ...(options.watchPage === undefined ? {} : { watchPage: options.watchPage }),
      ...(options.maxResultBytes === undefined ? {} : { maxResultBytes: options.maxResultBytes }),
      ...(progressToken === undefined
        ? {}
        : { onLiveLines: progressSender(progressToken, extra.sendNotification) }),
    });
    const content = [{ type: 'text' as const, text: outcome.text }];
    return outcome.isError ? { content, isError: true } : { content, structuredContent: outcome.json };
  });

  return server;
}

/**
 * Longest instructions the server sends: some clients cut them after 2 048 characters (Claude Code),
 * silently, so the server keeps under 2 000 itself. The guidance comes first and is never cut.
 */
export const MAX_INSTRUCTIONS_CHARS = 2_000;

/**
 * The guidance, this server's wait bound, then the suffix (its sandbox mode, its worlds), cut with an
 * ellipsis when it would pass {@link MAX_INSTRUCTIONS_CHARS} (a very long workspace path or world list;
 * `terminal_open` and `terminal_list` name both again).
 */
function serverInstructions(maxWaitMs: number, suffix: string): string {
  const base =
    `${TERMINAL_TOOLS_GUIDANCE}\nOn this server one terminal_send call waits at most ${maxWaitMs} ms ` +
    '(a larger timeoutMs is cut to that); a longer command returns [wait: running] and keeps running.\n';
  const full = base + suffix;
  if (full.length < MAX_INSTRUCTIONS_CHARS) return full;
  let end = MAX_INSTRUCTIONS_CHARS - 2;
  // Never split a surrogate pair (an emoji in a path).
  if (/[\uD800-\uDBFF]/.test(full.charAt(end - 1))) end--;
  return `${full.slice(0, end)}…`;
}

/**
 * Sends each batch of live output lines as a `notifications/progress` for the request's token:
 * `progress` is the number of lines seen so far (it grows with every notification, as MCP requires),
 * `message` the new lines. A notification that cannot be sent is dropped; the call goes on.
 */
function progressSender(
  progressToken: ProgressToken,
  sendNotification: (notification: ServerNotification) => Promise<void>,
): (batch: LiveLinesBatch) => void {
  return (batch) => {
    void sendNotification({
      method: 'notifications/progress',
      params: { progressToken, progress: batch.linesSoFar, message: batch.text },
    }).catch((connectionGone: unknown) => {
      // The result (or the connection's end) follows anyway; a lost progress line changes nothing.
      void connectionGone;
    });
  };
}

/** The package version, for the server's `initialize` answer. */
function packageVersion(): string {
  // src/main/mcp and dist/main/mcp are both three levels below the package root.
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return pkg.version ?? '0.0.0';
}
