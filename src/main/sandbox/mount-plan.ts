/**
 * The mounts of a confined session as data (SPEC §4.1), before they become bwrap arguments: each
 * step knows what it shows at its target, so the same plan that builds the sandbox also answers
 * whether the sandbox shows a given directory (a `cwd` it hides is refused like a missing one).
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { isInside, isStrictlyInside } from '../../shared/workspace-scope.js';

/** Ordering of mounts that share a depth: later ranks are mounted over earlier ones. */
export const MountRank = {
  System: 0,
  Hidden: 1,
  PrivateHome: 2,
  HomeBind: 3,
  Workspace: 4,
  ReExposed: 5,
  Readable: 6,
  ExtraReadOnly: 7,
  StoreCover: 8,
} as const;

/** One of {@link MountRank}. */
export type MountRank = (typeof MountRank)[keyof typeof MountRank];

/**
 * What a mount shows at and below its target:
 * - `bind`: the host's `source` (its real path), read-only or writable;
 * - `empty`: a fresh directory (tmpfs, procfs, devtmpfs) that holds only what later steps mount in it;
 * - `file`: a single file (`/dev/null` over a hidden file): no directory at all.
 */
export type MountShows = { kind: 'bind'; source: string } | { kind: 'empty' } | { kind: 'file' };

/** One bwrap mount operation, placed by the depth of its target. */
export interface MountStep {
  /** Where it is mounted inside the sandbox (an absolute, normalized path). */
  target: string;
  rank: MountRank;
  /** The bwrap arguments that perform it. */
  args: string[];
  shows: MountShows;
  /** Remount read-only once everything inside it is mounted (bwrap's `--remount-ro` does not recurse). */
  seal?: boolean;
}

/** Path components below `/` (`/` itself is 0). */
function depthOf(target: string): number {
  return target === '/' ? 0 : target.split('/').length - 1;
}

/**
 * The steps in mount order: parents before children, so no later mount is hidden by an earlier one;
 * at equal depth by rank. Array.prototype.sort is stable, so equal (depth, rank) keep their order.
 */
export function orderMounts(steps: readonly MountStep[]): MountStep[] {
  return [...steps].sort((a, b) => depthOf(a.target) - depthOf(b.target) || a.rank - b.rank);
}

/** The bwrap arguments of ordered `steps`, then the seals (`/proc`, `/dev`, hiding tmpfs, …). */
export function mountArguments(ordered: readonly MountStep[]): string[] {
  const seals = ordered.filter((step) => step.seal === true).flatMap((step) => ['--remount-ro', step.target]);
  return [...ordered.flatMap((step) => step.args), ...seals];
}

/**
 * Whether the sandbox built from `ordered` shows `dir` (a real, absolute host path) as a directory:
 * the last step that covers it decides. A bind shows the host's directory there if it exists; a fresh
 * directory shows only itself and the mount points later steps create inside it.
 */
export function showsDirectory(ordered: readonly MountStep[], dir: string): boolean {
  let index = -1;
  for (let i = 0; i < ordered.length; i++) if (isInside(ordered[i]!.target, dir)) index = i;
  const covering = ordered[index];
  if (covering === undefined) return false;
  switch (covering.shows.kind) {
    case 'file':
      return false;
    case 'empty':
      // Itself, or a directory bwrap created on the way to a later mount point inside it.
      return (
        dir === covering.target || ordered.slice(index + 1).some((step) => isStrictlyInside(dir, step.target))
      );
    case 'bind': {
      const host = path.join(covering.shows.source, path.relative(covering.target, dir));
      return statSync(host, { throwIfNoEntry: false })?.isDirectory() === true;
    }
  }
}
