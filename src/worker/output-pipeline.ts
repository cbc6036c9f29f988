/**
 * Everything that happens to a byte after the pty hands it over (SPEC §2, "Inside a session"), behind
 * one `write` / `resize` / `flush` entry: the backlog of reads and the backpressure on the pty, the
 * terminal model (replies/terminal-model.ts: one @xterm/headless terminal for screen, modes, replies
 * and the prompt marker, behind its plain-run fast path), the scrollback it fills, prompt evidence, the
 * text stream to the send in the slot and the live stream, and the raw channel with its snapshots. The
 * session composes it with the pty, the send slot and containment, and knows no fast path.
 */
import type { MessagePort } from 'node:worker_threads';
import type { EngineConfig } from '../shared/config.js';
import { TerminalError } from '../shared/errors.js';
import { DisposableOwner, type ImmediateTurn } from '../shared/lifecycle.js';
import type { Disposable, ReadRequest, ReadResult, TerminalSize, TerminalSnapshot } from '../shared/types.js';
import { LineRing } from './output/line-ring.js';
import type { LiveOutputPublisher } from './output/live-output.js';
import { OutputWindow } from './output/output-window.js';
import { RawChannel } from './output/raw-channel.js';
import { type RowEditSink, tellRowEdits } from './output/row-edit-text.js';
import { PrivateMarkerFilter } from './readiness/private-marker-filter.js';
import { PromptTracker } from './readiness/prompt-tracker.js';
import { type RenderedScreen, type StreamListener, TerminalModel } from './replies/terminal-model.js';

/** Small reads are joined up to this size; a larger read is processed alone (see `processOutput`). */
const PROCESS_SLICE_CHARS = 4 * 1024;
/**
 * Output read but not yet processed (pending reads plus the terminal model's unparsed lazy feed), in
 * characters, at most before reading pauses. xterm parses text without line feeds at ~13 MB/s here
 * while a pty delivers it several times faster; without this bound the difference queued up (17 M
 * characters of backlog for 50 MB of such text, 33 M for random bytes). Paused, the writer blocks in
 * the kernel.
 */
const MAX_UNPROCESSED_OUTPUT_CHARS = 1024 * 1024;
/** Reading resumes once the backlog fell to this: enough left to keep the parser busy meanwhile. */
const RESUME_READING_AT_CHARS = MAX_UNPROCESSED_OUTPUT_CHARS / 4;
/**
 * How long a raw subscription waits for the stream to reach a point between escape sequences (where
 * its snapshot is exact) before it starts where the stream stands: a program that stopped in the
 * middle of a sequence would otherwise keep a viewer waiting for output that may never come.
 */
const RAW_OPEN_WAIT_MS = 250;

/** Who follows the output's text besides the pipeline's own consumers: the send in the slot. */
export interface OutputListener {
  /** Text of the current line. */
  text(s: string): void;
  /** End of line. */
  newline(): void;
  /** Several lines at once. */
  textBlock(block: string): void;
  /** The current line is written again from its start. */
  rewriteLine(): void;
  /** A read's row-edit text as written, in one call (output/row-edit-text.ts). */
  rowEdits(data: string): void;
  /** One of the session's prompt markers arrived (the pipeline's prompt tracker has it). */
  markerArrived(): void;
  /** The end of one processed pty chunk: when its processing began and its length. */
  endOfChunk(processingStartedAt: number, chars: number): void;
}

/** Where the terminal model's answers go (the session's reply gate, reply-gate.ts). */
export interface ReplyPort {
  /** A reply, with the number of prompt markers parsed before the query that asked for it. */
  offer(data: string, markersBefore: number): void;
  /** A prompt marker was parsed (in stream order with the replies). */
  markerParsed(): void;
}

/** The pty's reading, which the pipeline pauses while its backlog is too large. */
export interface ReadingControl {
  pause(): void;
  resume(): void;
}

/** What a pipeline is built from. */
export interface OutputPipelineOptions {
  rows: number;
  cols: number;
  config: Pick<EngineConfig, 'maxReadBytes' | 'scrollbackLines' | 'scrollbackMaxBytes'>;
  /** The session's marker nonce (prompt-marker.ts). */
  nonce: string;
  /** The dialect's controlled prompt, which must follow the marker exactly. */
  prompt: string;
  /** The live stream's publisher (the data plane), when the session has one; owned by the pipeline. */
  live?: LiveOutputPublisher;
  replies: ReplyPort;
  /** The send that receives the stream now, if any. */
  listener: () => OutputListener | undefined;
}

/** One session's output pipeline. */
export class OutputPipeline extends DisposableOwner {
  /** Prompt evidence, fed all the time so a wait-only send sees a prompt that arrived between sends. */
  readonly prompt: PromptTracker;
  /** The session's output as results read it: committed lines and the live region. */
  readonly output: OutputWindow;
  private readonly maxReadBytes: number;
  private readonly scrollback: LineRing;
  /** The terminal: screens, modes, replies, prompt marker, snapshots; it fills the scrollback. */
  private readonly model: TerminalModel;
  private readonly live: LiveOutputPublisher | undefined;
  /** The raw channel's subscribers (SPEC §2); costs nothing while there are none. */
  private readonly raw: RawChannel;
  /** Raw subscriptions waiting for a point of the stream where their snapshot is exact. */
  private rawOpenings: RawOpening[] = [];
  private pendingOutput: string[] = [];
  /** The exact UTF-8 of each pending read where the pty's decoder vouched for it (see `write`). */
  private pendingUtf8: (Uint8Array | undefined)[] = [];
  /** Characters in `pendingOutput`. */
  private pendingChars = 0;
  private reading: ReadingControl | undefined;
  /** Reading from the pty is paused until the backlog shrinks (see MAX_UNPROCESSED_OUTPUT_CHARS). */
  private readingPaused = false;
  /** Set once the session closes: everything is read again, unbounded by backpressure. */
  private readingEverything = false;
  /**
   * The turn of output processing. Registered once, for the pipeline's life, rather than once per read:
   * a flood schedules ~20 000 turns a second, and a registration each cost ~0.45 µs more than a bare
   * `setImmediate` (about 1 % of the thread's time in a flood).
   */
  private readonly outputTurn: ImmediateTurn;
  private readonly listener: () => OutputListener | undefined;

  constructor(options: OutputPipelineOptions) {
    super();
    const { config, rows, cols, replies } = options;
    this.maxReadBytes = config.maxReadBytes;
    this.listener = options.listener;
    this.live = options.live;
    if (this.live !== undefined) this.owned.add(this.live);
    this.outputTurn = this.owned.turn('output processing', this.processOutput);
    this.raw = this.owned.add(new RawChannel(new PrivateMarkerFilter(options.nonce)));
    this.owned.own('raw openings', () => this.failRawOpenings());
    this.scrollback = new LineRing({ maxLines: config.scrollbackLines, maxBytes: config.scrollbackMaxBytes });
    this.prompt = new PromptTracker(options.nonce, options.prompt, (prompt) =>
      this.model.promptShown(prompt),
    );
    this.model = new TerminalModel({
      rows,
      cols,
      ring: this.scrollback,
      maxStringSequenceChars: config.maxReadBytes,
      maxLineChars: config.maxReadBytes,
      listener: this.textStream(),
      reply: (data, markersBefore) => replies.offer(data, markersBefore),
      marker: (payload) => {
        if (!this.prompt.osc(payload)) return false;
        replies.markerParsed();
        this.listener()?.markerArrived();
        return true;
      },
    });
    this.owned.own('terminal model', () => this.model.dispose());
    this.output = new OutputWindow(this.scrollback, this.model);
  }

  /**
   * The text stream's followers: the send in the slot, and the live stream (not while a full-screen
   * program redraws: its screen is in the send's result). A rewrite of a line the live stream left
   * empty is no news (readline's CR after a command line).
   */
  private textStream(): StreamListener {
    const { live, listener } = this;
    let liveLineOpen = false;
    const toLive = (): boolean => live?.active === true && !this.model.alternateScreen;
    /** The live stream's side of the text stream (called only while `toLive()`). */
    const liveSide: RowEditSink = {
      text: (s) => {
        live?.text(s);
        liveLineOpen = true;
      },
      newline: () => {
        live?.newline();
        liveLineOpen = false;
      },
      rewriteLine: () => {
        if (!liveLineOpen) return;
        live?.rewriteLine();
        liveLineOpen = false;
      },
    };
    return {
      active: () => listener() !== undefined || live?.active === true,
      text: (s) => {
        listener()?.text(s);
        if (toLive()) liveSide.text(s);
      },
      newline: () => {
        listener()?.newline();
        if (toLive()) liveSide.newline();
      },
      rewriteLine: () => {
        listener()?.rewriteLine();
        if (toLive()) liveSide.rewriteLine();
      },
      // The live stream gets every redraw, as one by one (a viewer sees the bar move within a read).
      rowEdits: (data) => {
        listener()?.rowEdits(data);
        if (toLive()) tellRowEdits(liveSide, data);
      },
      textBlock: (block, ascii) => {
        listener()?.textBlock(block);
        if (!toLive()) return;
        live?.textBlock(block, ascii);
        liveLineOpen = block.charCodeAt(block.length - 1) !== 0x0a;
      },
    };
  }

  /** Lets the pipeline pause the pty's reading while its backlog is too large (backpressure). */
  attach(reading: ReadingControl): void {
    this.reading = reading;
  }

  /**
   * A chunk read from the pty: processed in the next check phase of the event loop, so a prompt settles
   * without delay. Reads that arrive in the same turn are processed together. `utf8`: the read's bytes
   * when they are exactly the UTF-8 of `chunk` (pty-text-decoder.ts), which spares the scans and the
   * scrollback encoding it again.
   */
  write(chunk: string, utf8?: Uint8Array): void {
    if (this.disposed) return;
    this.pendingOutput.push(chunk);
    this.pendingUtf8.push(utf8);
    this.pendingChars += chunk.length;
    this.limitBacklog();
    this.outputTurn.schedule();
  }

  /** Processes every pending read now (before exit handling, a write boundary, a probe of /proc). */
  flush(): void {
    while (this.pendingOutput.length > 0 && !this.disposed) this.processOutput();
  }

  /**
   * Resizes at the point of the stream where the pty does: output already read was written for the old
   * size and goes through first (the program's redraw for the new size can only be read after
   * `resizePty`). When `resizePty` throws, nothing is resized.
   */
  resize(size: TerminalSize, resizePty: () => void): void {
    this.flush();
    resizePty();
    this.model.resize(size.rows, size.cols);
  }

  /** The session closes: everything is read again, and nothing more is held back by backpressure. */
  readEverything(): void {
    this.readingEverything = true;
    if (!this.readingPaused) return;
    this.readingPaused = false;
    this.reading?.resume();
  }

  /** Whether a full-screen program owns the alternate screen. */
  get alternateScreen(): boolean {
    return this.model.alternateScreen;
  }

  /** Whether the terminal is in application cursor keys mode, as parsed so far. */
  get applicationCursorKeys(): boolean {
    return this.model.applicationCursorKeys;
  }

  /**
   * True while the terminal model has output to parse that may make a reply: never, since what the
   * model takes it parses at once (its lazy feed is plain text, which asks nothing).
   */
  get parsingPending(): boolean {
    return false;
  }

  /** Prompt markers the terminal model parsed so far. */
  get markersParsed(): number {
    return this.model.markersParsed;
  }

  /** Resolves once everything fed to the terminal model is parsed and its replies offered (at once). */
  whenParsed(): Promise<void> {
    return Promise.resolve();
  }

  /** The rendered screen with everything processed so far (SPEC §4.3); undefined once closed. */
  renderedScreen(): Promise<RenderedScreen | undefined> {
    return Promise.resolve(this.disposed ? undefined : this.model.renderedScreen());
  }

  /** A page of scrollback. */
  read(request: ReadRequest): ReadResult {
    this.model.sync();
    return this.scrollback.read(request, this.maxReadBytes);
  }

  /** Live output on/off. */
  setLiveOutput(enabled: boolean): void {
    this.live?.setEnabled(enabled);
  }

  /** The terminal model serialized now (SPEC §2), every byte read so far included. */
  snapshot(): TerminalSnapshot {
    this.flush();
    if (this.disposed) throw new TerminalError('SESSION_CLOSED', 'the terminal is closed');
    return this.model.snapshot();
  }

  /**
   * Subscribes `port` to the raw channel (SPEC §2) and resolves with the snapshot its chunks continue:
   * taken at a point of the stream between escape sequences, synchronously with the subscription, so
   * no chunk falls between the two. Output read and not yet processed comes after that point.
   */
  openRaw(port: MessagePort): Promise<TerminalSnapshot> {
    return new Promise<TerminalSnapshot>((resolve, reject) => {
      const opening: RawOpening = { port, resolve, reject, timer: undefined };
      this.rawOpenings.push(opening);
      this.openPendingRaw(false);
      if (this.rawOpenings.includes(opening)) {
        opening.timer = this.owned.timeout('raw opening wait', RAW_OPEN_WAIT_MS, () =>
          this.openPendingRaw(true),
        );
      }
    });
  }

  /**
   * Where a byte goes: the terminal model (screen, replies, marker, scrollback, the text stream to the
   * send and the live stream); and the raw channel.
   *
   * Output is processed one read at a time (at most PROCESS_SLICE_CHARS of small reads together), with
   * a turn of the event loop after each, so that reading and processing alternate. This matters for
   * throughput more than per-batch savings do. The line discipline hands over at most 4 KiB per read,
   * and at flood rates that buffer fills again in about 60 µs. A reader that lets it fill makes the
   * kernel restart its flush work on every read, which costs more than processing the output
   * (bench/README.md, "What sets flood throughput": the reader must not lag).
   */
  private readonly processOutput = (): void => {
    const pending = this.pendingOutput;
    if (pending.length === 0 || this.disposed) return;
    const startedAt = performance.now();
    let take = 0;
    let chars = 0;
    while (take < pending.length && chars < PROCESS_SLICE_CHARS) chars += pending[take++]!.length;
    const slice = take === pending.length ? pending : pending.slice(0, take);
    const utf8Slice = take === pending.length ? this.pendingUtf8 : this.pendingUtf8.slice(0, take);
    this.pendingOutput = take === pending.length ? [] : pending.slice(take);
    this.pendingUtf8 = take === pending.length ? [] : this.pendingUtf8.slice(take);
    const data = slice.length === 1 ? slice[0]! : slice.join('');
    this.pendingChars -= data.length;
    this.model.write(data, joinedUtf8(utf8Slice));
    if (this.raw.active) this.raw.write(data);
    if (this.rawOpenings.length > 0) this.openPendingRaw(false);
    this.listener()?.endOfChunk(startedAt, data.length);
    this.limitBacklog();
    if (this.pendingOutput.length > 0) this.outputTurn.schedule();
  };

  /** Output read and not yet processed through the whole pipeline, in characters. */
  private unprocessedChars(): number {
    return this.pendingChars + this.model.unparsedChars;
  }

  /**
   * Backpressure: pauses reading while too much output waits to be processed, resumes once it shrank.
   * Paused, the kernel's pty buffer fills and the writing program blocks, as at a slow terminal.
   */
  private limitBacklog(): void {
    const reading = this.reading;
    if (reading === undefined || this.disposed) return;
    if (this.readingPaused) {
      // Processing the pending reads (every turn) looks again.
      if (this.unprocessedChars() <= RESUME_READING_AT_CHARS) {
        this.readingPaused = false;
        reading.resume();
      }
      return;
    }
    if (this.unprocessedChars() <= MAX_UNPROCESSED_OUTPUT_CHARS || this.readingEverything) return;
    this.readingPaused = true;
    reading.pause();
  }

  /**
   * Opens the waiting raw subscriptions if the terminal model is at a point a fresh terminal can
   * continue from (or `anyway`): everything fed is parsed first, then serialized, then subscribed,
   * with no output in between.
   */
  private openPendingRaw(anyway: boolean): void {
    const openings = this.rawOpenings;
    if (openings.length === 0) return;
    let snapshot: TerminalSnapshot;
    try {
      this.model.flush();
      if (!anyway && (!this.model.atGround || this.raw.holding)) return; // tried after the next chunk
      snapshot = this.model.snapshot();
    } catch (error) {
      this.failRawOpenings(error);
      return;
    }
    this.rawOpenings = [];
    for (const opening of openings) {
      opening.timer?.dispose();
      this.raw.subscribe(opening.port);
      opening.resolve(snapshot);
    }
  }

  /** Rejects the waiting raw subscriptions (the session closed, or the model could not be read). */
  private failRawOpenings(
    error: unknown = new TerminalError('SESSION_CLOSED', 'the session is closed'),
  ): void {
    const openings = this.rawOpenings;
    this.rawOpenings = [];
    for (const opening of openings) {
      opening.timer?.dispose();
      opening.port.close();
      opening.reject(error);
    }
  }
}

/** A raw subscription waiting for its snapshot (see `OutputPipeline.openRaw`). */
interface RawOpening {
  port: MessagePort;
  resolve: (snapshot: TerminalSnapshot) => void;
  reject: (error: unknown) => void;
  /** Bounds the wait for a point between escape sequences. */
  timer: Disposable | undefined;
}

/** The UTF-8 of reads joined, when each read's is known; undefined otherwise. */
function joinedUtf8(reads: (Uint8Array | undefined)[]): Uint8Array | undefined {
  if (reads.length === 1) return reads[0];
  for (const read of reads) if (read === undefined) return undefined;
  return Buffer.concat(reads as Uint8Array[]);
}
