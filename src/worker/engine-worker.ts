/**
 * The Piscina task that hosts one terminal session for its whole life (see docs/decisions/0001).
 * It exposes the session on the transferred control port with Comlink and resolves with the session's
 * outcome once the session is closed. Live output goes out on the data port.
 */
import * as Comlink from 'comlink';
import { workerData } from 'piscina';
import { installErrorTransfer, portEndpoint } from '../shared/comlink-bridge.js';
import { TerminalError } from '../shared/errors.js';
import type { EngineWorkerData, RemoteSessionApi, SessionTaskData } from '../shared/protocol.js';
import type { SessionOutcome } from '../shared/types.js';
import { prepareCgroupHome } from './cgroup.js';
import { beatOn } from './heartbeat.js';
import { LiveOutputPublisher } from './live-output.js';
import { SessionCore } from './session.js';

installErrorTransfer();

/**
 * Where this thread's sessions get their cgroups, found (and a dead predecessor's cgroups swept) once
 * when the thread starts; `undefined` when none can be made (sessions use process-tree teardown).
 */
const cgroupHome = prepareCgroupHome((workerData as EngineWorkerData | undefined)?.cgroupRoot);

/** Piscina entry point: one call = one session, resolving when it is closed. */
export default async function runSessionTask(data: SessionTaskData): Promise<SessionOutcome> {
  const live = new LiveOutputPublisher(data.dataPort);
  const session = new SessionCore(data.spec, live, await cgroupHome);
  const api: RemoteSessionApi = {
    plan: async () => session.plan(),
    launch: async (argv) => session.launch(argv),
    awaitStartup: () => session.awaitStartup(),
    startSend: async (sendId, request) => session.startSend(sendId, request),
    awaitSend: (sendId) => session.awaitSend(sendId),
    readSendOutput: async (sendId) => session.readSendOutput(sendId),
    cancelSend: (sendId) => session.cancelSend(sendId),
    endWait: async (sendId) => session.endWait(sendId),
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
  const stopBeating = beatOn(data.heartbeat);
  const outcome = await session.finished.finally(stopBeating);
  // Let Comlink post the reply of the close() call that finished the session before the port goes.
  await new Promise((resolve) => setImmediate(resolve));
  data.controlPort.close();
  return outcome;
}
