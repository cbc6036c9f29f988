/**
 * The readiness verdict (SPEC §4.2 rules 1, 3, 4): given the prompt evidence from the output stream and
 * a sample of the terminal's foreground process group, decide whether the terminal is provably waiting
 * for input. Pure: the send lifecycle feeds it samples, fakes feed it races.
 */

import type { ForegroundSample, ThreadWait } from '../proc/stdin-wait.js';
import type { PromptCandidate } from './prompt-tracker.js';

/**
 * Whether a wait of the shell itself (a thread of its process blocked on the terminal) is its line
 * editor's: at a prompt, a continuation prompt, `read -e`. Each dialect knows what its editor's wait
 * looks like (readline selects on fd 0; zsh's ZLE reads its own terminal descriptor).
 */
export type LineEditorWait = (wait: ThreadWait) => boolean;

/** The session's own shell, once startup identified it. Host pids, except `markerPid`. */
export interface ShellIdentity {
  /** Host pid of the shell (a descendant of the pty child when a sandbox launcher sits in between). */
  pid: number;
  /** Its process group (job-control bash leads its own group). */
  pgrp: number;
  /** `$$` as the shell prints it in its marker: its pid in its own PID namespace (`pid` unconfined). */
  markerPid: number;
  /** What its line editor's wait looks like (from its dialect). */
  isLineEditorWait: LineEditorWait;
}

/** What the foreground looked like at the write boundary (rule 4). */
export interface WaitBaseline {
  /** Foreground group at the boundary, when it could be read. */
  tpgid: number | undefined;
  /** Threads that were already blocked on the terminal, with their switch counters. */
  waiting: Map<number, number | undefined>;
}

/** Verdict of one judgement. */
export type ReadinessVerdict =
  /** The shell's own marker + PS1, the shell owns the foreground and is blocked on the terminal. */
  | { kind: 'prompt'; candidate: PromptCandidate; tid: number; switches: number | undefined; tpgid: number }
  /**
   * A thread of the session is newly blocked reading the terminal: a foreground member (the shell in its
   * line editor included: a continuation prompt, `read -e`), or a process outside the foreground group
   * that opened the terminal itself.
   */
  | { kind: 'stdin_wait'; pid: number; tid: number; switches: number | undefined; tpgid: number }
  /**
   * Rule 4: a foreground thread that was already blocked on the terminal at the write boundary and has
   * not run since (a canonical-mode `read` given text without Enter). Proof once that holds for
   * `handoffGraceMs` after the echo.
   */
  | { kind: 'unwoken_wait'; pid: number; tid: number; switches: number; tpgid: number }
  /** Nothing proven (yet). */
  | { kind: 'none' };

/** Inputs of {@link judgeReadiness}. */
export interface ReadinessInput {
  /** Prompt evidence gathered since the write boundary. */
  candidate: PromptCandidate | undefined;
  /** The session's shell; undefined before startup identified it. */
  shell: ShellIdentity | undefined;
  /** Fresh sample of the foreground group; undefined when /proc could not be read. */
  sample: ForegroundSample | undefined;
  /** Foreground state at the write boundary; undefined means nothing pre-existed (startup, wait-only). */
  baseline: WaitBaseline | undefined;
  /** Threads observed outside a terminal wait since the write boundary. */
  leftWait: ReadonlySet<number>;
  /**
   * Whether the shell blocked in its line editor without a marker counts as waiting. Not while a cancel
   * may have left half a line typed there (the send clears it first, and the fresh prompt proves).
   */
  shellEditorCounts: boolean;
}

/** Snapshot of pre-existing waits at the write boundary (rule 4). */
export function baselineOf(sample: ForegroundSample | undefined): WaitBaseline {
  const waiting = new Map<number, number | undefined>();
  for (const member of sample?.members ?? []) {
    if (member.verdict === 'waiting') waiting.set(member.tid, member.switches);
  }
  return { tpgid: sample?.tpgid, waiting };
}

/** Records threads seen outside a wait, so a later wait of theirs counts as new (rule 4). */
export function noteLeftWait(sample: ForegroundSample | undefined, leftWait: Set<number>): void {
  for (const member of sample?.members ?? []) {
    if (member.verdict === 'not_waiting') leftWait.add(member.tid);
  }
}

/** Decides readiness. Unknown or unreadable state, and relays, are never positive evidence. */
export function judgeReadiness(input: ReadinessInput): ReadinessVerdict {
  const { candidate, shell, sample } = input;
  if (sample === undefined) return { kind: 'none' };

  // Rule 1: prompt evidence needs the shell's own marker, the shell's group in the foreground, and the
  // shell itself seen blocked on the terminal (so text running several commands settles after the last).
  if (candidate !== undefined && shell !== undefined && candidate.shellPid === shell.markerPid) {
    const waiting = sample.members.find((m) => m.pid === shell.pid && m.verdict === 'waiting');
    // The wait must be new since the write (rule 4): a prompt printed before the write whose marker was
    // read only after the boundary, with the shell still blocked where it was, is the previous prompt —
    // the shell has not even read this send's input yet (the kernel wakes a pty reader asynchronously).
    if (sample.tpgid === shell.pgrp && waiting !== undefined && isFreshWait(waiting, sample.tpgid, input)) {
      return { kind: 'prompt', candidate, tid: waiting.tid, switches: waiting.switches, tpgid: sample.tpgid };
    }
  }

  // Rule 3 + 4: a thread blocked reading the terminal, and that wait is new since the write.
  let unwoken: ReadinessVerdict | undefined;
  for (const member of sample.members) {
    if (member.verdict !== 'waiting') continue;
    const atShellEditor = shell !== undefined && member.pid === shell.pid && shell.isLineEditorWait(member);
    if (atShellEditor && !input.shellEditorCounts) continue;
    if (isFreshWait(member, sample.tpgid, input)) {
      return {
        kind: 'stdin_wait',
        pid: member.pid,
        tid: member.tid,
        switches: member.switches,
        tpgid: sample.tpgid,
      };
    }
    const before = input.baseline?.waiting.get(member.tid);
    if (
      unwoken === undefined &&
      member.outside !== true &&
      before !== undefined &&
      member.switches === before
    ) {
      unwoken = {
        kind: 'unwoken_wait',
        pid: member.pid,
        tid: member.tid,
        switches: before,
        tpgid: sample.tpgid,
      };
    }
  }
  return unwoken ?? { kind: 'none' };
}

function isFreshWait(member: ThreadWait, tpgid: number, input: ReadinessInput): boolean {
  const { baseline, leftWait } = input;
  if (baseline === undefined) return true;
  // A different foreground group is new evidence; not for a process outside it, which the change of
  // foreground did not touch.
  if (baseline.tpgid !== tpgid && member.outside !== true) return true;
  if (!baseline.waiting.has(member.tid)) return true; // it was not waiting at the write boundary
  if (leftWait.has(member.tid)) return true; // observed leaving the wait since
  const before = baseline.waiting.get(member.tid);
  // The switch counters show it ran since the boundary. Unknown counters prove nothing.
  return before !== undefined && member.switches !== undefined && member.switches > before;
}

/**
 * True when the shell itself owns the foreground and is blocked in its line editor while the stream
 * does not end in its prompt: input is half-typed at the prompt (e.g. the rest of a cancelled write).
 */
export function shellHoldsPartialLine(
  sample: ForegroundSample | undefined,
  shell: ShellIdentity | undefined,
  candidate: PromptCandidate | undefined,
): boolean {
  if (sample === undefined || shell === undefined || candidate !== undefined) return false;
  if (sample.tpgid !== shell.pgrp) return false;
  return sample.members.some(
    (m) => m.pid === shell.pid && m.verdict === 'waiting' && shell.isLineEditorWait(m),
  );
}
