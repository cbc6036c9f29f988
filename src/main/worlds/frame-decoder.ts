/**
 * Splits a byte stream into the protocol's frames: newline-delimited JSON objects of at most
 * `maxFrameBytes`. Bytes are kept only up to the next newline, so a frame never costs more than its
 * bound however the stream is chunked.
 */
import { TerminalError } from '../../shared/errors.js';

/** Decodes frames from chunks of a stream. */
export class FrameDecoder {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxFrameBytes: number) {}

  /**
   * Feeds a chunk; returns the complete frames it finished, parsed. Throws `TerminalError`
   * (`PROTOCOL_MISMATCH`) when a frame is not a JSON object or outgrows the bound: the stream is not
   * speaking this protocol, and nothing after it can be trusted.
   */
  push(chunk: Buffer): unknown[] {
    const frames: unknown[] = [];
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      const line =
        this.pending.length === 0
          ? chunk.subarray(start, newline)
          : Buffer.concat([...this.pending, chunk.subarray(start, newline)]);
      this.pending = [];
      this.pendingBytes = 0;
      this.assertWithinBound(line.length);
      frames.push(parseFrame(line));
      start = newline + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.assertWithinBound(this.pendingBytes + rest.length);
      this.pending.push(rest);
      this.pendingBytes += rest.length;
    }
    return frames;
  }

  private assertWithinBound(bytes: number): void {
    if (bytes > this.maxFrameBytes) {
      throw new TerminalError(
        'PROTOCOL_MISMATCH',
        `a frame exceeded ${this.maxFrameBytes} bytes: the stream is not the agent-pty engine protocol`,
      );
    }
  }
}

/** One frame's JSON object. */
function parseFrame(line: Buffer): unknown {
  const text = line.toString('utf8');
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    frame = undefined;
  }
  if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) {
    throw new TerminalError(
      'PROTOCOL_MISMATCH',
      `not an agent-pty engine protocol frame: ${JSON.stringify(text.slice(0, 120))}`,
    );
  }
  return frame;
}
