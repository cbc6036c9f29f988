// The versioned handshake (SPEC §12): ranges, the highest common version, version 1's plain number,
// and a refusal that names both ranges only when they do not overlap.
import { describe, expect, it } from 'vitest';
import { answerHello } from '../../../../src/main/worlds/hello.js';
import {
  commonProtocol,
  protocolMismatch,
  protocolRangeOf,
  WORLD_PROTOCOL,
} from '../../../../src/shared/world-protocol.js';

describe('protocol ranges', () => {
  it('picks the highest version both ranges hold, none when they do not overlap', () => {
    expect(commonProtocol({ min: 1, max: 2 }, { min: 2, max: 5 })).toBe(2);
    expect(commonProtocol({ min: 1, max: 3 }, { min: 1, max: 2 })).toBe(2);
    expect(commonProtocol({ min: 1, max: 2 }, { min: 1, max: 1 })).toBe(1);
    expect(commonProtocol({ min: 1, max: 2 }, { min: 3, max: 4 })).toBeUndefined();
  });

  it('reads version 1’s plain number as a range of one, and refuses what is neither', () => {
    expect(protocolRangeOf(1)).toEqual({ min: 1, max: 1 });
    expect(protocolRangeOf({ min: 1, max: 2 })).toEqual({ min: 1, max: 2 });
    expect(protocolRangeOf({ min: 3, max: 2 })).toBeUndefined();
    expect(protocolRangeOf('2')).toBeUndefined();
    expect(protocolRangeOf(1.5)).toBeUndefined();
  });

  it('names both ranges in a refusal', () => {
    expect(protocolMismatch({ min: 1, max: 2 }, { min: 7, max: 7 }, 'client').message).toContain(
      'the server speaks versions 1 to 2, the client speaks version 7',
    );
    expect(protocolMismatch({ min: 1, max: 2 }, 'x', 'server').message).toContain(
      'an unreadable version ("x")',
    );
  });
});

describe('the server’s answer to a hello', () => {
  it('answers a range with its range and the highest common version', () => {
    expect(answerHello({ t: 'hello', protocol: { min: 1, max: 9 } })).toEqual({
      hello: { t: 'hello', protocol: WORLD_PROTOCOL },
      version: WORLD_PROTOCOL.max,
    });
  });

  it('answers version 1’s number with the number it accepts', () => {
    expect(answerHello({ t: 'hello', protocol: 1 })).toEqual({
      hello: { t: 'hello', protocol: 1 },
      version: 1,
    });
  });

  it('refuses a range that does not overlap, and anything but a hello first', () => {
    const refused = answerHello({ t: 'hello', protocol: { min: 3, max: 4 } });
    expect(refused.version).toBeUndefined();
    expect(refused.version === undefined && refused.refusal.code).toBe('PROTOCOL_MISMATCH');
    const early = answerHello({ t: 'ping' });
    expect(early.version === undefined && early.refusal.message).toContain("got a 'ping' frame");
  });
});
