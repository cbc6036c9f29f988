/**
 * The terminal-model A/B's harness (bench/terminal-model-ab.mjs): bash on node-pty on this thread,
 * with the session's prompt marker in its prompt, feeding one terminal model. Everything but the model
 * is the same for both: the pty, the shell, the scheduling (each read processed on the next check
 * phase, small reads joined up to 4 KiB, as `SessionCore.processOutput` does), the scrollback
 * (`LineRing`), the prompt evidence rule and the replies written straight back to the pty.
 *
 * - `today`: the product's pipeline as `src/worker/session.ts` wires it (line-text scan → replier
 *   `feedLineText` + sanitizer `pushLineText`, else sanitizer `pushStyled` → replier
 *   `feedStyledLineText`/`feed`; the sanitizer's sink feeds the output model, which feeds the ring,
 *   and the prompt tracker), with the session's backpressure on the replier's backlog. A bench copy of
 *   that routing: it is what issue 24 removes, so it is not exported by the product. The reply gate
 *   and readiness (`/proc` probes) are left out of both paths: they are the same for either model.
 *   Done = prompt evidence and the replier idle (the session's probe refuses to sample while the
 *   replier is busy).
 * - `xterm`: bench/lib/xterm-only-model.mjs. Done = prompt evidence (its parse is synchronous).
 */
import { performance } from 'node:perf_hooks';
import * as pty from 'node-pty';
import { LineFeeds } from '../../dist/worker/output/line-feeds.js';
import { LineRing } from '../../dist/worker/output/line-ring.js';
import { LineTextKind, lineTextKind } from '../../dist/worker/output/line-text.js';
import { OutputModel } from '../../dist/worker/output/output-model.js';
import { OutputSanitizer } from '../../dist/worker/output/sanitizer.js';
import { createNonce, MARKER_PREFIX, parseOwnedMarker } from '../../dist/worker/readiness/prompt-marker.js';
import { PromptTracker } from '../../dist/worker/readiness/prompt-tracker.js';
import { TerminalReplier } from '../../dist/worker/replies/terminal-replier.js';
import { XtermOnlyModel } from './xterm-only-model.mjs';

const COLS = 160;
const ROWS = 40;
const PROMPT = '$ ';
const PROCESS_SLICE_CHARS = 4 * 1024;
const MAX_UNPROCESSED_OUTPUT_CHARS = 1024 * 1024;
const RESUME_READING_AT_CHARS = MAX_UNPROCESSED_OUTPUT_CHARS / 4;
const MAX_READ_BYTES = 1 << 20;
const WAIT_TIMEOUT_MS = 180_000;

/** Today's pipeline, wired as SessionCore wires it. */
class TodayPipeline {
  constructor({ nonce, ring, reply }) {
    this.ring = ring;
    this.prompt = new PromptTracker(nonce, PROMPT);
    this.model = new OutputModel({ rows: ROWS, cols: COLS, ring, maxLineChars: MAX_READ_BYTES });
    this.sanitizer = new OutputSanitizer({ maxPendingChars: MAX_READ_BYTES, columns: COLS });
    this.lineFeeds = new LineFeeds();
    this.replier = new TerminalReplier({
      cols: COLS,
      rows: ROWS,
      maxStringSequenceChars: MAX_READ_BYTES,
      reply: (data) => reply(data),
      isPromptMarker: (payload) => parseOwnedMarker(payload, nonce) !== undefined,
    });
    const model = this.model;
    const prompt = this.prompt;
    this.sink = {
      text: (s) => {
        model.text(s);
        prompt.text(s);
      },
      newline: () => {
        model.newline();
        prompt.newline();
      },
      rewriteLine: () => {
        model.rewriteLine();
        prompt.rewriteLine();
      },
      textBlock: (block, ascii, lineFeeds) => {
        model.textBlock(block, ascii, lineFeeds);
        prompt.textBlock(block);
      },
      osc: (payload) => {
        const ours = prompt.osc(payload);
        if (ours && model.alternateScreen) model.shellPrompted();
      },
      backspace: () => model.backspace(),
      csi: (params, final) => model.csi(params, final),
      escape: (final) => model.escape(final),
    };
  }

  write(data) {
    const kind = lineTextKind(data, this.lineFeeds);
    if (kind !== LineTextKind.None) {
      const lineFeeds = this.lineFeeds.known;
      this.replier.feedLineText(data, lineFeeds);
      this.sanitizer.pushLineText(data, this.sink, kind === LineTextKind.Ascii, lineFeeds);
    } else {
      const route = this.sanitizer.pushStyled(data, this.sink, this.lineFeeds);
      if (route === 'whole') this.replier.feedStyledLineText(data);
      else this.replier.feed(data);
    }
  }

  get backlogChars() {
    return this.replier.backlogChars;
  }

  /** Done: prompt evidence and nothing left for the replier to parse. */
  done() {
    return this.prompt.candidate !== undefined && !this.replier.busy;
  }

  resetPrompt() {
    this.prompt.reset();
  }

  /** The scrollback's last `n` lines as a reader sees them, trailing blanks trimmed. */
  tailLines(n) {
    this.model.sync();
    return this.ring.linesFrom(Math.max(0, this.ring.headSeq - n)).map((l) => l.trimEnd());
  }

  async screenLines() {
    const screen = await this.replier.renderedScreen();
    return screen?.lines.map((l) => l.trimEnd());
  }

  dispose() {
    this.replier.dispose();
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

  get backlogChars() {
    return 0;
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
    const lines = this.ring.linesFrom(Math.max(0, this.ring.headSeq - n)).map((l) => l.trimEnd());
    this.model.unsync(from);
    return lines;
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
    this.pipeline = new Pipeline({ nonce, ring: this.ring, reply });
    this.pending = [];
    this.pendingChars = 0;
    this.scheduled = false;
    this.paused = false;
    this.chars = 0;
    this.since = performance.now();
    this.waiter = undefined;
    /** Per send: performance.now() of the first byte back and of the done decision. */
    this.firstByteAt = 0;
    this.exited = new Promise((resolve) => this.term.onExit(resolve));
    this.term.onData((data) => {
      if (this.firstByteAt === 0) this.firstByteAt = performance.now();
      this.chars += data.length;
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

  limitBacklog() {
    const backlog = this.pendingChars + this.pipeline.backlogChars;
    if (this.paused) {
      if (backlog <= RESUME_READING_AT_CHARS) {
        this.paused = false;
        this.term.resume();
      } else if (!this.awaiting && this.pipeline.replier !== undefined) {
        this.awaiting = true;
        void this.pipeline.replier.whenBacklogBelow(RESUME_READING_AT_CHARS).then(() => {
          this.awaiting = false;
          this.limitBacklog();
          this.checkDone();
        });
      }
      return;
    }
    if (backlog <= MAX_UNPROCESSED_OUTPUT_CHARS) return;
    this.paused = true;
    this.term.pause();
    this.limitBacklog();
  }

  checkDone() {
    if (this.waiter === undefined || this.pending.length > 0) return;
    if (this.pipeline.done()) {
      const { resolve } = this.waiter;
      this.waiter = undefined;
      this.doneAt = performance.now();
      resolve(this.doneAt - this.since);
      return;
    }
    // Today's replier parses on its own timers: look again once it is idle.
    const replier = this.pipeline.replier;
    if (replier?.busy && !this.idleWait) {
      this.idleWait = true;
      void replier.whenIdle().then(() => {
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
