/**
 * The Piscina task that hosts one terminal session for its whole life (see docs/decisions/0001).
 * It exposes the session on the transferred control port with Comlink and resolves with the session's
 * outcome once the session is closed. Live output goes out on the data port.
 */
import * as Comlink from 'comlink';
import { installErrorTransfer, portEndpoint } from '../shared/comlink-bridge.js';
import { TerminalError } from '../shared/errors.js';
import type { RemoteSessionApi, SessionTaskData } from '../shared/protocol.js';
import type { SessionOutcome } from '../shared/types.js';
import { LiveOutputPublisher } from './live-output.js';
import { SessionCore } from './session.js';

installErrorTransfer();

/** Piscina entry point: one call = one session, resolving when it is closed. */
export default async function runSessionTask(data: SessionTaskData): Promise<SessionOutcome> {
  const live = new LiveOutputPublisher(data.dataPort);
  const session = new SessionCore(data.spec, live);
  const api: RemoteSessionApi = {
    launch: async () => session.launch(),
    awaitStartup: () => session.awaitStartup(),
    startSend: async (sendId, text, submit, keys) => session.startSend(sendId, text, submit, keys),
    awaitSend: (sendId) => session.awaitSend(sendId),
    readSendOutput: async (sendId) => session.readSendOutput(sendId),
    cancelSend: (sendId) => session.cancelSend(sendId),
    read: async (request) => session.read(request),
    signal: async (signal) => session.signal(signal),
    status: async () => session.status(),
    setLiveOutput: async (enabled) => session.setLiveOutput(enabled),
    close: (reason) => session.close(reason),
    crashThreadForTest: async (kind) => {
      if (data.spec.faults === undefined) {
        throw new TerminalError('INVALID_ARGUMENT', 'fault injection is not enabled on this engine');
      }
      session.crashThreadForTest(kind);
    },
  };
  Comlink.expose(api, portEndpoint(data.controlPort));
  const outcome = await session.finished;
  // Let Comlink post the reply of the close() call that finished the session before the port goes.
  await new Promise((resolve) => setImmediate(resolve));
  data.controlPort.close();
  return outcome;
}
