/**
 * The terminal-model A/B's harness (bench/terminal-model-ab.mjs): bash on node-pty on this thread,
 * with the session's prompt marker in its prompt, feeding one terminal model. Everything but the model
 * is the same for both: the pty, the shell, the scheduling (each read processed on the next check
 * phase, small reads joined up to 4 KiB, as `OutputPipeline.write` does), the scrollback bounds, the
 * prompt evidence rule and the replies written straight back to the pty.
 *
 * - `today`: the product's own `OutputPipeline` (`src/worker/output-pipeline.ts`), built as
 *   `SessionCore` builds it, scheduling its reads and pausing the pty itself. The reply gate and
 *   readiness (`/proc` probes) are left out of both paths: they are the same for either model.
 *   Done = prompt evidence and nothing left to parse (the session's probe refuses to sample before).
 * - `xterm`: bench/lib/xterm-only-model.mjs. Done = prompt evidence (its parse is synchronous).
 */
import { performance } from 'node:perf_hooks';
import * as pty from 'node-pty';
import { LineRing } from '../../dist/worker/output/line-ring.js';
import { OutputPipeline } from '../../dist/worker/output-pipeline.js';
import { createNonce, MARKER_PREFIX } from '../../dist/worker/readiness/prompt-marker.js';
import { XtermOnlyModel } from './xterm-only-model.mjs';

const COLS = 160;
const ROWS = 40;
const PROMPT = '$ ';
const PROCESS_SLICE_CHARS = 4 * 1024;
const MAX_UNPROCESSED_OUTPUT_CHARS = 1024 * 1024;
const RESUME_READING_AT_CHARS = MAX_UNPROCESSED_OUTPUT_CHARS / 4;
const MAX_READ_BYTES = 1 << 20;
const WAIT_TIMEOUT_MS = 180_000;

/** Today's pipeline: the product's own OutputPipeline, as SessionCore builds it. */
class TodayPipeline {
  constructor({ nonce, reply, onChunk }) {
    this.onChunk = onChunk;
    const noop = () => undefined;
    const listener = {
      text: noop,
      newline: noop,
      textBlock: noop,
      rewriteLine: noop,
      markerArrived: noop,
      endOfChunk: () => this.onChunk?.(),
    };
    this.pipeline = new OutputPipeline({
      rows: ROWS,
      cols: COLS,
      config: { maxReadBytes: MAX_READ_BYTES, scrollbackLines: 10_000, scrollbackMaxBytes: 4 * 2 ** 20 },
      nonce,
      prompt: PROMPT,
      replies: { offer: (data) => reply(data), markerParsed: noop },
      listener: () => listener,
    });
  }

  /** A pty read: the pipeline schedules its processing itself (and pauses `reading` when behind). */
  write(data) {
    this.pipeline.write(data);
  }

  /** A recorded read, processed at once. */
  feed(data) {
    this.pipeline.write(data);
    this.pipeline.flush();
  }

  /** Resolves once everything fed is processed and parsed. */
  async settle() {
    this.pipeline.flush();
    await this.pipeline.whenParsed();
  }

  attach(reading) {
    this.pipeline.attach(reading);
  }

  get parsing() {
    return this.pipeline.parsingPending;
  }

  whenParsed() {
    return this.pipeline.whenParsed();
  }

  /** Done: prompt evidence and nothing left to parse (the session's probe refuses to sample before). */
  done() {
    return this.pipeline.prompt.candidate !== undefined && !this.pipeline.parsingPending;
  }

  resetPrompt() {
    this.pipeline.prompt.reset();
  }

  /** The scrollback's last `n` lines as a reader sees them (`read`), trailing blanks trimmed. */
  tailLines(n) {
    return this.pipeline
      .read({ count: n })
      .text.split('\n')
      .map((l) => l.trimEnd());
  }

  async screenLines() {
    const screen = await this.pipeline.renderedScreen();
    return screen?.lines.map((l) => l.trimEnd());
  }

  dispose() {
    this.pipeline.dispose();
  }
}

/** The xterm-only prototype behind the same interface. */
class XtermPipeline {
  constructor({ nonce, ring, reply }) {
    this.ring = ring;
    this.model = new XtermOnlyModel({ rows: ROWS, cols: COLS, ring, nonce, prompt: PROMPT, reply });
    this.seenMarkers = 0;
  }

  write(data) {
    this.model.write(data);
  }

  feed(data) {
    this.model.write(data);
  }

  async settle() {
    this.model.flush();
  }

  get parsing() {
    return false;
  }

  done() {
    // Prompt evidence is only looked for once a marker was parsed (exact without a flush).
    if (this.model.markersParsed === this.seenMarkers && this.model.marker === undefined) return false;
    return this.model.promptCandidate() !== undefined;
  }

  resetPrompt() {
    this.seenMarkers = this.model.markersParsed;
    this.model.resetPrompt();
  }

  tailLines(n) {
    const from = this.model.sync();
    const page = this.ring.read({ count: n }, MAX_READ_BYTES);
    this.model.unsync(from);
    return page.text.split('\n').map((l) => l.trimEnd());
  }

  async screenLines() {
    return this.model.screenLines().map((l) => l.trimEnd());
  }

  dispose() {
    this.model.dispose();
  }
}

/** A model with no pty behind it (recorded reads): its replies go to `reply` (dropped by default). */
export function pipelineFor(kind, ring, reply = () => undefined) {
  const Pipeline = kind === 'today' ? TodayPipeline : XtermPipeline;
  return new Pipeline({ nonce: createNonce(), ring, reply });
}

/** `kind`: 'today' or 'xterm'. */
export class ModelShell {
  static async start(kind) {
    const shell = new ModelShell(kind);
    shell.mark();
    await shell.waitDone();
    return shell;
  }

  constructor(kind) {
    this.kind = kind;
    const nonce = createNonce();
    const markerPs1 = `\\[\\e]${MARKER_PREFIX}\${__s:-0};${nonce};$$;\${__n:-0};\${PWD}\\a\\]${PROMPT}`;
    const promptCommand = `__s=$?; __n=$((\${__n:-0} + 1)); PS1='${markerPs1}'`;
    this.term = pty.spawn('/bin/bash', ['--noprofile', '--norc', '-i'], {
      name: 'xterm-256color',
      cols: COLS,
      rows: ROWS,
      cwd: process.cwd(),
      env: { ...process.env, TERM: 'xterm-256color', PS1: '', PROMPT_COMMAND: promptCommand },
    });
    this.ring = new LineRing({ maxLines: 10_000, maxBytes: 4 * 2 ** 20 });
    const reply = (data) => this.term.write(data);
    const Pipeline = kind === 'today' ? TodayPipeline : XtermPipeline;
    this.pipeline = new Pipeline({ nonce, ring: this.ring, reply, onChunk: () => this.checkDone() });
    this.pending = [];
    this.pendingChars = 0;
    this.scheduled = false;
    this.paused = false;
    this.chars = 0;
    this.since = performance.now();
    this.waiter = undefined;
    /** Per send: performance.now() of the first byte back. */
    this.firstByteAt = 0;
    this.exited = new Promise((resolve) => this.term.onExit(resolve));
    // Today's OutputPipeline schedules its reads and pauses the pty itself; the prototype gets the
    // same scheduling from here (one slice of at most 4 KiB per check phase, as the pipeline does).
    if (kind === 'today')
      this.pipeline.attach({ pause: () => this.term.pause(), resume: () => this.term.resume() });
    this.term.onData((data) => {
      if (this.firstByteAt === 0) this.firstByteAt = performance.now();
      this.chars += data.length;
      if (kind === 'today') {
        this.pipeline.write(data);
        return;
      }
      this.pending.push(data);
      this.pendingChars += data.length;
      this.limitBacklog();
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(this.process);
    });
  }

  process = () => {
    this.scheduled = false;
    const pending = this.pending;
    if (pending.length === 0) return;
    let take = 0;
    let chars = 0;
    while (take < pending.length && chars < PROCESS_SLICE_CHARS) chars += pending[take++].length;
    const slice = take === pending.length ? pending : pending.slice(0, take);
    this.pending = take === pending.length ? [] : pending.slice(take);
    const data = slice.length === 1 ? slice[0] : slice.join('');
    this.pendingChars -= data.length;
    this.pipeline.write(data);
    this.limitBacklog();
    this.checkDone();
    if (this.pending.length > 0 && !this.scheduled) {
      this.scheduled = true;
      setImmediate(this.process);
    }
  };

  /** The prototype's backlog (it parses synchronously: only reads not yet processed count). */
  limitBacklog() {
    if (this.paused) {
      if (this.pendingChars <= RESUME_READING_AT_CHARS) {
        this.paused = false;
        this.term.resume();
      }
      return;
    }
    if (this.pendingChars <= MAX_UNPROCESSED_OUTPUT_CHARS) return;
    this.paused = true;
    this.term.pause();
  }

  checkDone() {
    if (this.waiter === undefined || this.pending.length > 0) return;
    if (this.pipeline.done()) {
      const { resolve } = this.waiter;
      this.waiter = undefined;
      resolve(performance.now() - this.since);
      return;
    }
    // Today's terminal model parses on its own timers: look again once it is done.
    if (this.pipeline.parsing && !this.idleWait) {
      this.idleWait = true;
      void this.pipeline.whenParsed().then(() => {
        this.idleWait = false;
        this.checkDone();
      });
    }
  }

  mark() {
    this.chars = 0;
    this.firstByteAt = 0;
    this.pipeline.resetPrompt();
    this.since = performance.now();
  }

  /** Resolves (ms since mark) once the pipeline has prompt evidence and nothing left to parse. */
  waitDone() {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        reject(
          new Error(
            `${this.kind}: no prompt within ${WAIT_TIMEOUT_MS} ms: ${this.pipeline.tailLines(3).join(' | ')}`,
          ),
        );
      }, WAIT_TIMEOUT_MS);
      this.waiter = {
        resolve: (ms) => {
          clearTimeout(timer);
          resolve(ms);
        },
      };
      this.checkDone();
    });
  }

  /** Types `command` + Enter and resolves `{ ms, chars }` once done. */
  async run(command) {
    this.mark();
    this.term.write(`${command}\r`);
    const ms = await this.waitDone();
    return { ms, chars: this.chars };
  }

  async close() {
    this.pipeline.dispose();
    this.term.kill('SIGKILL');
    await this.exited;
  }
}
