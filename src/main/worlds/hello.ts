/**
 * The server's side of the versioned handshake (SPEC §10, §12), shared by `serve --stdio` and the
 * daemon: the client speaks first; the server answers with its own hello in the client's form (a
 * version-1 client sent a plain number and accepts only the number it sent) and picks the highest
 * version both speak, or refuses naming both ranges when they do not overlap.
 */
import { TerminalError } from '../../shared/errors.js';
import {
  type ClientFrame,
  commonProtocol,
  protocolMismatch,
  protocolRangeOf,
  type ServerFrame,
  WORLD_PROTOCOL,
} from '../../shared/world-protocol.js';

/** The answer to a client's first frame: the hello to send, then the version or why it was refused. */
export type HelloAnswer =
  | { hello: ServerFrame & { t: 'hello' }; version: number }
  | { hello: ServerFrame & { t: 'hello' }; version: undefined; refusal: TerminalError };

/** Answers the client's first frame. */
export function answerHello(frame: ClientFrame): HelloAnswer {
  const ownHello = { t: 'hello', protocol: WORLD_PROTOCOL } as const;
  if (frame.t !== 'hello') {
    return {
      hello: ownHello,
      version: undefined,
      refusal: new TerminalError(
        'PROTOCOL_MISMATCH',
        `expected the client's hello first, got a '${frame.t}' frame`,
      ),
    };
  }
  const theirs = protocolRangeOf(frame.protocol);
  const version = theirs === undefined ? undefined : commonProtocol(WORLD_PROTOCOL, theirs);
  if (version === undefined) {
    return {
      hello: ownHello,
      version: undefined,
      refusal: protocolMismatch(WORLD_PROTOCOL, frame.protocol, 'client'),
    };
  }
  return {
    hello: typeof frame.protocol === 'number' ? { t: 'hello', protocol: version } : ownHello,
    version,
  };
}
