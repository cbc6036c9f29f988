import { describe, expect, it } from 'vitest';
import {
  MAX_MARKER_CHARS,
  PrivateMarkerFilter,
} from '../../../../src/worker/readiness/private-marker-filter.js';

const NONCE = 'a1b2c3';
const marker = (nonce = NONCE) => `\x1b]133;D;0;${nonce};4242;7;/home/me\x07`;

/** Everything `chunks` become through one filter, and whether it holds something at the end. */
function filtered(chunks: string[]): { text: string; holding: boolean } {
  const filter = new PrivateMarkerFilter(NONCE);
  const text = chunks.map((chunk) => filter.filter(chunk)).join('');
  return { text, holding: filter.holding };
}

describe('PrivateMarkerFilter', () => {
  it('removes the owned marker and keeps the prompt and everything else', () => {
    expect(filtered([`out\r\n${marker()}$ `]).text).toBe('out\r\n$ ');
    expect(filtered([`${marker()}a${marker()}b`]).text).toBe('ab');
    // ST ends it as well as BEL.
    expect(filtered([`x${marker().slice(0, -1)}\x1b\\y`]).text).toBe('xy');
  });

  it('removes it at every split point across two reads', () => {
    const stream = `before ${marker()}$ after`;
    for (let at = 0; at <= stream.length; at++) {
      const result = filtered([stream.slice(0, at), stream.slice(at)]);
      expect(result.text, `split at ${at}`).toBe('before $ after');
      expect(result.holding).toBe(false);
    }
  });

  it("keeps another session's marker, other OSCs and a lone ESC that turns out to be something else", () => {
    const foreign = marker('ffffff');
    expect(filtered([`${foreign}$ `]).text).toBe(`${foreign}$ `);
    expect(filtered(['\x1b]0;title\x07text']).text).toBe('\x1b]0;title\x07text');
    expect(filtered(['red \x1b', '[31mx']).text).toBe('red \x1b[31mx');
    expect(filtered(['\x1b]13', '4;x\x07']).text).toBe('\x1b]134;x\x07');
  });

  it('holds an unterminated introducer only up to its bound, then passes it on', () => {
    const open = `\x1b]133;D;${'z'.repeat(MAX_MARKER_CHARS)}`;
    const result = filtered([open.slice(0, 100), open.slice(100), 'tail']);
    expect(result.text).toBe(`${open}tail`);
    expect(result.holding).toBe(false);
    const short = filtered(['ok \x1b]133;D;0;']);
    expect(short).toEqual({ text: 'ok ', holding: true });
  });
});
