/**
 * The Linux sandbox provider (SPEC §4.1): wraps a shell argv in bubblewrap (`bwrap`) so that
 * - `read-only`: the whole filesystem is visible read-only, `/tmp` and `/dev/shm` are private tmpfs
 *   capped at `policy.tmpfsBytes`, nothing else is writable (the workspace neither, nor `/dev`);
 * - `workspace-write`: the same, plus the workspace root bound writable;
 * - both: no network (a private network namespace) unless `policy.network`; a private PID namespace
 *   whose processes see and signal only each other, and which the kernel kills as a whole when its
 *   init (bwrap) dies; the host's service sockets and the user's credential stores hidden.
 * - the policy's `readablePaths` (a dialect's per-session rc directory) bound read-only over all that.
 * The shell keeps its pty as controlling terminal (job control needs it); the engine probes it from
 * outside through the host's `/proc` by host pid, found from the namespace pid `$$` reports
 * (`proc-probe.ts`). What is left open is in docs/sandbox.md. Fails closed: a bwrap that is missing or
 * cannot run here rejects every confined mode with SANDBOX_UNAVAILABLE, never an unconfined argv.
 */
import { execFile } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { describeError, TerminalError } from '../../shared/errors.js';
import type { SandboxPolicy, SandboxProvider } from '../../shared/sandbox.js';

/** Options of {@link createBubblewrapSandbox}. */
export interface BubblewrapOptions {
  /** The bwrap executable: a path, or a bare name looked up on the host's PATH (default `bwrap`). */
  bwrapPath?: string;
  /**
   * Absolute paths bound read-only over whatever the modes would make of them: e.g. `<workspace>/.git`
   * to keep history read-only inside a writable workspace, or a host directory under `/tmp` that the
   * private `/tmp` would hide. Paths missing at spawn time are skipped.
   */
  extraReadOnlyPaths?: string[];
  /**
   * Absolute paths replaced by an empty read-only directory (a file: by `/dev/null`) in the confined
   * modes. Default {@link DEFAULT_HIDDEN_PATHS}; pass `[]` to hide none of those, or add your own.
   * The credential stores under `home` are hidden on top of these (see `hideCredentialStores`).
   */
  hiddenPaths?: string[];
  /**
   * Hide the usual credential stores under `home` ({@link CREDENTIAL_STORES}) the same way, those that
   * exist at spawn time. Default true; false shows them (read-only) like the rest of `home`.
   */
  hideCredentialStores?: boolean;
  /**
   * Absolute path of the home directory whose credential stores are hidden. Default: the engine
   * process's home when the provider is created (`os.homedir()`: `$HOME`, else the passwd entry),
   * which is also the `HOME` a session inherits unless the spawn's `env` sets another.
   */
  home?: string;
}

/**
 * Hidden by default: the runtime directories that hold the host's service sockets (docker, D-Bus,
 * systemd, the user's session bus). `connect()` to a unix socket is not a filesystem write, so a
 * read-only mount does not stop it, and any of those sockets is a way out of the sandbox.
 */
export const DEFAULT_HIDDEN_PATHS: readonly string[] = Object.freeze(['/run', '/var/run']);

/**
 * Hidden by default, relative to the home directory: where common tools keep keys, tokens and
 * passwords (ssh, AWS, Azure, Google Cloud, Kubernetes, Docker registries, GnuPG, netrc, npm, PyPI,
 * git's credential store, the GitHub CLI). Reads are not otherwise confined, and whatever a command
 * prints reaches the model.
 */
export const CREDENTIAL_STORES: readonly string[] = Object.freeze([
  '.ssh',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.kube',
  '.docker',
  '.gnupg',
  '.netrc',
  '.npmrc',
  '.pypirc',
  '.git-credentials',
  '.config/gh',
]);

/**
 * Size of each private tmpfs (`/tmp`, `/dev/shm`) when the policy names none: SPEC §3 `tmpfsBytes`.
 * A tmpfs is RAM; without a cap one `cat /dev/zero > /tmp/x` can take half the host's memory.
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

/** Ordering of mounts that share a depth: later ranks are mounted over earlier ones. */
const MountRank = {
  System: 0,
  Hidden: 1,
  Workspace: 2,
  ReExposed: 3,
  Readable: 4,
  ExtraReadOnly: 5,
} as const;

/** One of {@link MountRank}. */
type MountRank = (typeof MountRank)[keyof typeof MountRank];

/** One bwrap mount operation, placed by the depth of its target. */
interface MountStep {
  target: string;
  rank: MountRank;
  args: string[];
}

/** Creates the bubblewrap sandbox provider. Throws INVALID_CONFIG for relative option paths. */
export function createBubblewrapSandbox(options: BubblewrapOptions = {}): SandboxProvider {
  return new BubblewrapSandbox(options);
}

/** See {@link createBubblewrapSandbox}. */
class BubblewrapSandbox implements SandboxProvider {
  readonly name = 'bubblewrap';
  private readonly bwrapPath: string;
  private readonly extraReadOnlyPaths: readonly string[];
  /** Default hidden paths plus, unless switched off, the credential stores under the home directory. */
  private readonly hiddenPaths: readonly string[];
  /** The probe's outcome (resolved bwrap path, or the SANDBOX_UNAVAILABLE error), shared by all calls. */
  private availability: Promise<string> | undefined;

  constructor(options: BubblewrapOptions) {
    this.bwrapPath = options.bwrapPath ?? 'bwrap';
    this.extraReadOnlyPaths = absolutePaths(options.extraReadOnlyPaths ?? [], 'extraReadOnlyPaths');
    const hidden = absolutePaths(options.hiddenPaths ?? DEFAULT_HIDDEN_PATHS, 'hiddenPaths');
    const [home] = absolutePaths([options.home ?? homedir()], 'home');
    const stores = options.hideCredentialStores === false ? [] : CREDENTIAL_STORES;
    this.hiddenPaths = Object.freeze([...hidden, ...stores.map((store) => path.join(home!, store))]);
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
    const tmpfsBytes = resolveTmpfsBytes(policy.tmpfsBytes);
    const readable = await resolveReadablePaths(policy.readablePaths);
    // Memoized before the first await so concurrent first calls share one probe.
    this.availability ??= probeBubblewrap(this.bwrapPath);
    const bwrap = await this.availability;
    const mounts = await this.mountArgs(workspace, tmpfsBytes, readable, policy);
    const network = policy.network === true ? [] : ['--unshare-net'];
    return [bwrap, ...NAMESPACE_ARGS, ...network, ...mounts, '--', ...argv];
  }

  /** The mount arguments, parents before children so no later mount is hidden by an earlier one. */
  private async mountArgs(
    workspace: string,
    tmpfsBytes: number,
    readable: readonly string[],
    policy: SandboxPolicy,
  ): Promise<string[]> {
    const steps: MountStep[] = [...systemMounts(tmpfsBytes)];
    const hiddenDirs: string[] = [];
    for (const hidden of await existingRealPaths(this.hiddenPaths)) {
      if (hidden.isDirectory) {
        hiddenDirs.push(hidden.path);
        steps.push({ target: hidden.path, rank: MountRank.Hidden, args: ['--tmpfs', hidden.path] });
      } else {
        steps.push({
          target: hidden.path,
          rank: MountRank.Hidden,
          args: ['--ro-bind', '/dev/null', hidden.path],
        });
      }
    }
    const bind = policy.mode === 'workspace-write' ? '--bind' : '--ro-bind';
    steps.push({ target: workspace, rank: MountRank.Workspace, args: [bind, workspace, workspace] });
    if (policy.network === true) {
      const [resolv] = await existingRealPaths([RESOLV_CONF]);
      if (resolv !== undefined && hiddenDirs.some((dir) => isInside(dir, resolv.path))) {
        steps.push({
          target: resolv.path,
          rank: MountRank.ReExposed,
          args: ['--ro-bind', resolv.path, resolv.path],
        });
      }
    }
    for (const target of readable) {
      steps.push({ target, rank: MountRank.Readable, args: ['--ro-bind', target, target] });
    }
    for (const extra of await existingRealPaths(this.extraReadOnlyPaths)) {
      steps.push({
        target: extra.path,
        rank: MountRank.ExtraReadOnly,
        args: ['--ro-bind-try', extra.path, extra.path],
      });
    }
    // Array.prototype.sort is stable, so equal (depth, rank) keep their insertion order.
    steps.sort((a, b) => depthOf(a.target) - depthOf(b.target) || a.rank - b.rank);
    // Last, once every mount point inside them exists: /proc, /dev and the hiding tmpfs become read-only.
    const seal = [...SEALED_SYSTEM_DIRS, ...hiddenDirs].flatMap((dir) => ['--remount-ro', dir]);
    return [...steps.flatMap((step) => step.args), ...seal];
  }
}

/**
 * Mounts every confined mode starts from:
 * - `/` bound read-only. bwrap binds recursively and remounts each submount read-only, so the host's
 *   `/sys` arrives read-only too.
 * - a fresh procfs on `/proc`, showing the session's PID namespace only. Sealed read-only at the end
 *   ({@link SEALED_SYSTEM_DIRS}): writable, it would let a sandbox whose uid 0 is the host's root write
 *   host-wide sysctls under `/proc/sys` (the kernel checks the uid there, not capabilities, and bwrap
 *   covers `/proc/sys` only when it looks writable to the caller).
 * - a fresh `/dev`: null, zero, full, random, urandom, tty, a private devpts (ptys created inside
 *   work; other host ptys are invisible) and `/dev/console` bound to the session's pty, which is the
 *   name `tty` reports. Disks and other host devices are unreachable. bwrap builds it on an uncapped
 *   tmpfs, so it is sealed read-only at the end; the device nodes and devpts are mounts of their own
 *   and stay writable.
 * - private tmpfs on `/tmp` and `/dev/shm`, each capped at `tmpfsBytes`: writable, empty, gone with
 *   the sandbox. A write past the cap fails with ENOSPC inside; the host is untouched.
 */
function systemMounts(tmpfsBytes: number): MountStep[] {
  const size = ['--size', String(tmpfsBytes)];
  return [
    { target: '/', rank: MountRank.System, args: ['--ro-bind', '/', '/'] },
    { target: '/proc', rank: MountRank.System, args: ['--proc', '/proc'] },
    { target: '/dev', rank: MountRank.System, args: ['--dev', '/dev'] },
    { target: '/tmp', rank: MountRank.System, args: [...size, '--tmpfs', '/tmp'] },
    { target: '/dev/shm', rank: MountRank.System, args: [...size, '--tmpfs', '/dev/shm'] },
  ];
}

/**
 * Remounted read-only once everything inside them is mounted. bwrap's `--remount-ro` does not recurse,
 * so the mounts below (`/dev/pts`, `/dev/shm`, the device nodes) keep their own flags.
 */
const SEALED_SYSTEM_DIRS: readonly string[] = Object.freeze(['/proc', '/dev']);

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
    ...systemMounts(DEFAULT_TMPFS_BYTES).flatMap((step) => step.args),
    ...SEALED_SYSTEM_DIRS.flatMap((dir) => ['--remount-ro', dir]),
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

/** Path components below `/` (`/` itself is 0). */
function depthOf(target: string): number {
  return target === '/' ? 0 : target.split('/').length - 1;
}

/** True when `target` is `dir` or lies below it. */
function isInside(dir: string, target: string): boolean {
  const relative = path.relative(dir, target);
  return (
    relative === '' ||
    (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
  );
}
