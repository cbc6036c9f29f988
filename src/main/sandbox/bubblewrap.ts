/**
 * The Linux sandbox provider (SPEC §4.1): wraps a shell argv in bubblewrap (`bwrap`) so that
 * - `read-only`: the system is visible read-only; `/tmp` and `/dev/shm` are private tmpfs capped at
 *   `policy.tmpfsBytes`; `$HOME` is a private, empty tmpfs of the same size (deny by default) into
 *   which only the `homeAllowlist`, the workspace and the toolchains of the host's `PATH` are bound,
 *   read-only; nothing is writable but the private `/tmp` and `/dev/shm`;
 * - `workspace-write`: the same, plus the workspace root bound writable, and the private home writable
 *   (caches land there and vanish at close);
 * - both: no network (a private network namespace) unless `policy.network`; a private PID namespace
 *   whose processes see and signal only each other, and which the kernel kills as a whole when its
 *   init (bwrap) dies; a private cgroup namespace and no cgroupfs; the host's service sockets hidden;
 *   no credential store readable anywhere, by the denylist of `credential-stores.ts`.
 * - the policy's `readablePaths` (a dialect's per-session rc directory) bound read-only over all that.
 * The shell keeps its pty as controlling terminal (job control needs it); the engine probes it from
 * outside through the host's `/proc` by host pid, found from the namespace pid `$$` reports
 * (`proc-probe.ts`). What is left open is in docs/sandbox.md. Fails closed: a bwrap that is missing or
 * cannot run here rejects every confined mode with SANDBOX_UNAVAILABLE, never an unconfined argv.
 */
import { execFile } from 'node:child_process';
import { constants as fsConstants, statSync } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { cgroupMountPoints } from '../../shared/cgroup-mounts.js';
import {
  DEFAULT_HOME_ALLOWLIST,
  homeAllowlistProblem,
  storeContaining,
} from '../../shared/credential-stores.js';
import { describeError, TerminalError } from '../../shared/errors.js';
import type { SandboxPolicy, SandboxProvider } from '../../shared/sandbox.js';
import { broadWorkspace, isInside, refuseWritableFilesystemRoot } from '../../shared/workspace-scope.js';
import { MountRank, type MountStep, mountArguments, orderMounts, showsDirectory } from './mount-plan.js';
import { type ExistingPath, privateHomeBinds, storesInside } from './private-home.js';
import { type ToolchainEnvironment, type ToolchainPath, toolchainPaths } from './toolchains.js';

export { CREDENTIAL_STORES } from '../../shared/credential-stores.js';

/** Options of {@link createBubblewrapSandbox}. */
export interface BubblewrapOptions {
  /** The bwrap executable: a path, or a bare name looked up on the host's PATH (default `bwrap`). */
  bwrapPath?: string;
  /**
   * Absolute paths bound read-only over whatever the modes would make of them: e.g. `<workspace>/.git`
   * to keep history read-only inside a writable workspace, a host directory under `/tmp` that the
   * private `/tmp` would hide, or a directory of `$HOME` the private home would hide. Paths missing at
   * spawn time are skipped; credential stores inside them stay hidden.
   */
  extraReadOnlyPaths?: string[];
  /**
   * Absolute paths replaced by an empty read-only directory (a file: by `/dev/null`) in the confined
   * modes. Default {@link DEFAULT_HIDDEN_PATHS}; pass `[]` to hide none of those, or add your own.
   */
  hiddenPaths?: string[];
  /**
   * Absolute path of the home directory that is replaced by a private one. Default: the engine
   * process's home when the provider is created (`os.homedir()`: `$HOME`, else the passwd entry),
   * which is also the `HOME` a session inherits unless the spawn's `env` sets another.
   */
  home?: string;
  /**
   * The environment whose `PATH` (and `PYENV_ROOT`, `NVM_DIR`, `RUSTUP_HOME`, `CARGO_HOME`,
   * `ASDF_DATA_DIR`, `GOPATH`) decides which toolchains below `home` are bound into the private home.
   * Default: `process.env` when the provider is created, never a spawn's `env`.
   */
  toolchainEnv?: ToolchainEnvironment;
}

/**
 * Hidden by default: the runtime directories that hold the host's service sockets (docker, D-Bus,
 * systemd, the user's session bus). `connect()` to a unix socket is not a filesystem write, so a
 * read-only mount does not stop it, and any of those sockets is a way out of the sandbox.
 */
export const DEFAULT_HIDDEN_PATHS: readonly string[] = Object.freeze(['/run', '/var/run']);

/**
 * Size of each private tmpfs (`/tmp`, `/dev/shm`, `$HOME`) when the policy names none: SPEC §3
 * `tmpfsBytes`. A tmpfs is RAM; without a cap one `cat /dev/zero > /tmp/x` can take half the host's
 * memory.
 */
export const DEFAULT_TMPFS_BYTES = 256 * 1024 * 1024;

/** A bwrap that needs longer than this to start `/bin/sh` is wedged; the spawn must not hang on it. */
const PROBE_TIMEOUT_MS = 10_000;

/** Most of bwrap's complaint is in its first line; the rest of a long stderr adds nothing to an error. */
const PROBE_STDERR_LIMIT = 500;

/** Run by the one-time probe: exists on every Linux, does nothing, exits 0. */
const PROBE_COMMAND = ['/bin/sh', '-c', ':'];

/** Followed when the network is allowed so DNS keeps working if it points into a hidden `/run`. */
const RESOLV_CONF = '/etc/resolv.conf';

/** Where cgroupfs is mounted on every systemd-era Linux; other cgroup mounts are found in mountinfo. */
const CGROUP_MOUNT_DIR = '/sys/fs/cgroup';

/**
 * Namespace and privilege flags shared by every confined mode (and the probe). Deliberately absent:
 * - `--as-pid-1`: bwrap's own init stays pid 1 of the namespace (the shell is pid 2). A shell as init
 *   would be immune, from inside, to every signal it has no handler for (a script's `kill $$` would do
 *   nothing) and would inherit every orphan to reap; bwrap's init reaps them and carries
 *   `--die-with-parent` like the launcher.
 * - `--new-session`: it detaches the shell from the pty (`setsid`), which kills job control (`fg`,
 *   Ctrl-Z, `cannot set terminal process group`). The TIOCSTI injection it guards against only reaches
 *   the session's own pty, whose input is read by nothing but this same sandbox.
 */
const NAMESPACE_ARGS: readonly string[] = Object.freeze([
  // Own user namespace: sandboxed processes cannot ptrace, or read /proc/<pid>/{environ,mem,root} of,
  // host processes or other sandboxes; the engine, owner of the namespace, still probes them.
  '--unshare-user',
  // No nested user namespaces: they would hand capabilities (and kernel attack surface) to the sandbox.
  '--disable-userns',
  // The host's SysV shared memory, semaphores and POSIX message queues stay out of reach.
  '--unshare-ipc',
  // Own PID namespace: processes inside see (in the fresh /proc) and signal only the session's own
  // processes, never the engine, the host or another session. When its init, bwrap's pid 1, dies the
  // kernel SIGKILLs every process in it, so nothing the session started outlives it.
  '--unshare-pid',
  // Own cgroup namespace, rooted where the launcher put bwrap (the session's own cgroups: the
  // launcher joins them before it execs bwrap): /proc/self/cgroup reads `0::/`, never the engine's
  // path. The host's cgroupfs itself is hidden too (systemMounts), so neither names other sessions.
  '--unshare-cgroup',
  // bwrap's default, stated so a root engine never passes capabilities in: CAP_SYS_ADMIN alone could
  // remount every read-only bind writable.
  '--cap-drop',
  'ALL',
  // bwrap sets PDEATHSIG=SIGKILL on itself and on the namespace's init, so an engine that dies (even by
  // SIGKILL) takes the launcher, then the init, then the whole namespace with it. PDEATHSIG follows the
  // thread that forked bwrap: node-pty forks on the engine thread that owns the session, and a session
  // never outlives its thread.
  '--die-with-parent',
]);

/** Creates the bubblewrap sandbox provider. Throws INVALID_CONFIG for relative option paths. */
export function createBubblewrapSandbox(options: BubblewrapOptions = {}): SandboxProvider {
  return new BubblewrapSandbox(options);
}

/** See {@link createBubblewrapSandbox}. */
class BubblewrapSandbox implements SandboxProvider {
  readonly name = 'bubblewrap';
  private readonly bwrapPath: string;
  private readonly extraReadOnlyPaths: readonly string[];
  private readonly hiddenPaths: readonly string[];
  private readonly home: string;
  /** What the host's `PATH` needs below `home`, fixed when the provider is created. */
  private readonly toolchains: readonly ToolchainPath[];
  /** The probe's outcome (resolved bwrap path, or the SANDBOX_UNAVAILABLE error), shared by all calls. */
  private availability: Promise<string> | undefined;

  constructor(options: BubblewrapOptions) {
    this.bwrapPath = options.bwrapPath ?? 'bwrap';
    this.extraReadOnlyPaths = absolutePaths(options.extraReadOnlyPaths ?? [], 'extraReadOnlyPaths');
    this.hiddenPaths = absolutePaths(options.hiddenPaths ?? DEFAULT_HIDDEN_PATHS, 'hiddenPaths');
    const [home] = absolutePaths([options.home ?? homedir()], 'home');
    this.home = home!;
    const hostEnv: ToolchainEnvironment = options.toolchainEnv ?? process.env;
    this.toolchains = Object.freeze(toolchainPaths({ ...hostEnv }, this.home));
  }

  async confine(argv: string[], policy: SandboxPolicy): Promise<string[]> {
    if (!Array.isArray(argv) || argv.length === 0 || argv.some((arg) => typeof arg !== 'string')) {
      throw new TerminalError('INVALID_ARGUMENT', 'confine needs a non-empty argv of strings');
    }
    switch (policy.mode) {
      case 'danger-full-access':
        return [...argv];
      case 'read-only':
      case 'workspace-write':
        break;
      default:
        throw new TerminalError(
          'INVALID_ARGUMENT',
          `unknown sandbox mode ${JSON.stringify(policy.mode)}: use read-only, workspace-write or danger-full-access`,
        );
    }
    const workspace = await resolveWorkspace(policy.workspaceRoot);
    refuseWritableFilesystemRoot(policy.mode, workspace);
    const scope = await this.workspaceScope(workspace, policy);
    const tmpfsBytes = resolveTmpfsBytes(policy.tmpfsBytes);
    const readable = await resolveReadablePaths(policy.readablePaths);
    const allowlist = resolveHomeAllowlist(policy.homeAllowlist);
    // Memoized before the first await so concurrent first calls share one probe.
    this.availability ??= probeBubblewrap(this.bwrapPath);
    const bwrap = await this.availability;
    const mounts = orderMounts(
      await this.mountSteps({ workspace, scope, tmpfsBytes, readable, allowlist, policy }),
    );
    const chdir = policy.cwd === undefined ? [] : ['--chdir', await shownCwd(mounts, policy.cwd, policy)];
    const network = policy.network === true ? [] : ['--unshare-net'];
    return [bwrap, ...NAMESPACE_ARGS, ...network, ...mountArguments(mounts), ...chdir, '--', ...argv];
  }

  /**
   * How the workspace relates to the home: `bound` unless it is too broad and was not named (then
   * `read-only` binds nothing for it and `workspace-write` is refused); `coversHome` when it is `$HOME`
   * or above it and named explicitly, so it shows the home itself instead of the private one.
   */
  private async workspaceScope(
    workspace: string,
    policy: SandboxPolicy,
  ): Promise<{ bound: boolean; coversHome: boolean; realHome: string | undefined }> {
    const realHome = await realOrUndefined(this.home);
    const home = realHome ?? this.home;
    const store = isInside(home, workspace) ? storeContaining(path.relative(home, workspace)) : undefined;
    if (store !== undefined) {
      throw new TerminalError(
        'INVALID_ARGUMENT',
        `workspace root ${policy.workspaceRoot} is ${store === path.relative(home, workspace) ? '' : 'inside '}the ` +
          `credential store ~/${store}, which a confined session never sees: choose another workspace`,
      );
    }
    const broad = broadWorkspace(workspace, home);
    if (broad === undefined) return { bound: true, coversHome: false, realHome };
    if (policy.workspaceExplicit === false) {
      if (policy.mode === 'workspace-write') {
        throw new TerminalError(
          'INVALID_ARGUMENT',
          `workspace root ${policy.workspaceRoot} is ${broad} and was taken from where the host started, not ` +
            'named: it is not made writable. Start in a project directory, pass --workspace DIR (or name ' +
            'workspaceRoot explicitly), or use sandbox mode read-only',
        );
      }
      return { bound: false, coversHome: false, realHome };
    }
    return { bound: true, coversHome: isInside(workspace, home), realHome };
  }

  /** Every mount of the session, unordered. */
  private async mountSteps(plan: {
    workspace: string;
    scope: { bound: boolean; coversHome: boolean; realHome: string | undefined };
    tmpfsBytes: number;
    readable: readonly string[];
    allowlist: readonly string[];
    policy: SandboxPolicy;
  }): Promise<MountStep[]> {
    const { workspace, scope, tmpfsBytes, readable, allowlist, policy } = plan;
    const writable = policy.mode === 'workspace-write';
    const steps: MountStep[] = [...systemMounts(tmpfsBytes)];
    const hiddenDirs: string[] = [];
    for (const hidden of await existingRealPaths(this.hiddenPaths)) {
      steps.push(cover(hidden, MountRank.Hidden));
      if (hidden.isDirectory) hiddenDirs.push(hidden.path);
    }
    const home = scope.realHome;
    // A home of `/` would cover the whole system; a missing one holds nothing to hide.
    if (home !== undefined && home !== '/' && !scope.coversHome) {
      steps.push({
        target: home,
        rank: MountRank.PrivateHome,
        args: ['--size', String(tmpfsBytes), '--tmpfs', home],
        shows: { kind: 'empty' },
        seal: !writable,
      });
      const entries = [
        ...allowlist.map((entry) => ({ path: path.join(home, entry) })),
        ...this.toolchains.map((toolchain) => ({
          ...toolchain,
          path: rebase(toolchain.path, this.home, home),
        })),
      ];
      for (const bind of await privateHomeBinds(home, entries)) {
        steps.push({
          target: bind.target,
          rank: MountRank.HomeBind,
          args: ['--ro-bind', bind.source, bind.target],
          shows: { kind: 'bind', source: bind.source },
        });
      }
    }
    if (scope.bound) {
      steps.push({
        target: workspace,
        rank: MountRank.Workspace,
        args: [writable ? '--bind' : '--ro-bind', workspace, workspace],
        shows: { kind: 'bind', source: workspace },
      });
      for (const store of await storesInside(workspace, home ?? this.home)) {
        steps.push(cover(store, MountRank.StoreCover));
      }
    }
    if (policy.network === true) {
      const [resolv] = await existingRealPaths([RESOLV_CONF]);
      if (resolv !== undefined && hiddenDirs.some((dir) => isInside(dir, resolv.path))) {
        steps.push(readOnlyBind(resolv.path, MountRank.ReExposed));
      }
    }
    for (const target of readable) steps.push(readOnlyBind(target, MountRank.Readable));
    for (const extra of await existingRealPaths(this.extraReadOnlyPaths)) {
      // The denylist wins over an extra path too: a store named here is not shown.
      if (
        isInside(home ?? this.home, extra.path) &&
        storeContaining(path.relative(home ?? this.home, extra.path))
      )
        continue;
      steps.push({
        ...readOnlyBind(extra.path, MountRank.ExtraReadOnly),
        args: ['--ro-bind-try', extra.path, extra.path],
      });
      for (const store of await storesInside(extra.path, home ?? this.home)) {
        steps.push(cover(store, MountRank.StoreCover));
      }
    }
    return steps;
  }
}

/**
 * Mounts every confined mode starts from:
 * - `/` bound read-only. bwrap binds recursively and remounts each submount read-only, so the host's
 *   `/sys` arrives read-only too.
 * - a fresh procfs on `/proc`, showing the session's PID namespace only. Sealed read-only at the end:
 *   writable, it would let a sandbox whose uid 0 is the host's root write host-wide sysctls under
 *   `/proc/sys` (the kernel checks the uid there, not capabilities, and bwrap covers `/proc/sys` only
 *   when it looks writable to the caller).
 * - a fresh `/dev`: null, zero, full, random, urandom, tty, a private devpts (ptys created inside
 *   work; other host ptys are invisible) and `/dev/console` bound to the session's pty, which is the
 *   name `tty` reports. Disks and other host devices are unreachable. bwrap builds it on an uncapped
 *   tmpfs, so it is sealed read-only at the end; the device nodes and devpts are mounts of their own
 *   and stay writable.
 * - private tmpfs on `/tmp` and `/dev/shm`, each capped at `tmpfsBytes`: writable, empty, gone with
 *   the sandbox. A write past the cap fails with ENOSPC inside; the host is untouched.
 * - an empty read-only directory over `/sys/fs/cgroup` and every other cgroupfs mount: the cgroup tree
 *   names the engine (`agent-pty.<pid>.<start>`) and every other session, with their `cgroup.procs`.
 */
function systemMounts(tmpfsBytes: number): MountStep[] {
  const size = ['--size', String(tmpfsBytes)];
  const fresh = { kind: 'empty' } as const;
  return [
    {
      target: '/',
      rank: MountRank.System,
      args: ['--ro-bind', '/', '/'],
      shows: { kind: 'bind', source: '/' },
    },
    { target: '/proc', rank: MountRank.System, args: ['--proc', '/proc'], shows: fresh, seal: true },
    { target: '/dev', rank: MountRank.System, args: ['--dev', '/dev'], shows: fresh, seal: true },
    { target: '/tmp', rank: MountRank.System, args: [...size, '--tmpfs', '/tmp'], shows: fresh },
    { target: '/dev/shm', rank: MountRank.System, args: [...size, '--tmpfs', '/dev/shm'], shows: fresh },
    ...cgroupMountPointsToHide().map((dir) => cover({ path: dir, isDirectory: true }, MountRank.System)),
  ];
}

/**
 * What hides cgroupfs: `/sys/fs/cgroup` (which holds every hierarchy on a systemd host, under a tmpfs
 * whose entries name the controllers) and any cgroup mount outside it.
 */
function cgroupMountPointsToHide(): string[] {
  const points = statSync(CGROUP_MOUNT_DIR, { throwIfNoEntry: false })?.isDirectory()
    ? [CGROUP_MOUNT_DIR]
    : [];
  for (const point of cgroupMountPoints()) {
    if (!points.some((known) => isInside(known, point))) points.push(point);
  }
  return points;
}

/** A step that hides `hidden`: an empty read-only directory, or `/dev/null` over a file. */
function cover(hidden: ExistingPath, rank: MountRank): MountStep {
  return hidden.isDirectory
    ? { target: hidden.path, rank, args: ['--tmpfs', hidden.path], shows: { kind: 'empty' }, seal: true }
    : { target: hidden.path, rank, args: ['--ro-bind', '/dev/null', hidden.path], shows: { kind: 'file' } };
}

/** A read-only bind of a host path at the same path. */
function readOnlyBind(target: string, rank: MountRank): MountStep {
  return { target, rank, args: ['--ro-bind', target, target], shows: { kind: 'bind', source: target } };
}

/** `target`, below `from`, moved below `to` (the home as configured vs. its real path). */
function rebase(target: string, from: string, to: string): string {
  return from === to ? target : path.join(to, path.relative(from, target));
}

/**
 * The real path of `policy.cwd` when the sandbox shows it as a directory; else INVALID_ARGUMENT with
 * the same message whether it is hidden or missing, so the answer reveals nothing of the host.
 */
async function shownCwd(mounts: readonly MountStep[], cwd: string, policy: SandboxPolicy): Promise<string> {
  // A relative cwd is the host process's, as node-pty would take it.
  const real = typeof cwd === 'string' && cwd !== '' ? await realOrUndefined(path.resolve(cwd)) : undefined;
  if (real !== undefined && showsDirectory(mounts, real)) return real;
  throw new TerminalError(
    'INVALID_ARGUMENT',
    `cwd ${cwd} is not a directory this sandbox shows: it shows the workspace ${policy.workspaceRoot}, ` +
      'the allowed home paths and the system',
  );
}

/** The policy's `homeAllowlist`, or the default; anything but relative paths outside the stores is INVALID_ARGUMENT. */
function resolveHomeAllowlist(allowlist: unknown): readonly string[] {
  if (allowlist === undefined) return DEFAULT_HOME_ALLOWLIST;
  if (!Array.isArray(allowlist) || allowlist.some((entry) => typeof entry !== 'string')) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      'sandbox homeAllowlist must be an array of paths relative to $HOME',
    );
  }
  for (const entry of allowlist as string[]) {
    const problem = homeAllowlistProblem(entry);
    if (problem !== undefined)
      throw new TerminalError('INVALID_ARGUMENT', `sandbox homeAllowlist: ${problem}`);
  }
  return allowlist as string[];
}

/** The real path of `candidate`, or undefined when it does not exist. */
async function realOrUndefined(candidate: string): Promise<string | undefined> {
  try {
    return await realpath(candidate);
  } catch (_missing) {
    return undefined;
  }
}

/** The policy's tmpfs size, or the default; anything but a positive safe integer is INVALID_ARGUMENT. */
function resolveTmpfsBytes(tmpfsBytes: unknown): number {
  if (tmpfsBytes === undefined) return DEFAULT_TMPFS_BYTES;
  if (typeof tmpfsBytes !== 'number' || !Number.isSafeInteger(tmpfsBytes) || tmpfsBytes <= 0) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      `sandbox tmpfsBytes must be a positive integer (bytes), got ${JSON.stringify(tmpfsBytes)}`,
    );
  }
  return tmpfsBytes;
}

/**
 * Resolves the bwrap executable and proves it can build a sandbox here (same namespaces as a real
 * confine). Resolves to the absolute path, so the spawned argv does not depend on the shell's PATH.
 */
async function probeBubblewrap(bwrapPath: string): Promise<string> {
  const resolved = await locateExecutable(bwrapPath);
  if (resolved === undefined) {
    const where = bwrapPath.includes('/') ? `at ${bwrapPath}` : `as "${bwrapPath}" on the PATH`;
    throw new TerminalError(
      'SANDBOX_UNAVAILABLE',
      `bubblewrap was not found ${where}, so the read-only and workspace-write sandbox modes cannot be ` +
        'enforced: install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) ' +
        'or use sandbox mode danger-full-access to run unconfined',
    );
  }
  const probeArgs = [
    ...NAMESPACE_ARGS,
    '--unshare-net',
    ...mountArguments(orderMounts(systemMounts(DEFAULT_TMPFS_BYTES))),
    '--',
    ...PROBE_COMMAND,
  ];
  await new Promise<void>((resolve, reject) => {
    execFile(resolved, probeArgs, { timeout: PROBE_TIMEOUT_MS }, (error, _stdout, stderr) => {
      if (error === null) {
        resolve();
        return;
      }
      const complaint = String(stderr).trim().slice(0, PROBE_STDERR_LIMIT) || describeError(error);
      reject(
        new TerminalError(
          'SANDBOX_UNAVAILABLE',
          `bubblewrap at ${resolved} cannot create a sandbox on this machine (${complaint}). Usual causes: ` +
            'unprivileged user namespaces are disabled (sysctl user.max_user_namespaces, ' +
            'kernel.unprivileged_userns_clone, or kernel.apparmor_restrict_unprivileged_userns on Ubuntu ' +
            '24.04+), a container runtime forbids new namespaces or a fresh /proc, or bubblewrap is older ' +
            'than 0.7.0 or installed setuid (no --size). Allow them, or use sandbox mode ' +
            'danger-full-access to run unconfined',
          { cause: error },
        ),
      );
    });
  });
  return resolved;
}

/** The absolute path of an executable: `name` itself when it has a slash, else the first PATH match. */
async function locateExecutable(name: string): Promise<string | undefined> {
  const candidates = name.includes('/')
    ? [path.resolve(name)]
    : (process.env.PATH ?? '')
        .split(path.delimiter)
        .filter((dir) => path.isAbsolute(dir))
        .map((dir) => path.join(dir, name));
  for (const candidate of candidates) {
    try {
      await access(candidate, fsConstants.X_OK);
      if ((await stat(candidate)).isFile()) return candidate;
    } catch (_notHereOrNotExecutable) {
      // Try the next candidate; none left means "not found".
    }
  }
  return undefined;
}

/** The workspace's real path (bwrap binds real paths; symlinks still resolve inside). */
async function resolveWorkspace(workspaceRoot: unknown): Promise<string> {
  if (typeof workspaceRoot !== 'string' || !path.isAbsolute(workspaceRoot)) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      `sandbox workspaceRoot must be an absolute path, got ${JSON.stringify(workspaceRoot)}`,
    );
  }
  let real: string;
  try {
    real = await realpath(workspaceRoot);
  } catch (error) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      `sandbox workspaceRoot ${workspaceRoot} does not exist: create it or choose an existing directory`,
      { cause: error },
    );
  }
  if (!(await stat(real)).isDirectory()) {
    throw new TerminalError('INVALID_ARGUMENT', `sandbox workspaceRoot ${workspaceRoot} is not a directory`);
  }
  return real;
}

/** Real paths of those of `paths` that exist now, deduplicated (`/var/run` is usually `/run`). */
async function existingRealPaths(
  paths: readonly string[],
): Promise<Array<{ path: string; isDirectory: boolean }>> {
  const found = new Map<string, boolean>();
  for (const candidate of paths) {
    try {
      const real = await realpath(candidate);
      found.set(real, (await stat(real)).isDirectory());
    } catch (_missing) {
      // Nothing there to hide or protect.
    }
  }
  return [...found].map(([real, isDirectory]) => ({ path: real, isDirectory }));
}

/**
 * The policy's `readablePaths` as real paths: each must be an absolute path that exists, else
 * INVALID_ARGUMENT (a shell that cannot read its startup files would start without its prompt marker).
 */
async function resolveReadablePaths(paths: unknown): Promise<string[]> {
  if (paths === undefined) return [];
  if (!Array.isArray(paths)) {
    throw new TerminalError('INVALID_ARGUMENT', 'sandbox readablePaths must be an array of absolute paths');
  }
  const resolved: string[] = [];
  for (const candidate of paths) {
    if (typeof candidate !== 'string' || !path.isAbsolute(candidate)) {
      throw new TerminalError(
        'INVALID_ARGUMENT',
        `sandbox readablePaths must hold absolute paths, got ${JSON.stringify(candidate)}`,
      );
    }
    try {
      resolved.push(await realpath(candidate));
    } catch (error) {
      throw new TerminalError('INVALID_ARGUMENT', `sandbox readable path ${candidate} does not exist`, {
        cause: error,
      });
    }
  }
  return resolved;
}

/** Validates option paths at creation, so a typo fails at load rather than at the first spawn. */
function absolutePaths(paths: readonly string[], field: string): readonly string[] {
  for (const candidate of paths) {
    if (typeof candidate !== 'string' || !path.isAbsolute(candidate)) {
      throw new TerminalError(
        'INVALID_CONFIG',
        `invalid bubblewrap options: ${field}: must hold absolute paths, got ${JSON.stringify(candidate)}`,
      );
    }
  }
  return Object.freeze(paths.map((candidate) => path.normalize(candidate)));
}
