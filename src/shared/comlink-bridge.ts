/**
 * Comlink glue used by both sides of the control plane: a Node `MessagePort` endpoint, and a `throw`
 * transfer handler that keeps the `code`, `cause` and cleanup error of thrown errors (Comlink's own
 * handler keeps only name, message and stack, so every coded error would arrive as a plain Error).
 */
import type { MessagePort } from 'node:worker_threads';
import * as Comlink from 'comlink';
import { TerminalBackendCleanupError, TerminalError, type TerminalErrorCode } from './errors.js';

/** Adapts a worker_threads MessagePort to Comlink's endpoint shape (`on`/`off` instead of DOM events). */
export function portEndpoint(port: MessagePort): Comlink.Endpoint {
  type Handler = ((event: { data: unknown }) => void) | { handleEvent(event: { data: unknown }): void };
  const wrapped = new WeakMap<object, (data: unknown) => void>();
  const endpoint = {
    postMessage: (message: unknown, transfer?: unknown[]) => port.postMessage(message, transfer as never),
    addEventListener: (_type: string, handler: Handler) => {
      const listener = (data: unknown) => {
        if (typeof handler === 'function') handler({ data });
        else handler.handleEvent({ data });
      };
      wrapped.set(handler, listener);
      port.on('message', listener);
    },
    removeEventListener: (_type: string, handler: Handler) => {
      const listener = wrapped.get(handler);
      if (listener === undefined) return;
      port.off('message', listener);
      wrapped.delete(handler);
    },
    start: () => port.start(),
  };
  return endpoint as unknown as Comlink.Endpoint;
}

/** Plain-data form of an error, safe for structured clone. */
interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  code?: string;
  cause?: SerializedError | { value: unknown };
  cleanupError?: SerializedError | { value: unknown };
}

/** Depth bound for cause chains, so a cyclic `cause` cannot recurse forever. */
const MAX_CAUSE_DEPTH = 4;

function serializeError(error: unknown, depth = 0): SerializedError | { value: unknown } {
  if (!(error instanceof Error)) {
    try {
      structuredClone(error);
      return { value: error };
    } catch {
      return { value: String(error) };
    }
  }
  const out: SerializedError = { name: error.name, message: error.message };
  if (error.stack !== undefined) out.stack = error.stack;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') out.code = code;
  if (depth < MAX_CAUSE_DEPTH && error.cause !== undefined)
    out.cause = serializeError(error.cause, depth + 1);
  if (error instanceof TerminalBackendCleanupError && depth < MAX_CAUSE_DEPTH) {
    out.cleanupError = serializeError(error.cleanupError, depth + 1);
  }
  return out;
}

function deserializeError(data: SerializedError | { value: unknown }): unknown {
  if ('value' in data) return data.value;
  const cause = data.cause === undefined ? undefined : deserializeError(data.cause);
  let error: Error;
  if (data.name === 'TerminalBackendCleanupError') {
    error = new TerminalBackendCleanupError(
      data.message,
      cause,
      data.cleanupError === undefined ? undefined : deserializeError(data.cleanupError),
    );
  } else if (data.code !== undefined && data.name === 'TerminalError') {
    error = new TerminalError(data.code as TerminalErrorCode, data.message, { cause });
  } else {
    error = new Error(data.message, cause === undefined ? undefined : { cause });
    error.name = data.name;
    if (data.code !== undefined) (error as { code?: string }).code = data.code;
  }
  if (data.stack !== undefined) error.stack = data.stack;
  return error;
}

let installed = false;

/** Replaces Comlink's `throw` handler with one that preserves codes and causes. Idempotent; call on both sides. */
export function installErrorTransfer(): void {
  if (installed) return;
  const original = Comlink.transferHandlers.get('throw');
  if (original === undefined) throw new Error('comlink has no throw transfer handler');
  Comlink.transferHandlers.set('throw', {
    canHandle: original.canHandle,
    serialize: (thrown: unknown) => {
      const { value } = thrown as { value: unknown };
      return [serializeError(value), []];
    },
    deserialize: (data: unknown) => {
      throw deserializeError(data as SerializedError);
    },
  });
  installed = true;
}
