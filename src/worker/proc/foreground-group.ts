/**
 * The terminal's foreground process group as a signal target (SPEC §4.4, §4.7): never a group that was
 * not just verified to belong to the session, never pid -1 (`kill(1)` as root) or 1 (init's group).
 */
import type { ProcStat } from '../../shared/proc-stat.js';
import { descendantsOf, readProcStat } from './proc-probe.js';

/**
 * The foreground group of the terminal whose pty child is `rootPid`, or `undefined` when it is unknown
 * (no controlling terminal, tpgid <= 1) or not proven to be the session's: no live process of the tree
 * rooted at the pty child is in it. The caller signals the group right away (a group id stays reserved
 * while any member lives, so a verified group cannot be replaced in between by one of strangers).
 */
export function verifiedForegroundGroup(rootPid: number): number | undefined {
  const root = readProcStat(rootPid);
  if (root === undefined || !isSignalableGroup(root.tpgid)) return undefined;
  return groupOwnedByTree(root.tpgid, [root, ...descendantsOf(rootPid)]);
}

/** `tpgid` when some live process of `tree` is a member of that group (and it is > 1), else `undefined`. */
export function groupOwnedByTree(tpgid: number, tree: readonly ProcStat[]): number | undefined {
  if (!isSignalableGroup(tpgid)) return undefined;
  const member = tree.some((stat) => stat.pgrp === tpgid && stat.state !== 'Z' && stat.state !== 'X');
  return member ? tpgid : undefined;
}

/** tpgid -1 or 0: no foreground group; 1: init's group. `process.kill(-1)` would signal every process. */
function isSignalableGroup(pgid: number): boolean {
  return Number.isSafeInteger(pgid) && pgid > 1;
}
