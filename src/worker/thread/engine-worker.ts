/**
 * The Piscina task that hosts one terminal session for its whole life (see docs/decisions/0001).
 * It exposes the session on the transferred control port with Comlink and resolves with the session's
 * outcome once the session is closed. Live output goes out on the data port.
 */
import * as Comlink from 'comlink';
import { workerData } from 'piscina';
import { installErrorTransfer, portEndpoint } from '../../shared/comlink-bridge.js';
import { DisposableStore, liveOwnedResources } from '../../shared/lifecycle.js';
import type {
  EngineWorkerData,
  SessionTaskData,
  SessionThreadApi,
  ThreadDiagnostics,
} from '../../shared/protocol.js';
import type { SessionOutcome } from '../../shared/types.js';
import { type CgroupPlacement, prepareCgroupPlacement } from '../containment/session-cgroups.js';
import { LiveOutputPublisher } from '../output/live-output.js';
import { SessionCore } from '../session.js';
import { beatOn } from './heartbeat.js';
import { threadFaultApi } from './thread-faults.js';

installErrorTransfer();

/**
 * Where this thread's sessions get their cgroups (containment and limits), found — and a dead
 * predecessor's cgroups swept — once when the thread starts.
 */
const placement = placementFor(workerData as EngineWorkerData | undefined);

/** Piscina entry point: one call = one session, resolving when it is closed. */
export default async function runSessionTask(data: SessionTaskData): Promise<SessionOutcome> {
  const live = new LiveOutputPublisher(data.dataPort);
  const session = new SessionCore(data.spec, live, await placement);
  const api: SessionThreadApi = {
    plan: async () => session.plan(),
    launch: async (argv) => session.launch(argv),
    awaitStartup: () => session.awaitStartup(),
    startSend: async (sendId, request) => session.startSend(sendId, request),
    awaitSend: (sendId) => session.awaitSend(sendId),
    // Not async: the result's reply must leave as early as `awaitSend`'s does (a close's reply, which
    // comes after it, must not overtake it); Comlink turns a synchronous throw into a rejection.
    send: (sendId, request) => {
      session.startSend(sendId, request);
      return session.awaitSend(sendId);
    },
    readSendOutput: async (sendId) => session.readSendOutput(sendId),
    cancelSend: (sendId) => session.cancelSend(sendId),
    endWait: async (sendId) => session.endWait(sendId),
    read: async (request) => session.read(request),
    signal: async (signal) => session.signal(signal),
    status: async () => session.status(),
    resize: async (size) => session.resize(size),
    setLiveOutput: async (enabled) => session.setLiveOutput(enabled),
    writePersonInput: (data) => session.writePersonInput(data),
    openRaw: (port) => session.openRaw(port),
    snapshot: async () => session.snapshot(),
    close: (reason, graceMs) => session.close(reason, graceMs),
  };
  // Only a session of an engine made through the internal test entry can be told to crash its thread.
  const exposed = data.spec.faults === undefined ? api : { ...api, ...threadFaultApi() };
  Comlink.expose(exposed, portEndpoint(data.controlPort));
  const stopBeating = beatOn((workerData as EngineWorkerData).heartbeats, data.heartbeat);
  const outcome = await session.finished.finally(stopBeating);
  // Let Comlink post the reply of the close() call that finished the session before the port goes.
  const lastTurn = new DisposableStore();
  await new Promise<void>((resolve) => lastTurn.immediate('session task last turn', resolve));
  data.controlPort.close();
  return outcome;
}

/**
 * Piscina named task (its name is the protocol's `THREAD_DIAGNOSTICS_TASK`): what this thread holds
 * now. The internal test entry runs it to show that a closed session left nothing behind.
 */
export async function threadDiagnostics(): Promise<ThreadDiagnostics> {
  await placement; // a thread is ready once its cgroup home is (finding it may run a probe process)
  return {
    ownedResources: liveOwnedResources(),
    activeResources: process.getActiveResourcesInfo().sort(),
  };
}

/** This thread's cgroup placement; none without the engine's data (a thread not started by an engine). */
function placementFor(data: EngineWorkerData | undefined): Promise<CgroupPlacement | undefined> {
  if (data === undefined) return Promise.resolve(undefined);
  return prepareCgroupPlacement({
    ...(data.cgroupRoot === undefined ? {} : { cgroupRoot: data.cgroupRoot }),
    engineKey: data.engineKey,
    engineMemoryBytes: data.engineMemoryBytes,
  });
}
