/**
 * Just enough of Linux `/proc` for the benchmark's own checks (CPU time of shells, what is left after
 * a close). Written independently of the engine's probes, so the benchmark does not grade the engine
 * with the engine's own code.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of `utime`/`stime` (USER_HZ); 100 on every common Linux build. */
export const CLOCK_TICKS = readClockTicks();

function readClockTicks() {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100; // getconf missing: USER_HZ is 100 unless the kernel was built otherwise
  }
}

/** Parsed `/proc/<pid>/stat`, or undefined when the process is gone. */
export function readStat(pid) {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // comm may contain spaces and parentheses: the fields start after the last ')'.
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const f = text.slice(close + 2).split(' ');
  return {
    pid,
    comm,
    state: f[0],
    ppid: Number(f[1]),
    pgrp: Number(f[2]),
    session: Number(f[3]),
    tpgid: Number(f[5]),
    utime: Number(f[11]),
    stime: Number(f[12]),
    startTime: Number(f[19]),
  };
}

/** Every pid currently in `/proc`. */
export function allPids() {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** Stats of every process whose POSIX session is `sid` (a pty child leads its own session). */
export function processesInSession(sid) {
  const found = [];
  for (const pid of allPids()) {
    const stat = readStat(pid);
    if (stat !== undefined && stat.session === sid) found.push(stat);
  }
  return found;
}

/** True when `stat`'s process (same pid and start time) still exists and is not a zombie. */
export function isLive(stat) {
  const now = readStat(stat.pid);
  return now !== undefined && now.startTime === stat.startTime && now.state !== 'Z';
}

/** CPU time (user + system) of `pid` in ms, or 0 when it is gone. */
export function cpuMs(pid) {
  const stat = readStat(pid);
  return stat === undefined ? 0 : ((stat.utime + stat.stime) * 1000) / CLOCK_TICKS;
}
