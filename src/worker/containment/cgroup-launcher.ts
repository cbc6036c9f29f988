/**
 * The shell's launcher (SPEC §4.6, §4.8): the pty child first joins every cgroup of its session — the
 * containment cgroup v2 and the limit cgroups, v1 ones included — then raises its own OOM score, then
 * execs the session argv in place. So the pty child keeps its pid, nothing it forks can start outside
 * a cgroup or with the host's OOM score, and a confined argv (bubblewrap, which unshares the cgroup
 * namespace) starts already inside its cgroups.
 */

/** The shell interpreter of the launcher (POSIX sh; `echo` is a builtin, so the writer is the shell itself). */
const LAUNCHER_SHELL = '/bin/sh';
/** Exit status of a launcher that could not join a cgroup (125: like env(1), "the wrapper failed"). */
export const JOIN_FAILED_EXIT_CODE = 125;
/**
 * `oom_score_adj` of a session's processes: the kernel's OOM killer picks them before the host's
 * processes (raising one's own score needs no privilege; the children inherit it).
 */
export const SESSION_OOM_SCORE_ADJ = 500;
/**
 * `$1` is how many `cgroup.procs` files follow; writing 0 to one moves the writing process (the
 * launcher itself, in v1 as in v2). A failed join exits with {@link JOIN_FAILED_EXIT_CODE} instead of
 * running the argv. The OOM score is best effort (a /proc that refuses it changes nothing else).
 */
const LAUNCHER_SCRIPT =
  'n=$1; shift; while [ "$n" -gt 0 ]; do echo 0 > "$1" || exit ' +
  `${JOIN_FAILED_EXIT_CODE}; shift; n=$((n - 1)); done; ` +
  `{ echo ${SESSION_OOM_SCORE_ADJ} > /proc/self/oom_score_adj; } 2>/dev/null; exec "$@"`;
/** `$0` of the launcher, as `ps` shows it for the instant before the exec. */
const LAUNCHER_NAME = 'agent-pty-launch';

/** `argv` wrapped in the launcher that joins the cgroups of `procsFiles` (in order) before it execs `argv`. */
export function launcherArgv(procsFiles: readonly string[], argv: readonly string[]): string[] {
  return [
    LAUNCHER_SHELL,
    '-c',
    LAUNCHER_SCRIPT,
    LAUNCHER_NAME,
    String(procsFiles.length),
    ...procsFiles,
    ...argv,
  ];
}
