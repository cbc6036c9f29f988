/**
 * Leak checks run after every test (registered in setup.ts): no child process of the test process may
 * survive a test, and no new ref'd timer or handle may keep the event loop alive.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** How long a test's processes get to disappear after it ended (zombies being reaped, kills landing). */
const SETTLE_MS = 3_000;

interface ProcEntry {
  pid: number;
  ppid: number;
  comm: string;
  state: string;
}

function processTable(): ProcEntry[] {
  const out: ProcEntry[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const text = readFileSync(`/proc/${name}/stat`, 'utf8');
      const close = text.lastIndexOf(')');
      const comm = text.slice(text.indexOf('(') + 1, close);
      const fields = text.slice(close + 2).split(' ');
      out.push({ pid: Number(name), comm, state: fields[0]!, ppid: Number(fields[1]) });
    } catch {
      // exited while scanning
    }
  }
  return out;
}

/** Live (non-zombie) descendants of `root`. */
export function liveDescendants(root = process.pid): ProcEntry[] {
  const table = processTable();
  const found: ProcEntry[] = [];
  let frontier = [root];
  while (frontier.length > 0) {
    const next: number[] = [];
    for (const entry of table) {
      if (frontier.includes(entry.ppid)) {
        found.push(entry);
        next.push(entry.pid);
      }
    }
    frontier = next;
  }
  return found.filter((entry) => entry.state !== 'Z');
}

/** Waits (bounded) until `root` has no live descendant; returns the survivors (empty when clean). */
export async function waitForNoDescendants(root = process.pid, timeoutMs = SETTLE_MS): Promise<ProcEntry[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alive = liveDescendants(root);
    if (alive.length === 0 || Date.now() >= deadline) return alive;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Resource types that betray a leak when they outlive a test. */
const TRACKED_RESOURCES = new Set([
  'Timeout',
  'TTYWrap',
  'PipeWrap',
  'ProcessWrap',
  'TCPWrap',
  'MessagePort',
]);

/** Counts of tracked active resources. */
export function activeResourceCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) {
    if (TRACKED_RESOURCES.has(type)) counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return counts;
}

/** Waits (bounded) until no tracked resource type exceeds `baseline`; returns the excess (empty when clean). */
export async function waitForResources(
  baseline: Map<string, number>,
  timeoutMs = SETTLE_MS,
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const excess: string[] = [];
    for (const [type, count] of activeResourceCounts()) {
      const before = baseline.get(type) ?? 0;
      if (count > before) excess.push(`${type} x${count - before}`);
    }
    if (excess.length === 0 || Date.now() >= deadline) return excess;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
