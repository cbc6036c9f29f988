/**
 * `/proc` descriptors held across samples (src/worker/proc/proc-files.ts) against real processes: a held
 * descriptor re-reads the present (a later state, a program after exec), never a newcomer that took the
 * pid of the process it was opened for (forced with ns_last_pid in a PID namespace of the test's own);
 * what a sample did not read is released, and a cap bounds what is held.
 */
import { spawn as spawnChild, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  HeldProcFiles,
  MAX_HELD_FILES,
  type ProcFiles,
  readProcText,
} from '../../../../dist/worker/proc/proc-files.js';
import { descendantsOf, readProcStat } from '../../../../dist/worker/proc/proc-probe.js';
import { inspectThreadStdinWait } from '../../../../dist/worker/proc/stdin-wait.js';
import { until } from '../../../support/until.js';

const REUSE_FIXTURE = path.resolve(import.meta.dirname, '../../../fixtures/held-proc-reuse.mjs');

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A child process this test ends; resolves once it runs `argv`. */
async function child(argv: string[], stdin: 'pipe' | 'ignore' = 'ignore') {
  const proc = spawnChild(argv[0]!, argv.slice(1), { stdio: [stdin, 'ignore', 'inherit'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  cleanups.push(async () => {
    proc.kill('SIGKILL');
    await exited;
  });
  await new Promise((resolve) => proc.once('spawn', resolve));
  return { proc, pid: proc.pid!, exited };
}

function held(): HeldProcFiles {
  const files = new HeldProcFiles();
  cleanups.push(() => files.close());
  return files;
}

const commOf = (text: string | undefined) => text?.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));

/** The targets of this process's open descriptors that are files of `/proc/<pid>/`. */
function ownDescriptorsOn(pid: number): string[] {
  const targets: string[] = [];
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      const target = fs.readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(`/proc/${pid}/`)) targets.push(target);
    } catch (_closedMeanwhile) {
      // The listing's own descriptor.
    }
  }
  return targets.sort();
}

describe.runIf(process.platform === 'linux')('held /proc descriptors', () => {
  it('re-read the present on each read: a later state, and the program after exec', async () => {
    const shell = await child(['sh', '-c', 'read line; exec sleep 30'], 'pipe');
    const files = held();
    const statPath = `/proc/${shell.pid}/stat`;
    const syscallPath = `/proc/${shell.pid}/task/${shell.pid}/syscall`;
    await until('sh blocked in read', () => readProcStat(shell.pid, files)?.state === 'S');
    expect(commOf(files.read(statPath))).toBe('sh');
    const blockedInRead = files.read(syscallPath);
    expect(blockedInRead?.split(' ')[0]).toBe(process.arch === 'arm64' ? '63' : '0');
    shell.proc.stdin!.write('go\n');
    // The same descriptors (nothing reopened: the count stays) now show sleep, in its own syscall.
    await until('sh exec’d sleep', () => commOf(files.read(statPath)) === 'sleep');
    // Blocked in its sleep, not on its way there (exec and start-up show other syscalls, or `running`,
    // and the fresh read below would then see a later moment than the held one).
    const nanosleep = process.arch === 'arm64' ? ['101', '115'] : ['35', '230'];
    await until('sleep blocked in its sleep', () =>
      nanosleep.includes(files.read(syscallPath)?.split(' ')[0] ?? ''),
    );
    expect(files.size).toBe(2);
    expect(ownDescriptorsOn(shell.pid)).toEqual([statPath, syscallPath].sort());
    expect(files.read(syscallPath)).toBe(readProcText(syscallPath));
  });

  it('never read a process that took the pid of the one they were opened for', () => {
    // Pid 1 of its own user and PID namespace may pick the next pid: a second child gets the first's pid.
    const run = spawnSync('unshare', ['-Urpf', '--mount-proc', process.execPath, REUSE_FIXTURE], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.stderr).toBe('');
    const report = JSON.parse(run.stdout.trim());
    expect(report.reused).toBe(true);
    expect(report.before).toEqual(['sleep']);
    // stat, syscall and schedstat held for the exited sleep: each descriptor fails, is counted as replaced
    // and its path reopened, so the reading is the newcomer's, as a fresh open's is: never the old one's.
    expect(report.heldAfter).toBe('tail');
    expect(report.heldAfterRead).toEqual([true, true, true]);
    expect(report.replaced).toBe(3);
    expect(report.heldCount).toBe(3);
    expect(report.fresh).toBe('tail');
    expect(report.again).toBe('tail');
    expect(report.replacedAfter).toBe(3); // the reopened descriptors are the newcomer's: nothing more
    expect(report.sampleAfterExit).toBe(null);
    expect(report.heldAfterSample).toBe(0);
  });

  it('release what a sample did not read, all on close, and hold at most MAX_HELD_FILES', async () => {
    const sleeper = await child(['sleep', '30']);
    const files = held();
    const stat = `/proc/${sleeper.pid}/stat`;
    const schedstat = `/proc/${sleeper.pid}/task/${sleeper.pid}/schedstat`;
    files.read(stat);
    files.read(schedstat);
    files.endSample();
    expect(ownDescriptorsOn(sleeper.pid)).toEqual([schedstat, stat].sort());
    files.read(stat);
    files.endSample();
    expect(ownDescriptorsOn(sleeper.pid)).toEqual([stat]);
    // Beyond the cap, files are read afresh: the text is the same, nothing more is held.
    // Distinct paths of the same file (`./` repeated): each would be a descriptor of its own.
    const distinct = Array.from(
      { length: MAX_HELD_FILES + 6 },
      (_, i) => `/proc/${sleeper.pid}/${'./'.repeat(i)}stat`,
    );
    for (const p of distinct) expect(commOf(files.read(p))).toBe('sleep');
    expect(files.size).toBe(MAX_HELD_FILES);
    files.close();
    expect(ownDescriptorsOn(sleeper.pid)).toEqual([]);
    expect(commOf(files.read(stat))).toBe('sleep');
    expect(files.size).toBe(0);
  });

  it('find the children of a multi-threaded process whichever thread forked them', async () => {
    // The child is forked by a second thread: the kernel lists it under that thread's children file.
    const script = [
      'import os, threading, time',
      'def fork():',
      '    if os.fork() == 0:',
      '        time.sleep(30); os._exit(0)',
      '    time.sleep(30)',
      'threading.Thread(target=fork).start()',
      'time.sleep(30)',
    ].join('\n');
    const python = await child(['python3', '-c', script]);
    const files = held();
    const found = await until('the forked child', () => {
      const stat = readProcStat(python.pid, files);
      if (stat === undefined || stat.threads < 2) return undefined;
      const children = descendantsOf(python.pid, files, stat);
      return children.length > 0 ? children : undefined;
    });
    cleanups.push(() => {
      for (const stat of found) process.kill(stat.pid, 'SIGKILL');
    });
    expect(found.map((stat) => stat.ppid)).toEqual([python.pid]);
    expect(found.map((stat) => stat.comm)).toEqual(['python3']);
  });

  it('an inspection that met a reopened descriptor is unknown, never waiting (fake files pin the race)', () => {
    // A thread blocked in read() on a character device of this process (/dev/null stands for the
    // terminal: only its device number is compared). The files are fakes: the kernel cannot be made to
    // reuse a tid between two reads of one inspection on purpose.
    const fd = fs.openSync('/dev/null', 'r');
    cleanups.push(() => fs.closeSync(fd));
    const rdev = fs.fstatSync(fd).rdev;
    const pid = process.pid;
    const stat = readProcText(`/proc/${pid}/stat`)!.replace(/\) \S /, ') S ');
    const readNr = process.arch === 'arm64' ? 63 : 0;
    const fake = (replacedAt: string | undefined): ProcFiles => {
      let replaced = 0;
      let schedstatReads = 0;
      return {
        get replaced() {
          return replaced;
        },
        endSample: () => undefined,
        read(path: string) {
          if (path.endsWith('/schedstat')) {
            schedstatReads++;
            // The second read of the run counter met a dead descriptor and read the newcomer's instead.
            if (replacedAt === 'schedstat' && schedstatReads === 2) replaced++;
            return '1 1 7\n';
          }
          if (path.endsWith('/syscall'))
            return `${readNr} 0x${fd.toString(16)} 0x0 0x1000 0x0 0x0 0x0 0x0 0x0\n`;
          if (path.endsWith('/stat')) return stat;
          return undefined;
        },
      };
    };
    expect(inspectThreadStdinWait(pid, pid, rdev, process.arch, fake(undefined)).verdict).toBe('waiting');
    expect(inspectThreadStdinWait(pid, pid, rdev, process.arch, fake('schedstat')).verdict).toBe('unknown');
  });
});
