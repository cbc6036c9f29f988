/**
 * Where this host mounts cgroupfs (cgroup v1 hierarchies and cgroup2), read from
 * /proc/self/mountinfo: the sandbox hides them from confined sessions, and the reaper searches them
 * for a dead engine's cgroups. Detect, never assume `/sys/fs/cgroup`.
 */
import { readFileSync } from 'node:fs';

/**
 * Mount points of every `cgroup` and `cgroup2` filesystem, in mountinfo order (empty without procfs).
 * Fields: `id parent dev root point opts [tags] - fstype source opts`; the point escapes space, tab,
 * newline and backslash as `\ooo`.
 */
export function cgroupMountPoints(): string[] {
  let mountinfo: string;
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch (_noProcfs) {
    return [];
  }
  const points: string[] = [];
  for (const line of mountinfo.split('\n')) {
    const fields = line.split(' ');
    const separator = fields.indexOf('-');
    const fstype = fields[separator + 1];
    if (separator < 6 || (fstype !== 'cgroup' && fstype !== 'cgroup2')) continue;
    points.push(
      fields[4]!.replace(/\\([0-7]{3})/g, (_, octal: string) =>
        String.fromCharCode(Number.parseInt(octal, 8)),
      ),
    );
  }
  return points;
}
