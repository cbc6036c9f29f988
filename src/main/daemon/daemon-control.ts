/** `daemon --status` and `--stop`: one call to the running daemon over its socket. */
import type { WorldOperation } from '../../shared/world-protocol.js';
import { connectDaemonSocket } from '../worlds/remote-engine.js';

/** Calls `op` on the daemon on `socketPath` and disconnects; TRANSPORT_CLOSED when none answers. */
export async function askDaemon<T>(socketPath: string, op: WorldOperation): Promise<T> {
  const client = await connectDaemonSocket(socketPath, {});
  try {
    return await client.call<T>(op, {});
  } finally {
    await client.terminate();
  }
}
