/**
 * A cgroup counter read through a held descriptor (src/worker/containment/held-counter-file.ts) shows
 * the count of the moment it is read, not the one of its open: the kernel regenerates the file's text on
 * a read at offset 0. Driven on a real v1 pids cgroup inside an outer cgroup of the test's own, where a
 * real shell's forks are refused.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readlinkSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HeldCounterFile } from '../../../../dist/worker/containment/held-counter-file.js';
import { createOuterCgroup, outerCgroupUnavailable } from '../../../support/outer-cgroup.js';

const unavailable = outerCgroupUnavailable();
if (unavailable !== undefined) console.warn(`held-counter-file: skipped, ${unavailable}`);

/** How many of this process's descriptors are open on `file`. */
function descriptorsOn(file: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false;
    }
  }).length;
}

describe('held counter file', () => {
  it.skipIf(unavailable !== undefined)(
    'one descriptor, held across reads, reads the refused forks as they are counted; closed, it reads nothing',
    async () => {
      const outer = createOuterCgroup('held-counter', { pids: 64, memoryBytes: 256 * 1024 * 1024 });
      const leaf = path.join(outer.pidsDir, 'leaf');
      try {
        mkdirSync(leaf);
        writeFileSync(path.join(leaf, 'pids.max'), '1');
        const events = path.join(leaf, 'pids.events');
        const counter = new HeldCounterFile(events);
        expect(counter.value('max')).toBe(0);
        expect(descriptorsOn(events)).toBe(1);
        // The shell alone fills pids.max 1: its subshell's fork is refused and counted (and the shell,
        // unable to fork, gives up).
        const refuseOneFork = () =>
          spawnSync('/bin/sh', [
            '-c',
            `echo $$ > ${path.join(leaf, 'cgroup.procs')} || exit 125; (true); exit 0`,
          ]);
        expect(refuseOneFork().status).not.toBe(125);
        expect(counter.value('max')).toBe(1);
        expect(refuseOneFork().status).not.toBe(125);
        expect(counter.value('max')).toBe(2);
        expect(descriptorsOn(events), 'the same descriptor, not a new one').toBe(1);
        counter.close();
        expect(descriptorsOn(events)).toBe(0);
        expect(counter.value('max')).toBeUndefined();
      } finally {
        rmdirSync(leaf);
        await outer.remove();
      }
    },
    30_000,
  );
});
