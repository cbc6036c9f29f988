// The id of a skipped oversized line is found only where it is the request's own: a top-level member
// before the first large value, or the top-level object's last member — never an "id" in the params.
import { describe, expect, it } from 'vitest';
import { findRequestId } from '../../../../src/main/mcp/request-id-scan.js';

/** The cut-off middle of a skipped line: what neither end search may look into. */
const CUT = 'xxxx';

describe('findRequestId', () => {
  it('finds a leading id (number or string) ahead of the params', () => {
    expect(findRequestId(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"a":"${CUT}`, '')).toBe(7);
    expect(findRequestId(`{ "id" : "r-\\"1" , "params":{"text":"${CUT}`, '')).toBe('r-"1');
  });

  it('finds a trailing id as the last top-level member', () => {
    expect(
      findRequestId(`{"method":"x","params":{"text":"${CUT}`, `${CUT}"}},"jsonrpc":"2.0","id":42}`),
    ).toBe(42);
    expect(findRequestId('{"params":{"t":"', `${CUT}"}},"id":"abc" }\r`)).toBe('abc');
  });

  it('ignores an id nested in the params, at either end', () => {
    const head = `{"method":"x","params":{"id":5,"text":"${CUT}`;
    expect(findRequestId(head, `${CUT}","id":6}}`)).toBeUndefined();
    expect(findRequestId(head, `${CUT}",{"id":6}]}`)).toBeUndefined();
  });

  it('ignores an "id" written inside a string value', () => {
    expect(findRequestId(`{"method":"x","params":{"text":"${CUT}`, `${CUT},\\"id\\":9}"}}`)).toBeUndefined();
  });

  it('gives up when the head is cut inside a value before the id', () => {
    expect(findRequestId(`{"params":{"text":"${CUT}`, `${CUT}"}}}`)).toBeUndefined();
    expect(findRequestId(`{"method":"tools/call","id":1.5,`, '')).toBeUndefined();
  });
});
