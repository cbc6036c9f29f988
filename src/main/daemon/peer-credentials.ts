/**
 * Who connected to the daemon's socket (SPEC §12: a peer of another uid is refused). The socket's
 * 0700 directory already keeps other uids from reaching it (docs/daemon.md); this is the second wall,
 * for a directory whose mode was loosened after the daemon checked it, or a socket passed on by a
 * process that could reach it. The kernel records the peer's credentials at connect, read here with
 * `SO_PEERCRED` (`getpeereid` on the BSDs) through agent-pty's addon — Node cannot read them.
 *
 * Fails closed: when the credentials cannot be read, the connection is refused as if foreign.
 */
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { describeError } from '../../shared/errors.js';
import { ADDON_PATH } from '../../shared/native-addon-path.js';

/** What the kernel says about a socket's peer. */
export interface PeerCredentials {
  uid: number;
  gid: number;
  /** The connecting process, or -1 where the platform does not say. */
  pid: number;
}

/** The verdict on one connection. */
export type PeerCheck = { admitted: true } | { admitted: false; why: string };

type PeerCredentialsReader = (fd: number) => PeerCredentials;
let reader: PeerCredentialsReader | undefined;

/** Admits a connection only from a process of `uid` (the daemon's own). */
export function checkPeer(socket: Socket, uid: number): PeerCheck {
  let peer: PeerCredentials;
  try {
    peer = peerCredentials(socket);
  } catch (error) {
    return { admitted: false, why: `its credentials could not be read (${describeError(error)})` };
  }
  if (peer.uid === uid) return { admitted: true };
  const pid = peer.pid > 0 ? ` (pid ${peer.pid})` : '';
  return { admitted: false, why: `its peer runs as uid ${peer.uid}${pid}, not as the daemon's uid ${uid}` };
}

/** The peer credentials of a connected Unix socket. Throws when they cannot be read. */
export function peerCredentials(socket: Socket): PeerCredentials {
  // libuv's descriptor of the connection; Node exposes it on the handle of a Unix socket (`fd`).
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new Error('the connection has no file descriptor');
  reader ??= loadReader();
  return reader(fd);
}

function loadReader(): PeerCredentialsReader {
  const addon = createRequire(import.meta.url)(ADDON_PATH) as { peerCredentials?: unknown };
  if (typeof addon.peerCredentials !== 'function') {
    throw new Error(`agent-pty's native addon ${ADDON_PATH} predates peerCredentials: reinstall agent-pty`);
  }
  return addon.peerCredentials as PeerCredentialsReader;
}
