/**
 * A session's real output pipeline (output-pipeline.ts) for unit tests: written to as the pty would,
 * each read processed at once, read back as the session reads it.
 */
import { resolveEngineConfig } from '../../../src/shared/config.js';
import { tellRowEdits } from '../../../src/worker/output/row-edit-text.js';
import { type OutputListener, OutputPipeline } from '../../../src/worker/output-pipeline.js';

export const NONCE = 'feedface';

/** An OSC 133 prompt marker of the session (`prompt`: the shell's prompt number). */
export function marker(prompt = 1, exit = 0): string {
  return `\x1b]133;D;${exit};${NONCE};4242;${prompt};/work\x07`;
}

/** What the text stream told a listener, as one string (`\n` line ends, `\r` rewrites). */
export interface Heard {
  text: string;
  markers: number;
  /** Calls the listener got, by method (the text stream's batching shows here). */
  calls: Record<string, number>;
}

export interface PipelineHarness {
  pipeline: OutputPipeline;
  /** One pty read, processed at once; `utf8`: its bytes, as a session passes them along when exact. */
  write(data: string, utf8?: Uint8Array): void;
  /** The scrollback as a reader gets it (every line). */
  text(): string;
  /** Replies offered, with the markers parsed before each. */
  replies: { data: string; markersBefore: number }[];
  heard: Heard;
  dispose(): void;
}

export function pipelineHarness(rows = 6, cols = 20, follow = false): PipelineHarness {
  const config = resolveEngineConfig({});
  const replies: { data: string; markersBefore: number }[] = [];
  const heard: Heard = { text: '', markers: 0, calls: {} };
  const called = (method: string) => {
    heard.calls[method] = (heard.calls[method] ?? 0) + 1;
  };
  const listener: OutputListener = {
    text: (s) => {
      called('text');
      heard.text += s;
    },
    newline: () => {
      called('newline');
      heard.text += '\n';
    },
    textBlock: (block) => {
      heard.text += block.replace(/\r\n/g, '\n');
    },
    rewriteLine: () => {
      called('rewriteLine');
      heard.text += '\r';
    },
    rowEdits: (data) => {
      called('rowEdits');
      tellRowEdits(listener, data);
    },
    markerArrived: () => {
      heard.markers += 1;
    },
    endOfChunk: () => undefined,
  };
  const pipeline = new OutputPipeline({
    rows,
    cols,
    config,
    nonce: NONCE,
    prompt: '$ ',
    replies: {
      offer: (data, markersBefore) => replies.push({ data, markersBefore }),
      markerParsed: () => undefined,
    },
    listener: () => (follow ? listener : undefined),
  });
  return {
    pipeline,
    write: (data, utf8) => {
      pipeline.write(data, utf8);
      pipeline.flush();
    },
    text: () => pipeline.read({ count: 1_000_000 }).text,
    replies,
    heard,
    dispose: () => pipeline.dispose(),
  };
}
