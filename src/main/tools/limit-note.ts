/**
 * The words for a session's limit events (SPEC §4.8): what a result's `limitEvents` say, in a form a
 * model can act on — the same text in the rendered result and in its `hint`. Separate from render.ts
 * so that either form can take it.
 */
import { formatBytes } from '../../shared/session-limits.js';
import type { LimitEvents, SessionLimits } from '../../shared/types.js';

/**
 * One line per kind of event since the previous result, e.g. `[limit: out of memory — a process was
 * killed (session memory limit 512 MiB)]`, `[limit: process limit reached — 312 forks refused
 * (session limit 256)]`; none without events.
 */
export function renderLimitEvents(
  events: LimitEvents | undefined,
  limits: SessionLimits | undefined,
): string[] {
  if (events === undefined) return [];
  const lines: string[] = [];
  if (events.oomKills > 0) {
    const what = events.oomKills === 1 ? 'a process was killed' : `${events.oomKills} processes were killed`;
    const memory = limits?.memory;
    const bound =
      memory !== undefined && memory.enforcedBy !== 'none'
        ? ` (session memory limit ${formatBytes(memory.bytes)})`
        : '';
    lines.push(`[limit: out of memory — ${what}${bound}]`);
  }
  if (events.pidsRefused > 0) {
    const what = events.pidsRefused === 1 ? '1 fork refused' : `${events.pidsRefused} forks refused`;
    const pids = limits?.pids;
    const bound = pids !== undefined && pids.enforcedBy !== 'none' ? ` (session limit ${pids.max})` : '';
    lines.push(`[limit: process limit reached — ${what}${bound}]`);
  }
  return lines;
}
