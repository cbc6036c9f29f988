/**
 * A session's cgroups (SPEC §4.6, §4.8): the containment cgroup v2 that close kills as a whole, and
 * the limit cgroups — the same v2 cgroup where the v2 tree offers the controllers, the v1
 * hierarchies of a hybrid host where it does not. One object per thread finds and prepares them once
 * (`prepareCgroupPlacement`); one per session creates its cgroups, writes its limits, joins them
 * through the launcher, counts its limit events, and kills and removes them at close.
 *
 * Which hierarchy enforces a limit is decided per controller, detected, never assumed: v2 when the
 * home enabled it for sessions; else the v1 hierarchy bound to it; else none, with the reason.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
import {
  detectCgroupLayout,
  LIMIT_CONTROLLERS,
  type LimitController,
} from '../../shared/cgroup-hierarchy.js';
import { TerminalError } from '../../shared/errors.js';
import type { LimitEnforcer, LimitEvents, SessionLimits, UnenforcedLimit } from '../../shared/types.js';
import { identityOf } from '../proc/proc-probe.js';
import {
  type CgroupHome,
  DELEGATION_REMEDY,
  prepareCgroupHome,
  runLauncher,
  type SessionCgroup,
} from './cgroup.js';
import { removeIfEmpty, rmdirIgnoringGone } from './cgroup-fs.js';
import { launcherArgv } from './cgroup-launcher.js';
import { killV1Members, prepareV1Hierarchy, type V1LimitHierarchy } from './cgroup-v1-limits.js';
import { HeldCounterFile } from './held-counter-file.js';
import {
  type CgroupVersion,
  type CounterLine,
  oomKillCounter,
  pidsRefusedCounter,
  writeCpuWeight,
  writeMemoryLimit,
  writePidsLimit,
} from './limit-files.js';

/** What a thread's cgroups are made from: the engine's options (Piscina's `workerData`). */
export interface CgroupPlacementOptions {
  /** Config `cgroupRoot`: the v2 home instead of the process's own cgroup. */
  cgroupRoot?: string;
  /** This engine's key, naming its directory (`engine-<key>`) in every hierarchy. */
  engineKey: string;
  /** Memory cap of all sessions of this engine. */
  engineMemoryBytes: number;
}

/** The limits of one session as asked for (the spawn's, else the engine's). */
export interface SessionLimitValues {
  /** Memory limit in bytes. */
  memoryBytes: number;
  /** Process/thread limit. */
  pids: number;
}

/** Where one limit of a thread's sessions is enforced. */
type LimitSource =
  | { kind: 'v2'; home: CgroupHome }
  | { kind: 'v1'; hierarchy: V1LimitHierarchy }
  | { kind: 'none'; reason: string };

/** The cgroups a thread's sessions get: found and prepared once per thread. */
export class CgroupPlacement {
  constructor(
    /** The containment home (cgroup v2), when the engine can make cgroups there. */
    private readonly home: CgroupHome | undefined,
    /** Where each limit is enforced. */
    private readonly sources: ReadonlyMap<LimitController, LimitSource>,
    private readonly engineMemoryBytes: number,
  ) {}

  /** The session cgroups of session `id` with `values` written; never throws (what fails is reported). */
  place(id: string, values: SessionLimitValues): SessionCgroups {
    const containment = this.home?.createSession(id);
    const name = `session-${threadId}-${id.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
    const v1 = new Map<LimitController, string>();
    const enforced = new Map<LimitController, { enforcedBy: LimitEnforcer; dir: string } | UnenforcedLimit>();
    for (const controller of LIMIT_CONTROLLERS) {
      const source = this.sources.get(controller) ?? { kind: 'none', reason: 'no cgroup hierarchy' };
      let result: { enforcedBy: LimitEnforcer; dir: string } | UnenforcedLimit;
      if (source.kind === 'none') {
        result = { enforcedBy: 'none', reason: source.reason };
      } else if (source.kind === 'v2') {
        result =
          containment === undefined
            ? { enforcedBy: 'none', reason: 'the session cgroup v2 could not be created' }
            : applied(controller, containment.dir, 2, values);
      } else {
        const created = source.hierarchy.createSession(name);
        if ('failure' in created) {
          result = { enforcedBy: 'none', reason: created.failure };
        } else {
          v1.set(controller, created.dir);
          result = applied(controller, created.dir, 1, values);
        }
      }
      enforced.set(controller, result);
    }
    return new SessionCgroups(containment, v1, enforced, values, this.engineMemoryBytes, (controller) => {
      const source = this.sources.get(controller);
      if (source?.kind === 'v1') source.hierarchy.removeIfUnused();
    });
  }
}

/** Writes the limit of `controller` into `dir`; the enforcer, or why it does not hold. */
function applied(
  controller: LimitController,
  dir: string,
  version: CgroupVersion,
  values: SessionLimitValues,
): { enforcedBy: LimitEnforcer; dir: string } | UnenforcedLimit {
  const failure =
    controller === 'memory'
      ? writeMemoryLimit(dir, version, values.memoryBytes)
      : controller === 'pids'
        ? writePidsLimit(dir, values.pids)
        : writeCpuWeight(dir, version);
  if (failure !== undefined) return { enforcedBy: 'none', reason: failure };
  return { enforcedBy: version === 2 ? 'cgroup-v2' : 'cgroup-v1', dir };
}

/** The cgroups of one session. */
export class SessionCgroups {
  /** The limits as `status().limits` reports them. */
  readonly limits: SessionLimits;
  /** Counters at the previous result, to report only what happened since. */
  private reported: LimitEvents = { oomKills: 0, pidsRefused: 0 };
  /** The counters as they were when the cgroups were removed (a removed cgroup counts nothing). */
  private final: LimitEvents | undefined;
  /** The OOM kill and refused-fork counters, read through held descriptors (held-counter-file.ts). */
  private readonly oomKillLine: HeldCounterLine | undefined;
  private readonly pidsRefusedLine: HeldCounterLine | undefined;

  constructor(
    /** The containment cgroup v2, when the session has one. */
    readonly containment: SessionCgroup | undefined,
    /** The session's v1 limit cgroups by controller. */
    private readonly v1: ReadonlyMap<LimitController, string>,
    enforced: ReadonlyMap<LimitController, { enforcedBy: LimitEnforcer; dir: string } | UnenforcedLimit>,
    values: SessionLimitValues,
    engineMemoryBytes: number,
    private readonly releaseHierarchy: (controller: LimitController) => void,
  ) {
    const memory = enforced.get('memory')!;
    const pids = enforced.get('pids')!;
    const cpu = enforced.get('cpu')!;
    this.limits = {
      memory:
        memory.enforcedBy === 'none'
          ? memory
          : { bytes: values.memoryBytes, engineBytes: engineMemoryBytes, enforcedBy: memory.enforcedBy },
      pids: pids.enforcedBy === 'none' ? pids : { max: values.pids, enforcedBy: pids.enforcedBy },
      cpu: cpu.enforcedBy === 'none' ? cpu : { weight: 'equal', enforcedBy: cpu.enforcedBy },
    };
    if (memory.enforcedBy !== 'none') {
      this.oomKillLine = heldLine(oomKillCounter(memory.dir, memory.enforcedBy === 'cgroup-v2' ? 2 : 1));
    }
    if (pids.enforcedBy !== 'none') this.pidsRefusedLine = heldLine(pidsRefusedCounter(pids.dir));
  }

  /** The `cgroup.procs` files the launcher joins: the containment cgroup and every v1 limit cgroup. */
  get procsFiles(): string[] {
    const files = [...this.v1.values()].map((dir) => path.join(dir, 'cgroup.procs'));
    return this.containment === undefined ? files : [this.containment.procsFile, ...files];
  }

  /** The v1 cgroups of the session (the host-exit guard kills their members). */
  get v1Dirs(): string[] {
    return [...this.v1.values()];
  }

  /** `argv` wrapped in the launcher that joins every cgroup of the session before it execs `argv`. */
  launcherArgv(argv: readonly string[]): string[] {
    return launcherArgv(this.procsFiles, argv);
  }

  /**
   * Limit events since the previous call (the previous result), or `undefined` when there were none:
   * OOM kills in the session's memory cgroup and forks its pids cgroup refused.
   */
  eventsSinceLastResult(): LimitEvents | undefined {
    const now = this.counters();
    const since = {
      oomKills: Math.max(0, now.oomKills - this.reported.oomKills),
      pidsRefused: Math.max(0, now.pidsRefused - this.reported.pidsRefused),
    };
    this.reported = now;
    return since.oomKills > 0 || since.pidsRefused > 0 ? since : undefined;
  }

  /** The kernel's counters of the session's limit events so far (0 where unreadable). */
  private counters(): LimitEvents {
    if (this.final !== undefined) return this.final;
    return {
      oomKills: this.oomKillLine?.file.value(this.oomKillLine.key) ?? 0,
      pidsRefused: this.pidsRefusedLine?.file.value(this.pidsRefusedLine.key) ?? 0,
    };
  }

  /**
   * Kills everything in the session's cgroups: the containment cgroup as a whole, then any member of a
   * v1 limit cgroup still alive (none, after a v2 kill; without one, whatever escaped the process tree).
   */
  async kill(): Promise<void> {
    await this.containment?.kill();
    if (this.v1.size > 0) await killV1Members([...this.v1.values()]);
  }

  /** Removes the (empty) cgroups, then the engine's directories that no session uses any more. */
  remove(): void {
    this.final ??= this.counters();
    this.oomKillLine?.file.close();
    this.pidsRefusedLine?.file.close();
    for (const [controller, dir] of this.v1) {
      try {
        rmdirIgnoringGone(dir);
      } catch (error) {
        throw new TerminalError('CLEANUP_FAILED', `could not remove the session's limit cgroup ${dir}`, {
          cause: error,
        });
      }
      this.releaseHierarchy(controller);
    }
    this.containment?.remove();
  }
}

/**
 * Finds and prepares this thread's cgroups: the v2 home (enabling the limit controllers there, which
 * may move the engine into a leaf), then, for each limit controller v2 does not carry, its v1
 * hierarchy; joins a probe cgroup in each v1 hierarchy once to prove the launcher can. Never rejects.
 */
export async function prepareCgroupPlacement(options: CgroupPlacementOptions): Promise<CgroupPlacement> {
  const home = await prepareCgroupHome({
    ...(options.cgroupRoot === undefined ? {} : { rootOverride: options.cgroupRoot }),
    engineKey: options.engineKey,
    engineMemoryBytes: options.engineMemoryBytes,
  });
  const sources = new Map<LimitController, LimitSource>();
  const layout = detectCgroupLayout();
  const self = identityOf(process.pid);
  const v1: V1LimitHierarchy[] = [];
  for (const controller of LIMIT_CONTROLLERS) {
    if (home?.controllers.includes(controller)) {
      sources.set(controller, { kind: 'v2', home });
      continue;
    }
    const own = layout.v1[controller];
    if (own === undefined || self === undefined) {
      const v2Reason =
        home === undefined ? noV2HomeReason(options.cgroupRoot) : home.unavailable.get(controller);
      sources.set(controller, {
        kind: 'none',
        reason: v2Reason ?? `no cgroup hierarchy offers ${controller}`,
      });
      continue;
    }
    try {
      const prepared = await prepareV1Hierarchy(
        controller,
        own,
        self,
        options.engineKey,
        options.engineMemoryBytes,
      );
      if ('failure' in prepared)
        sources.set(controller, { kind: 'none', reason: `${prepared.failure}; ${DELEGATION_REMEDY}` });
      else v1.push(prepared);
    } catch (error) {
      sources.set(controller, {
        kind: 'none',
        reason: `preparing the cgroup v1 ${controller} hierarchy failed: ${String(error)}`,
      });
    }
  }
  const failure = v1.length === 0 ? undefined : await probeV1(v1);
  for (const hierarchy of v1) {
    sources.set(
      hierarchy.controller,
      failure === undefined ? { kind: 'v1', hierarchy } : { kind: 'none', reason: failure },
    );
    if (failure !== undefined) hierarchy.removeIfUnused();
  }
  return new CgroupPlacement(home, sources, options.engineMemoryBytes);
}

/** Why there is no v2 home for the limits. */
function noV2HomeReason(cgroupRoot: string | undefined): string {
  return cgroupRoot === undefined
    ? `the engine cannot create cgroups here; ${DELEGATION_REMEDY}`
    : `cgroupRoot ${cgroupRoot} is not a usable cgroup v2 directory`;
}

/** Joins a probe cgroup of this thread in every v1 hierarchy with one launcher run; the failure, if any. */
async function probeV1(hierarchies: readonly V1LimitHierarchy[]): Promise<string | undefined> {
  const probes: string[] = [];
  try {
    for (const hierarchy of hierarchies) {
      hierarchy.ensureEngineDir();
      const dir = path.join(hierarchy.engineDir, `probe-${threadId}`);
      mkdirSync(dir, { recursive: true });
      probes.push(dir);
    }
    if (await runLauncher(probes.map((dir) => path.join(dir, 'cgroup.procs')))) return undefined;
    return `a process could not join the cgroup v1 hierarchies (${probes.join(', ')}); ${DELEGATION_REMEDY}`;
  } catch (error) {
    return `preparing the cgroup v1 limit cgroups failed (${String(error)}); ${DELEGATION_REMEDY}`;
  } finally {
    for (const dir of probes) removeIfEmpty(dir);
  }
}

/** A counter's line, read through a held descriptor of its file. */
interface HeldCounterLine {
  file: HeldCounterFile;
  key: string;
}

function heldLine(line: CounterLine): HeldCounterLine {
  return { file: new HeldCounterFile(line.file), key: line.key };
}
