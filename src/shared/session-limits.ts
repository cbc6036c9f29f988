/**
 * Values and words around the session limits of SPEC §4.8 that the host and the engine threads share:
 * the report of limits nothing enforces, and how sizes are written for a person or a model.
 */
import type { SessionLimits } from './types.js';

/** Every limit of a session unenforced, for the same `reason` (no cgroup, or a session whose engine is gone). */
export function unenforcedLimits(reason: string): SessionLimits {
  return {
    memory: { enforcedBy: 'none', reason },
    pids: { enforcedBy: 'none', reason },
    cpu: { enforcedBy: 'none', reason },
  };
}

/** The limits reported for a session that cannot answer any more (its thread or link is gone). */
export const LIMITS_UNKNOWN: SessionLimits = unenforcedLimits('unknown: the session can no longer report');

/**
 * SIGTERM → SIGKILL grace of a server's sessions once its client is gone (the MCP server's stdin
 * closed, a world's link ended): short, so the process is gone within seconds even when its stdout is
 * blocked (SPEC §4.8 "Edges"; bin.ts bounds the final flush).
 */
export const CLIENT_GONE_GRACE_MS = 1_000;

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** `bytes` as a person writes it: `512 MiB`, `1.5 GiB`, `300 KiB`. */
export function formatBytes(bytes: number): string {
  if (bytes >= GIB) return `${trimmed(bytes / GIB)} GiB`;
  if (bytes >= MIB) return `${trimmed(bytes / MIB)} MiB`;
  if (bytes >= 1024) return `${trimmed(bytes / 1024)} KiB`;
  return `${bytes} B`;
}

/** One decimal at most, none when whole. */
function trimmed(value: number): string {
  return (Math.round(value * 10) / 10).toString();
}
