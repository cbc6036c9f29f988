/**
 * Parsing of Linux `/proc/<pid>/stat` and the process identity built from it. Pure: no I/O, so the
 * host thread's exit guard and the engine threads share one definition of "the same process".
 */

/**
 * A process as a signal target. A pid alone can be reused by an unrelated process once the old one
 * is reaped; pid + start time cannot (two processes with one pid never share a start tick).
 */
export interface ProcessIdentity {
  /** Process id (in the pid namespace of the `/proc` that was read). */
  pid: number;
  /** Field 22 of `/proc/<pid>/stat`: start time in clock ticks since boot. */
  startTime: number;
}

/** The fields of `/proc/<pid>/stat` (or `/proc/<pid>/task/<tid>/stat`) that the engine uses. */
export interface ProcStat {
  /** Field 1: process (or thread) id. */
  pid: number;
  /** Field 2: executable name, without the parentheses (may contain spaces and `)`). */
  comm: string;
  /** Field 3: one-letter state (`R`, `S`, `D`, `T`, `t`, `Z`, `X`, `I`, …). */
  state: string;
  /** Field 4: parent pid. */
  ppid: number;
  /** Field 5: process group id. */
  pgrp: number;
  /** Field 6: session id. */
  session: number;
  /** Field 7: controlling terminal (device number), 0 when none. */
  ttyNr: number;
  /** Field 8: foreground process group of the controlling terminal, -1 when none. */
  tpgid: number;
  /** Field 9: the kernel's per-task flags (`PF_*`; `PF_EXITING` = 0x4 while the task exits). */
  flags: number;
  /** Field 20: number of threads in the process (the thread's process, in a thread's stat). */
  threads: number;
  /** Field 22: start time in clock ticks since boot. */
  startTime: number;
}

/** Number of fields after the `)` that closes comm up to and including starttime (fields 3..22). */
const FIELDS_THROUGH_START_TIME = 20;

/**
 * Parses the text of a `/proc/<pid>/stat` file; `undefined` when it is not one. comm can contain
 * spaces, parentheses and even newlines, so it is delimited by the first `(` and the LAST `)`: the
 * fields after comm are numbers and a state letter, none of which can contain `)`.
 */
export function parseProcStat(text: string): ProcStat | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open <= 0 || close < open) return undefined;
  const pid = parseDecimal(text.slice(0, open).trim());
  // Only the fields through starttime: splitting all ~50 took half the parse (a sample reads several).
  const rest = text
    .slice(close + 1)
    .trim()
    .split(' ', FIELDS_THROUGH_START_TIME);
  if (pid === undefined || rest.length < FIELDS_THROUGH_START_TIME) return undefined;
  // rest[i] is field i + 3 of proc(5).
  const state = rest[0]!;
  const ppid = parseDecimal(rest[1]!);
  const pgrp = parseDecimal(rest[2]!);
  const session = parseDecimal(rest[3]!);
  const ttyNr = parseDecimal(rest[4]!);
  const tpgid = parseDecimal(rest[5]!);
  const flags = parseDecimal(rest[6]!);
  const threads = parseDecimal(rest[17]!);
  const startTime = parseDecimal(rest[19]!);
  if (
    !/^[A-Za-z]$/.test(state) ||
    ppid === undefined ||
    pgrp === undefined ||
    session === undefined ||
    ttyNr === undefined ||
    tpgid === undefined ||
    flags === undefined ||
    threads === undefined ||
    startTime === undefined
  ) {
    return undefined;
  }
  const comm = text.slice(open + 1, close);
  return { pid, comm, state, ppid, pgrp, session, ttyNr, tpgid, flags, threads, startTime };
}

/** `PF_EXITING` of the stat flags: the task is in `do_exit` (it can never wait for input again). */
export const PF_EXITING = 0x4;

/** True when the stat describes a task that is exiting or has exited (zombie, dead, or in `do_exit`). */
export function isExiting(stat: ProcStat): boolean {
  return stat.state === 'Z' || stat.state === 'X' || (stat.flags & PF_EXITING) !== 0;
}

/** The identity of the process a parsed stat describes. */
export function identityFromStat(stat: ProcStat): ProcessIdentity {
  return { pid: stat.pid, startTime: stat.startTime };
}

/** True when both identities name the same process. */
export function sameIdentity(a: ProcessIdentity, b: ProcessIdentity): boolean {
  return a.pid === b.pid && a.startTime === b.startTime;
}

/** A base-10 integer (optionally negative, as tpgid -1 is) or `undefined`. */
function parseDecimal(field: string): number | undefined {
  if (!/^-?\d+$/.test(field)) return undefined;
  const value = Number(field);
  return Number.isSafeInteger(value) ? value : undefined;
}
