/**
 * Every listener of src/main and src/worker is owned (issue 24), as every timer is (owned-timers.test.ts):
 * registered through `DisposableStore.listen` (src/shared/lifecycle.ts), so disposing its owner removes
 * it and the thread's count of live registrations (`liveOwnedResources`) sees it. A bare `.on(`,
 * `.once(`, `addListener(`, `prependListener(` or `addEventListener(` is allowed only where it must
 * outlive any owner — it lives and dies with its emitter (an error listener that keeps a late EPIPE
 * from becoming an uncaught error, a one-shot wait on a child's exit that a promise holds) — and each
 * such file is listed in {@link EMITTER_BOUND} with how many it has and why, so a new bare listener
 * fails here until someone decided which kind it is.
 */
import { statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeOf, SRC, sourceFiles } from '../support/source-tree.js';

/** Files (relative to src/) with bare listeners that live and die with their emitter: count, reason. */
const EMITTER_BOUND: Record<string, [count: number, reason: string]> = {
  'main/cli/attach-command.ts': [
    4,
    "the watch socket's error, refusal, close and message listeners: the command creates the socket and `finish` closes it; its late error or close must still reach `finish`",
  ],
  'main/cli/interactive.ts': [1, "readline's SIGINT: the interface is the loop's own and closes with it"],
  'main/daemon/daemon-command.ts': [
    1,
    "stderr's error listener: this process is the daemon, its log is written until it exits (EPIPE must not end it)",
  ],
  'main/daemon/daemon-connection.ts': [
    1,
    "the client socket's error listener: the link reports the end; a late error after the link died must stay handled",
  ],
  'main/daemon/daemon-starter.ts': [
    2,
    "the started daemon's one-shot exit and error: they end with the child (unref'd), and a promise holds them",
  ],
  'main/daemon/daemon.ts': [
    5,
    "error listeners of sockets held or refused (a client gone meanwhile), the probe's one-shot connect and error (the probe destroys its socket), the listening server's error listener (a later error must find one)",
  ],
  'main/daemon/start-lock.ts': [
    1,
    "the lock server's error listener: it ends with the lock's server and keeps a held lock's later error handled",
  ],
  'main/engine/cgroup-reaper.ts': [
    3,
    "the reaper child's and its stdin's error listeners (a reaper gone must not end the host) and its one-shot close, which a promise holds",
  ],
  'main/engine/engine.ts': [
    2,
    "the worker pool's error listener (a thread's death is handled per task) and a thread's one-shot exit, which a promise shared by its tasks holds",
  ],
  'main/engine/thread-session.ts': [1, "the control port's one-shot close, which a promise holds"],
  'main/worlds/serve-stdio.ts': [
    1,
    "stderr's error listener: this process is the world, its stderr is written until it exits (EPIPE over a dead ssh link)",
  ],
  'main/worlds/world-link.ts': [
    2,
    "the streams' error listeners stay after the link closed: a late EPIPE or ECONNRESET must not become an uncaught error",
  ],
  'main/worlds/world-transport.ts': [
    5,
    "the transport child's one-shot exit and error and its stderr tail, the socket's one-shot close and its error listener: they live as long as the child or socket, which `finish` ends",
  ],
};

/** A bare listener registration. */
const BARE_LISTENER = /\.(?:on|once|addListener|prependListener|prependOnceListener|addEventListener)\(/g;

/** The files of src/main and src/worker with bare listeners, relative to src/, and their counts. */
function bareListeners(): Record<string, number> {
  const found: Record<string, number> = {};
  for (const file of ['main', 'worker'].flatMap((folder) => sourceFiles(join(SRC, folder)))) {
    const count = codeOf(file).match(BARE_LISTENER)?.length ?? 0;
    if (count > 0) found[relative(SRC, file)] = count;
  }
  return found;
}

describe('owned listeners', () => {
  it('no file of src/main or src/worker registers a bare listener unless it is listed with its count and reason', () => {
    const listed = Object.fromEntries(Object.entries(EMITTER_BOUND).map(([file, [count]]) => [file, count]));
    expect(
      bareListeners(),
      'register listeners through DisposableStore.listen (src/shared/lifecycle.ts) of the object that owns them',
    ).toEqual(listed);
  });

  it('lists only files that exist, each with a reason', () => {
    for (const [file, [, reason]] of Object.entries(EMITTER_BOUND)) {
      expect(() => statSync(join(SRC, file)), file).not.toThrow();
      expect(reason.length, file).toBeGreaterThan(20);
    }
  });
});
