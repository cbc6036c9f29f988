/** Zod schema pieces shared by several tools: the session id argument and the status/snapshot shapes. */
import { z } from 'zod';
import { DIALECTS } from '../../shared/dialects.js';
import { SANDBOX_MODES, type SessionStatus } from '../../shared/types.js';

/** The `sessionId` argument. */
export const sessionIdArgument = z
  .string({ error: 'must be a session id string such as "shell-1" (see terminal_list)' })
  .min(1, 'must not be empty; pass the sessionId terminal_open returned (see terminal_list)')
  .describe('Id of the session, as returned by terminal_open (e.g. "shell-1").');

/**
 * `{ kind: 'running' } | { kind: 'exited', exitCode?, signal? }`. An absent value is an omitted field,
 * not `null`: a nullable field becomes a JSON-schema type array (`["integer", "null"]`), which not
 * every client accepts (MCP Inspector's `--strict` flags it as not portable).
 */
export const sessionStatusOutput = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('running') }),
  z.strictObject({
    kind: z.literal('exited'),
    exitCode: z.number().int().optional(),
    signal: z.string().optional(),
  }),
]);

/** What contains a session's processes (SPEC §4.6); reported beside `status`, not inside it. */
export const containmentOutput = z.enum(['pid-namespace+cgroup', 'cgroup', 'pid-namespace', 'process-tree']);

/** A limit nothing enforces here, with the reason (SPEC §4.8). */
const unenforcedOutput = z.strictObject({ enforcedBy: z.literal('none'), reason: z.string() });
const enforcerOutput = z.enum(['cgroup-v2', 'cgroup-v1']);

/** A session's limits and what enforces each (`status().limits`, SPEC §4.8). */
export const limitsOutput = z.strictObject({
  memory: z.union([
    z.strictObject({ bytes: z.number().int(), engineBytes: z.number().int(), enforcedBy: enforcerOutput }),
    unenforcedOutput,
  ]),
  pids: z.union([z.strictObject({ max: z.number().int(), enforcedBy: enforcerOutput }), unenforcedOutput]),
  cpu: z.union([
    z.strictObject({ weight: z.literal('equal'), enforcedBy: enforcerOutput }),
    unenforcedOutput,
  ]),
});

/** Limit events of a session since its previous result (SPEC §4.8). */
export const limitEventsOutput = z.strictObject({
  oomKills: z.number().int(),
  pidsRefused: z.number().int(),
});

/** A session status as tool results carry it: `{ kind, exitCode?, signal? }` without the containment and limits. */
export function statusOutput(status: SessionStatus): z.infer<typeof sessionStatusOutput> {
  if (status.kind === 'running') return { kind: 'running' };
  return {
    kind: 'exited',
    ...(status.exitCode === null ? {} : { exitCode: status.exitCode }),
    ...(status.signal === null ? {} : { signal: status.signal }),
  };
}

/**
 * The `hint` of a JSON result: the same explanation the text carries (what the result does not prove,
 * how to keep waiting, how to page back, how to drive a screen), for clients that show a model only
 * the JSON. Absent when the text explains nothing.
 */
export const hintOutput = z.string().optional();

/** The shell dialect a session runs (SPEC §8). */
export const shellOutput = z.enum(DIALECTS);

/** One session as `terminal_list` reports it. */
export const sessionSnapshotOutput = z.strictObject({
  sessionId: z.string(),
  name: z.string().optional(),
  type: z.string(),
  shell: shellOutput,
  world: z.string().optional(),
  pid: z.number().int(),
  status: sessionStatusOutput,
  containment: containmentOutput,
  sandbox: z.strictObject({ mode: z.enum(SANDBOX_MODES), workspaceRoot: z.string() }).optional(),
  closing: z.boolean(),
  attached: z.boolean().optional(),
  elsewhere: z.boolean().optional(),
});
