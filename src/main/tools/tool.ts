/**
 * What a model-facing terminal tool is: a name, a description written for a model, an input schema
 * (zod, exported as JSON Schema) whose violations become messages saying what to pass instead, an
 * output schema for the JSON result, and a run function that returns rendered text plus that JSON.
 */
import { z } from 'zod';
import { TerminalError } from '../../shared/errors.js';
import type { PtyService } from '../harness/pty-service.js';
import type { LiveLinesBatch } from './live-lines.js';
import type { WatchPageAddress } from './render.js';

/** Default cap of a rendered result: enough for a screenful of logs, small enough for a context window. */
export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024;

/** What every tool call runs with. */
export interface TerminalToolContext {
  /** The PTY service the tools reach sessions through. */
  pty: PtyService;
  /** Whose sessions these are (e.g. one MCP connection). */
  owner: string;
  /** Cap of a result's text in UTF-8 bytes (the tail is kept). Default 64 KiB. */
  maxResultBytes?: number;
  /**
   * Cancellation of this call (e.g. the MCP request was cancelled): a running send stops waiting and
   * settles `running`; the command itself is not signalled (that is `terminal_signal`).
   */
  signal?: AbortSignal;
  /**
   * Longest a `terminal_send` waits, in ms: it travels with the send as its cap (`maxWaitMs`), and the
   * engine cuts a larger `timeoutMs`, or its own default bound, to it (keeps a call below the caller's
   * own request timeout). Default: no cap.
   */
  maxWaitMs?: number;
  /** Most terminals this caller may hold at once (an MCP connection's `--max-sessions`); default: no cap. */
  maxSessions?: number;
  /**
   * Receives the output of a running `terminal_send` as it arrives: batches of complete lines, at most
   * a few a second, each bounded (see live-lines.ts). Absent: nobody subscribes to live output.
   */
  onLiveLines?: (batch: LiveLinesBatch) => void;
  /** The watch page serving these sessions (SPEC §13), named by a hidden-input note; absent: none runs. */
  watchPage?: WatchPageAddress;
}

/** A successful call: text for the model and the JSON result. */
export interface TerminalToolResult<J> {
  /** Rendered text, within `maxResultBytes`. */
  text: string;
  /** Structured result (SPEC §7 shape). */
  json: J;
}

/** A JSON Schema object as tools publish it. */
export type JsonSchema = Record<string, unknown>;

/** Behaviour hints for clients (MCP tool annotations); hints, never security guarantees. */
export interface ToolHints {
  /** The tool changes nothing. */
  readOnlyHint?: boolean;
  /** The tool may destroy state (processes, output). */
  destructiveHint?: boolean;
  /** Repeating a call with the same arguments has no further effect. */
  idempotentHint?: boolean;
  /** The tool interacts with an open world (a shell can reach anything it is allowed to). */
  openWorldHint?: boolean;
}

/** One tool. `A` is its parsed arguments, `J` its JSON result. */
export interface TerminalTool<A = unknown, J = unknown> {
  /** Model-facing name (`terminal_*`). */
  readonly name: string;
  /** Short human title. */
  readonly title: string;
  /** Description written for a model: what it does, when to use it, what comes back. */
  readonly description: string;
  /** Behaviour hints for clients. */
  readonly hints: ToolHints;
  /** JSON Schema of the arguments. */
  readonly inputSchema: JsonSchema;
  /** JSON Schema of the JSON result. */
  readonly outputSchema: JsonSchema;
  /** Validates raw arguments; throws `TerminalError('INVALID_ARGUMENT')` saying what to pass instead. */
  parse(raw: unknown): A;
  /** Runs the call with parsed arguments. */
  run(args: A, ctx: TerminalToolContext): Promise<TerminalToolResult<J>>;
  /** Zod schema of the JSON result (tests check results against it). */
  readonly output: z.ZodType<J>;
}

/** The pieces a tool file defines. */
export interface ToolSpec<S extends z.ZodObject, O extends z.ZodType> {
  name: string;
  title: string;
  description: string;
  hints: ToolHints;
  input: S;
  output: O;
  run(args: z.output<S>, ctx: TerminalToolContext): Promise<TerminalToolResult<z.output<O>>>;
}

/** Builds a tool from its spec: JSON Schemas derived from the zod schemas, parsing with actionable errors. */
export function defineTool<S extends z.ZodObject, O extends z.ZodType>(
  spec: ToolSpec<S, O>,
): TerminalTool<z.output<S>, z.output<O>> {
  const inputSchema = toJsonSchema(spec.input, 'input');
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    hints: spec.hints,
    inputSchema,
    outputSchema: toJsonSchema(spec.output, 'output'),
    output: spec.output as unknown as z.ZodType<z.output<O>>,
    parse(raw) {
      const parsed = spec.input.safeParse(raw ?? {});
      if (parsed.success) return parsed.data;
      const problems = parsed.error.issues.map((issue) => describeIssue(issue, spec.input, raw));
      throw new TerminalError(
        'INVALID_ARGUMENT',
        `invalid arguments for ${spec.name}: ${problems.join('; ')}. Call it as ${spec.name} ${usage(inputSchema)}.`,
      );
    },
    run: spec.run,
  };
}

/** JSON Schema of a zod schema, without the `$schema` key and the safe-integer bounds zod adds. */
function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io,
    target: 'draft-7',
    override: ({ jsonSchema }) => {
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
    },
  }) as JsonSchema;
  delete json.$schema;
  return json;
}

/** One validation problem, phrased as what to do. */
function describeIssue(issue: z.core.$ZodIssue, input: z.ZodObject, raw: unknown): string {
  if (issue.code === 'unrecognized_keys') {
    const known = Object.keys(input.shape).join(', ') || '(none)';
    return `unknown argument${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')} (accepted: ${known})`;
  }
  const field = issue.path.join('.');
  if (field === '') return `arguments must be a JSON object`;
  const given = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>)[field] : undefined;
  if (given === undefined) return `"${field}" is required`;
  return `"${field}" ${issue.message}`;
}

/** `{"sessionId": string, "offset"?: integer, …}` from a JSON Schema's properties. */
function usage(schema: JsonSchema): string {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  const fields = Object.entries(properties).map(([name, property]) => {
    const type = Array.isArray(property.enum)
      ? property.enum.map((value) => JSON.stringify(value)).join('|')
      : property.type;
    return `"${name}"${required.has(name) ? '' : '?'}: ${String(type)}`;
  });
  return `{${fields.join(', ')}}`;
}
