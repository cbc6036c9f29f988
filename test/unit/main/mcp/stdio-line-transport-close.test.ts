/**
 * The MCP stdio transport's close releases what it armed (issue 24): the input's listeners and every
 * wait for the output to drain, so a closed transport keeps nothing on the streams it was given and
 * a send that waited for a client which stopped reading does not wait forever.
 */
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { StdioLineTransport } from '../../../../src/main/mcp/stdio-line-transport.js';

/** A client that never reads: every write stays pending, so the output never drains. */
function neverDraining(): Writable {
  return new Writable({ highWaterMark: 16, write: (_chunk, _encoding, _neverCalled) => undefined });
}

describe('StdioLineTransport.close', () => {
  it('releases the input listeners and the drain waits; a send waiting for a drain settles', async () => {
    const input = new PassThrough();
    const output = neverDraining();
    const transport = new StdioLineTransport(input, output, { maxUnsentBytes: 8 });
    await transport.start();
    expect(input.listenerCount('data')).toBe(1);
    let sent = false;
    const sending = transport
      .send({ jsonrpc: '2.0', id: 1, result: { text: 'more than the output takes' } })
      .then(() => {
        sent = true;
      });
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toBe(false); // the client has not read it
    expect(output.listenerCount('drain')).toBe(2); // the send's wait, and the unblocking of requests
    await transport.close();
    await sending;
    expect(output.listenerCount('drain')).toBe(0);
    expect(input.listenerCount('data')).toBe(0);
    expect(input.listenerCount('error')).toBe(0);
  });
});
