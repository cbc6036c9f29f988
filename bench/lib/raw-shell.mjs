/**
 * The raw baseline: node-pty driven directly on the host thread, with no terminal model, no
 * scrollback and no readiness logic — a consumer that only looks for its prompt at the end of the data.
 */
import { performance } from 'node:perf_hooks';
import * as pty from 'node-pty';

/** A prompt no benchmark output contains, so seeing it at the end of the data means "back at the prompt". */
export const RAW_PROMPT = '[raw-ready]$ ';
/** Characters of trailing output kept for prompt/pattern matching (enough for any prompt we wait for). */
const TAIL_CHARS = 512;
/** A wait for output that never matches fails after this long, naming the output it saw (no silent hang). */
const WAIT_TIMEOUT_MS = 120_000;
/** Same terminal size as the engine's defaults (SPEC §3). */
const COLS = 160;
const ROWS = 40;

/** An interactive bash on node-pty, on this thread. */
export class RawShell {
  /**
   * Starts bash and resolves once its first prompt arrived. `wrap` may wrap its argv (a launcher that
   * puts it into cgroups first, for bench/limits.mjs).
   */
  static async start(wrap = (argv) => argv) {
    const shell = new RawShell(wrap);
    shell.mark();
    await shell.waitForPrompt();
    return shell;
  }

  constructor(wrap = (argv) => argv) {
    const [file, ...args] = wrap(['/bin/bash', '--noprofile', '--norc', '-i']);
    this.term = pty.spawn(file, args, {
      name: 'dumb',
      cols: COLS,
      rows: ROWS,
      cwd: process.cwd(),
      env: { ...process.env, TERM: 'dumb', PS1: RAW_PROMPT, PROMPT_COMMAND: '' },
    });
    this.pid = this.term.pid;
    this.tail = '';
    this.chars = 0;
    this.since = performance.now();
    this.waiter = undefined;
    this.exited = new Promise((resolve) => this.term.onExit(resolve));
    this.term.onData((data) => {
      this.chars += data.length;
      this.tail = (this.tail + data).slice(-TAIL_CHARS);
      if (this.waiter?.test(this.tail)) {
        const { resolve } = this.waiter;
        this.waiter = undefined;
        resolve(performance.now() - this.since);
      }
    });
  }

  /** Starts a new measurement: forgets earlier output and restarts the clock. */
  mark() {
    this.tail = '';
    this.chars = 0;
    this.since = performance.now();
  }

  /** Types `text` + Enter, starting a new measurement at the write. */
  type(text) {
    this.mark();
    this.term.write(`${text}\r`);
  }

  /**
   * Resolves with ms since the last `mark()`/`type()` once `test(tail)` holds for the output's tail;
   * rejects, quoting the tail, when that has not happened within WAIT_TIMEOUT_MS.
   */
  waitFor(test) {
    if (test(this.tail)) return Promise.resolve(performance.now() - this.since);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(
          new Error(
            `raw shell: no match within ${WAIT_TIMEOUT_MS} ms; output tail ${JSON.stringify(this.tail.slice(-200))}`,
          ),
        );
      }, WAIT_TIMEOUT_MS);
      this.waiter = {
        test,
        resolve: (ms) => {
          clearTimeout(timer);
          resolve(ms);
        },
      };
    });
  }

  /** Resolves (ms) once output ends with the shell's prompt. */
  waitForPrompt() {
    return this.waitFor((tail) => tail.endsWith(RAW_PROMPT));
  }

  /** Runs `command` and resolves `{ ms, chars }` once its output is followed by the prompt. */
  async run(command) {
    this.type(command);
    const ms = await this.waitForPrompt();
    return { ms, chars: this.chars };
  }

  /** Kills bash (this baseline needs no graceful teardown) and waits for its exit. */
  async close() {
    this.term.kill('SIGKILL');
    await this.exited;
  }
}
