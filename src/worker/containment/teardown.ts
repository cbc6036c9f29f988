/**
 * Process-tree teardown of one session (SPEC §4.6): everything under the pty child dies, the pty
 * child last (or all at once, by the container kill), and nothing outside the child's tree or session (or its cgroup) is ever signalled.
 *
 * Sequence:
 * 1. Freeze the root (SIGSTOP) so a shell running a loop cannot replace killed children while the
 *    teardown runs; a stopped root also cannot reap, which is fine (zombies count as dead).
 * 2. Capture the tree: descendants of the root, plus — when the root leads its own session, as
 *    node-pty's forkpty makes it — every process of that session (catches re-parented orphans such
 *    as `nohup cmd &` whose parent already exited). Identity = pid + start time.
 * 3. SIGTERM every captured process (SIGCONT the stopped ones so a handler can run), then wait up to
 *    `graceMs`, polling every few ms, until each is gone or a zombie. A process that ignored SIGTERM
 *    (SIG_IGN before and after the send: the kernel discarded the signal) is not waited for — an
 *    interactive bash inside a sandbox is such a process, and waiting for it would turn every close
 *    into the slow path.
 * 3a. With a container (the session's cgroup, SPEC §4.6): freeze it, `cgroup.kill`, wait until it is
 *    empty. This is what kills a descendant that left the tree and the session (a daemon started in a
 *    SIGTERM trap during step 3, `setsid -f`); the steps below then find nothing left to kill.
 * 4. SIGKILL, in rounds until nothing is left: the union of captured survivors and a fresh scan
 *    (re-parenting cannot hide a process; children forked during the grace are found). Verify every
 *    identity is gone or a zombie, else throw CLEANUP_FAILED naming the survivors.
 * 5. SIGKILL the root (an interactive bash ignores SIGTERM; a stopped one could not handle SIGHUP)
 *    and wait until it is a zombie or gone.
 * 6. Sweep the session once more (a zombie or reaped leader still names it): whatever the root
 *    forked before the freeze took hold dies too.
 * On failure the root is continued (SIGCONT) so the shell is as it was and a retry starts afresh.
 *
 * Every signal goes to one pid after re-reading its stat and checking the start time, so a pid
 * reused by an unrelated process is never signalled — except in the microseconds between that check
 * and kill(2), which Node cannot close (no pidfd_send_signal); reuse needs the old process to be
 * reaped and the pid space to wrap in that window. Process groups are never signalled.
 */
import { performance } from 'node:perf_hooks';
import { TerminalError } from '../../shared/errors.js';
import { delay } from '../../shared/lifecycle.js';
import { identityFromStat, type ProcessIdentity, type ProcStat } from '../../shared/proc-stat.js';
import {
  blockedPendingSignals,
  descendantsOf,
  ignoredSignals,
  isAlive,
  type Liveness,
  livenessOf,
  processesInSession,
  readProcStat,
} from '../proc/proc-probe.js';
import { inTurn } from './thread-turns.js';

/** Options of {@link teardownProcessTree}. */
export interface TeardownOptions {
  /** SIGTERM → SIGKILL grace in ms (config `disposeGraceMs`). */
  graceMs: number;
  /** Signal sender, injectable for fault tests; default `process.kill`. ESRCH is ignored either way. */
  kill?: (pid: number, signal: NodeJS.Signals) => void;
  /** How long SIGKILLed processes may take to die before teardown fails (default 2 000 ms). */
  verifyTimeoutMs?: number;
  /**
   * Kills the session's container (its cgroup: freeze, `cgroup.kill`, wait until empty), run right
   * after the SIGTERM grace. The SIGKILL rounds that follow then only verify; they still cover a
   * session without a container.
   */
  killContainer?: () => Promise<void>;
}

/** What a teardown did. */
export interface TeardownReport {
  /** Identities captured before the first signal (root excluded): the host-exit guard's list. */
  captured: ProcessIdentity[];
  /** Processes that were sent SIGTERM. */
  terminated: number;
  /** Processes that were sent SIGKILL (the root included when it was alive). */
  killed: number;
  /** Wall time of the whole teardown. */
  elapsedMs: number;
}

/**
 * Poll period while waiting for deaths: short, because the normal close must take well under 200 ms.
 * Also the longest period of cgroup.ts's wait for a killed cgroup to empty.
 */
export const DEATH_POLL_MS = 5;
/** Bound on waiting for the root to stop after SIGSTOP (normally tens of µs). */
const FREEZE_WAIT_MS = 100;
/** SIGKILL takes effect within ms unless a process is stuck in uninterruptible sleep (D): then fail. */
const DEFAULT_VERIFY_TIMEOUT_MS = 2_000;
/**
 * How long a process may keep a delivered SIGTERM blocked and pending before teardown stops waiting
 * for it: far longer than a critical section, far shorter than the grace.
 */
const BLOCKED_TERM_WAIT_MS = 100;
/** Bit of SIGTERM (15) in a `SigIgn` mask (bit n-1 is signal n). */
const SIGTERM_MASK = 1n << 14n;

/**
 * Tears down everything under the pty child `root` (root included, killed last). Throws
 * TerminalError('CLEANUP_FAILED') listing survivors when verification fails; safe to call again
 * (a retry recaptures from the live process table).
 */
export async function teardownProcessTree(
  root: ProcessIdentity,
  options: TeardownOptions,
): Promise<TeardownReport> {
  const started = performance.now();
  const signals = new Signaller(options.kill ?? defaultKill);
  const verifyTimeoutMs = options.verifyTimeoutMs ?? DEFAULT_VERIFY_TIMEOUT_MS;
  const frozen = signals.send(root, 'SIGSTOP');
  try {
    // kill(2) only queues SIGSTOP: the root stops when next scheduled. Capture after it has, or it
    // could fork past the capture. A root stuck in D state does not stop: go on after the bound.
    if (frozen) await pollUntil(() => stoppedOrDead(root), FREEZE_WAIT_MS, 1);
    // Scans of /proc go through the thread's turns (thread-turns.ts): hundreds of closes at once
    // must not run hundreds of scans back to back.
    const captured = await inTurn(() => captureTree(root));
    const terminated = await terminate(captured, signals, options.graceMs);
    await options.killContainer?.();
    const killed = await killSurvivors(root, captured, signals, verifyTimeoutMs);
    const rootKilled = await stopRoot(root, signals, verifyTimeoutMs);
    // Last sweep of the session: anything the root forked before it stopped (or before it died, if
    // the freeze could not take) and that no scan saw yet.
    const stragglers = await killSurvivors(root, [], signals, verifyTimeoutMs);
    return {
      captured: captured.map(identityFromStat),
      terminated,
      killed: killed + stragglers + (rootKilled ? 1 : 0),
      elapsedMs: performance.now() - started,
    };
  } catch (error) {
    // Leave a live root as it was before this attempt, so a retry (or the shell) can go on.
    if (frozen) signals.send(root, 'SIGCONT');
    throw error;
  }
}

/** Sends signals to identities, re-checking each identity right before its kill(2). */
class Signaller {
  /** Failures other than ESRCH (e.g. EPERM), reported as the cause of CLEANUP_FAILED. */
  readonly errors: unknown[] = [];

  constructor(private readonly kill: (pid: number, signal: NodeJS.Signals) => void) {}

  /** True when the signal was handed to the live process `target`. */
  send(target: ProcessIdentity, signal: NodeJS.Signals): boolean {
    // Never ourselves, init or "every process" (pid ≤ 0 would address groups): belt and braces.
    if (target.pid <= 1 || target.pid === process.pid) return false;
    if (isAlive(target) !== 'alive') return false;
    try {
      this.kill(target.pid, signal);
      return true;
    } catch (error) {
      // ESRCH: it exited (and was reaped) after the identity check: nothing to do.
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') this.errors.push(error);
      return false;
    }
  }
}

/** True once `root` is stopped (job-control or tracing stop), a zombie, or gone. */
function stoppedOrDead(root: ProcessIdentity): boolean {
  const stat = readProcStat(root.pid);
  return livenessOf(root, stat) !== 'alive' || stat!.state === 'T' || stat!.state === 't';
}

/** `process.kill` as a plain (pid, signal) sender. */
function defaultKill(pid: number, signal: NodeJS.Signals): void {
  process.kill(pid, signal);
}

/**
 * The live (non-zombie) processes of root's tree and, when root leads a session, of that session;
 * parents before children, root excluded.
 */
function captureTree(root: ProcessIdentity): ProcStat[] {
  const rootStat = readProcStat(root.pid);
  const rootLiveness = livenessOf(root, rootStat);
  const found = new Map<number, ProcStat>();
  if (rootLiveness !== 'gone') {
    for (const stat of descendantsOf(root.pid)) found.set(stat.pid, stat);
    // The walk trusted root.pid; if root died and its pid was reused meanwhile, the walk may have
    // listed a stranger's children. Discard it then (the session scan below still applies).
    if (livenessOf(root, readProcStat(root.pid)) === 'gone') found.clear();
  }
  if (ownsSession(root, rootLiveness, rootStat)) {
    for (const stat of processesInSession(root.pid)) {
      if (stat.startTime >= root.startTime) found.set(stat.pid, stat);
    }
  }
  found.delete(root.pid);
  return [...found.values()].filter((stat) => stat.state !== 'Z' && stat.state !== 'X');
}

/**
 * Whether the processes with session id `root.pid` are root's session. True when root (alive or a
 * zombie) is its session's leader. When root is gone: true only if no live process holds its pid
 * now — the kernel keeps a pid allocated while any process still uses it as a session id, so
 * session members can only be root's own (or, after a full pid wrap-around during which the pid was
 * reused by another session leader that exited too, that leader's: the start-time filter in the
 * caller narrows this further). Never the launcher's session: that one's id is not root's pid.
 */
function ownsSession(root: ProcessIdentity, liveness: Liveness, rootStat: ProcStat | undefined): boolean {
  if (liveness !== 'gone') return rootStat!.session === root.pid;
  return rootStat === undefined;
}

/** SIGTERM phase: signals `captured`, waits up to `graceMs` for them to die; returns how many were signalled. */
async function terminate(captured: ProcStat[], signals: Signaller, graceMs: number): Promise<number> {
  let terminated = 0;
  const awaited: ProcessIdentity[] = [];
  for (const stat of captured) {
    const identity = identityFromStat(stat);
    const ignoredBefore = ignoresTerm(stat.pid);
    if (!signals.send(identity, 'SIGTERM')) continue;
    terminated++;
    // SIG_IGN at the send discards the signal; checking before and after rules out a handler that
    // switched to SIG_IGN to shut down undisturbed (that process is dying and is waited for).
    if (ignoredBefore && ignoresTerm(stat.pid)) continue;
    // A stopped process with a SIGTERM handler runs it only once continued.
    if (stat.state === 'T') signals.send(identity, 'SIGCONT');
    awaited.push(identity);
  }
  // A process that keeps SIGTERM blocked and pending is not acting on it (bash between attempts at a
  // fork its pids limit refused, in a fork bomb): it is no longer waited for once that lasted a while.
  const blockedSince = new Map<ProcessIdentity, number>();
  await pollUntil(() => {
    const now = performance.now();
    for (let i = awaited.length - 1; i >= 0; i--) {
      const identity = awaited[i]!;
      if (isAlive(identity) !== 'alive') continue;
      if (!termBlockedPending(identity.pid)) {
        blockedSince.delete(identity);
        continue;
      }
      const since = blockedSince.get(identity) ?? now;
      blockedSince.set(identity, since);
      if (now - since >= BLOCKED_TERM_WAIT_MS) awaited.splice(i, 1);
    }
    return awaited.every((identity) => isAlive(identity) !== 'alive');
  }, graceMs);
  return terminated;
}

/** Whether `pid` holds SIGTERM blocked and pending (unknown counts as no: we then wait). */
function termBlockedPending(pid: number): boolean {
  const pending = blockedPendingSignals(pid);
  return pending !== undefined && (pending & SIGTERM_MASK) !== 0n;
}

/** Whether `pid` has SIGTERM set to SIG_IGN (unknown counts as not ignoring: we then wait). */
function ignoresTerm(pid: number): boolean {
  const ignored = ignoredSignals(pid);
  return ignored !== undefined && (ignored & SIGTERM_MASK) !== 0n;
}

/**
 * SIGKILL phase: in rounds, kills every live identity of `captured` plus a fresh capture, until a
 * round finds none alive. Returns how many distinct processes were sent SIGKILL.
 */
async function killSurvivors(
  root: ProcessIdentity,
  captured: ProcStat[],
  signals: Signaller,
  verifyTimeoutMs: number,
): Promise<number> {
  const deadline = performance.now() + verifyTimeoutMs;
  const known = new Map<string, ProcStat>();
  const killed = new Set<string>();
  for (const stat of captured) known.set(identityKey(stat), stat);
  for (;;) {
    for (const stat of await inTurn(() => captureTree(root))) known.set(identityKey(stat), stat);
    const alive = [...known.values()].filter((stat) => isAlive(identityFromStat(stat)) === 'alive');
    if (alive.length === 0) return killed.size;
    if (performance.now() >= deadline) throw cleanupFailed(root, alive, signals.errors);
    for (const stat of alive) {
      if (signals.send(identityFromStat(stat), 'SIGKILL')) killed.add(identityKey(stat));
    }
    await delay('teardown death poll', DEATH_POLL_MS);
  }
}

/** Kills the root and waits until it is a zombie or gone; true when it had to be killed. */
async function stopRoot(
  root: ProcessIdentity,
  signals: Signaller,
  verifyTimeoutMs: number,
): Promise<boolean> {
  const killed = signals.send(root, 'SIGKILL');
  const stopped = await pollUntil(() => isAlive(root) !== 'alive', verifyTimeoutMs);
  if (!stopped) {
    const stat = readProcStat(root.pid);
    throw cleanupFailed(root, stat === undefined ? [] : [stat], signals.errors);
  }
  return killed;
}

/** Polls `done` every `periodMs` until it holds (true) or `timeoutMs` passed (false). */
async function pollUntil(done: () => boolean, timeoutMs: number, periodMs = DEATH_POLL_MS): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (done()) return true;
    const remaining = deadline - performance.now();
    if (remaining <= 0) return false;
    await delay('teardown poll', Math.min(periodMs, remaining));
  }
}

/** The CLEANUP_FAILED error naming every survivor. */
function cleanupFailed(root: ProcessIdentity, survivors: ProcStat[], errors: unknown[]): TerminalError {
  const names = survivors.map((stat) => `${stat.pid} (${stat.comm})`).join(', ');
  const cause = errors.length === 0 ? undefined : new AggregateError(errors, 'signal delivery failed');
  return new TerminalError(
    'CLEANUP_FAILED',
    `teardown of pid ${root.pid} left ${survivors.length} process(es) alive: ${names}`,
    { cause },
  );
}

/** Map key of an identity. */
function identityKey(stat: ProcessIdentity): string {
  return `${stat.pid}:${stat.startTime}`;
}
