/**
 * Everything that happens to a byte after the pty hands it over (SPEC §2, "Inside a session"), behind
 * one `write` / `resize` / `flush` entry: the backlog of reads and the backpressure on the pty, the
 * classification of each chunk and the fast paths it selects, the terminal model (the replier's
 * @xterm/headless terminal, which also answers queries), the sanitized line stream into the output
 * model, scrollback, prompt evidence, the send in the slot and the live stream, and the raw channel
 * with its snapshots. The session composes it with the pty, the send slot and containment, and knows no
 * consumer's fast path.
 */
import type { MessagePort } from 'node:worker_threads';
import type { EngineConfig } from '../shared/config.js';
import { TerminalError } from '../shared/errors.js';
import { DisposableOwner } from '../shared/lifecycle.js';
import type { Disposable, ReadRequest, ReadResult, TerminalSize, TerminalSnapshot } from '../shared/types.js';
import { LineFeeds } from './output/line-feeds.js';
import { LineRing } from './output/line-ring.js';
import { LineTextKind, lineTextKind } from './output/line-text.js';
import type { LiveOutputPublisher } from './output/live-output.js';
import { OutputModel } from './output/output-model.js';
import { OutputWindow } from './output/output-window.js';
import { RawChannel } from './output/raw-channel.js';
import { OutputSanitizer, type SanitizerSink } from './output/sanitizer.js';
import { PrivateMarkerFilter } from './readiness/private-marker-filter.js';
import { parseOwnedMarker } from './readiness/prompt-marker.js';
import { PromptTracker } from './readiness/prompt-tracker.js';
import { TerminalReplier } from './replies/terminal-replier.js';

/** Small reads are joined up to this size; a larger read is processed alone (see `processOutput`). */
const PROCESS_SLICE_CHARS = 4 * 1024;
/**
 * Output read but not yet processed (pending reads plus the replier's unparsed backlog), in characters,
 * at most before reading pauses. xterm parses text without line feeds at ~13 MB/s here while a pty
 * delivers it several times faster; without this bound the difference queued up (17 M characters of
 * backlog for 50 MB of such text, 33 M for random bytes). Paused, the writer blocks in the kernel.
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

/** Who receives the sanitized stream besides the pipeline's own consumers: the send in the slot. */
export interface OutputListener {
  /** Sanitized text of the current line. */
  text(s: string): void;
  /** End of line. */
  newline(): void;
  /** Several lines at once. */
  textBlock(block: string): void;
  /** Carriage-return rewrite of the current line. */
  rewriteLine(): void;
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
  /** What a person would see (SPEC §4.3): the live region over the scrollback. */
  private readonly model: OutputModel;
  private readonly sanitizer: OutputSanitizer;
  private readonly sink: SanitizerSink;
  /** The terminal model: screens, modes, replies, snapshots. */
  private readonly replier: TerminalReplier;
  private readonly live: LiveOutputPublisher | undefined;
  /** The raw channel's subscribers (SPEC §2); costs nothing while there are none. */
  private readonly raw: RawChannel;
  /** Raw subscriptions waiting for a point of the stream where their snapshot is exact. */
  private rawOpenings: RawOpening[] = [];
  private pendingOutput: string[] = [];
  /** Characters in `pendingOutput`. */
  private pendingChars = 0;
  private reading: ReadingControl | undefined;
  /** Reading from the pty is paused until the backlog shrinks (see MAX_UNPROCESSED_OUTPUT_CHARS). */
  private readingPaused = false;
  /** Set once the session closes: everything is read again, unbounded by backpressure. */
  private readingEverything = false;
  /** A look at the replier's backlog is scheduled (see `awaitReplierBacklog`). */
  private awaitingReplier = false;
  private outputScheduled = false;
  /**
   * The scheduled turn of output processing. Registered once, for the pipeline's life, rather than
   * once per read: a flood schedules ~20 000 turns a second, and a registration each cost ~0.45 µs more
   * than a bare `setImmediate` (about 1 % of the thread's time in a flood).
   */
  private outputTurn: NodeJS.Immediate | undefined;
  /** Where the line feeds of the chunk being processed are (filled by its line-text scan). */
  private readonly lineFeeds = new LineFeeds();
  private readonly listener: () => OutputListener | undefined;

  constructor(options: OutputPipelineOptions) {
    super();
    const { config, rows, cols } = options;
    this.maxReadBytes = config.maxReadBytes;
    this.listener = options.listener;
    this.live = options.live;
    if (this.live !== undefined) this.owned.add(this.live);
    this.owned.own('output processing', () => clearImmediate(this.outputTurn));
    this.raw = this.owned.add(new RawChannel(new PrivateMarkerFilter(options.nonce)));
    this.owned.own('raw openings', () => this.failRawOpenings());
    this.scrollback = new LineRing({ maxLines: config.scrollbackLines, maxBytes: config.scrollbackMaxBytes });
    this.model = new OutputModel({ rows, cols, ring: this.scrollback, maxLineChars: config.maxReadBytes });
    this.output = new OutputWindow(this.scrollback, this.model);
    this.prompt = new PromptTracker(options.nonce, options.prompt);
    this.sanitizer = new OutputSanitizer({ maxPendingChars: config.maxReadBytes, columns: cols });
    const { replies, nonce } = options;
    this.replier = this.owned.add(
      new TerminalReplier({
        cols,
        rows,
        maxStringSequenceChars: config.maxReadBytes,
        reply: (data, markersBefore) => replies.offer(data, markersBefore),
        isPromptMarker: (payload) => parseOwnedMarker(payload, nonce) !== undefined,
        onPromptMarker: () => replies.markerParsed(),
      }),
    );
    this.sink = this.lineStream();
  }

  /**
   * The sanitizer's consumers. The output model feeds the scrollback. The send and the live stream see
   * the stream itself (the live stream not while a full-screen program redraws: its screen is in the
   * send's result). A rewrite of a line the live stream left empty is no news (readline's CR after a
   * command line).
   */
  private lineStream(): SanitizerSink {
    const { model, prompt, live, listener } = this;
    let liveLineOpen = false;
    return {
      text: (s) => {
        model.text(s);
        prompt.text(s);
        listener()?.text(s);
        if (model.alternateScreen) return;
        live?.text(s);
        liveLineOpen = true;
      },
      newline: () => {
        model.newline();
        prompt.newline();
        listener()?.newline();
        if (model.alternateScreen) return;
        live?.newline();
        liveLineOpen = false;
      },
      rewriteLine: () => {
        model.rewriteLine();
        prompt.rewriteLine();
        listener()?.rewriteLine();
        if (model.alternateScreen || !liveLineOpen) return;
        live?.rewriteLine();
        liveLineOpen = false;
      },
      textBlock: (block, ascii, lineFeeds) => {
        model.textBlock(block, ascii, lineFeeds);
        prompt.textBlock(block);
        listener()?.textBlock(block);
        if (model.alternateScreen) return;
        live?.textBlock(block, ascii);
        liveLineOpen = block.charCodeAt(block.length - 1) !== 0x0a;
      },
      osc: (payload) => {
        const ours = prompt.osc(payload);
        // The shell's own prompt means a full-screen program that died without leaving is gone.
        if (ours && model.alternateScreen) model.shellPrompted();
        if (ours) listener()?.markerArrived();
      },
      backspace: () => model.backspace(),
      csi: (params, final) => model.csi(params, final),
      escape: (final) => model.escape(final),
    };
  }

  /** Lets the pipeline pause the pty's reading while its backlog is too large (backpressure). */
  attach(reading: ReadingControl): void {
    this.reading = reading;
  }

  /**
   * A chunk read from the pty: processed in the next check phase of the event loop, so a prompt settles
   * without delay. Reads that arrive in the same turn are processed together.
   */
  write(chunk: string): void {
    if (this.disposed) return;
    this.pendingOutput.push(chunk);
    this.pendingChars += chunk.length;
    this.limitBacklog();
    if (this.outputScheduled) return;
    this.outputScheduled = true;
    this.outputTurn = setImmediate(this.processOutput);
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
    const { rows, cols } = size;
    this.replier.resize(cols, rows);
    this.model.resize(rows, cols);
    this.sanitizer.columns = cols;
  }

  /** The session closes: everything is read again, and nothing more is held back by backpressure. */
  readEverything(): void {
    this.readingEverything = true;
    if (!this.readingPaused) return;
    this.readingPaused = false;
    this.reading?.resume();
  }

  /** Whether a full-screen program owns the alternate screen (as the output model saw it). */
  get alternateScreen(): boolean {
    return this.model.alternateScreen;
  }

  /** Whether the terminal is in application cursor keys mode, as parsed so far. */
  get applicationCursorKeys(): boolean {
    return this.replier.applicationCursorKeys;
  }

  /** True while the terminal model has output to parse that may make a reply. */
  get parsingPending(): boolean {
    return this.replier.busy;
  }

  /** Prompt markers the terminal model parsed so far. */
  get markersParsed(): number {
    return this.replier.markersParsed;
  }

  /** Resolves once everything fed to the terminal model is parsed and its replies offered. */
  whenParsed(): Promise<void> {
    return this.replier.whenIdle();
  }

  /** The rendered screen once everything read so far is parsed (SPEC §4.3); undefined once closed. */
  renderedScreen(): ReturnType<TerminalReplier['renderedScreen']> {
    return this.replier.renderedScreen();
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
    this.replier.flushSync();
    return this.replier.snapshot();
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
   * Where a byte goes: terminal model (queries, screen), sanitizer → output model, prompt evidence,
   * send, live stream; and the raw channel.
   *
   * Output is processed one read at a time (at most PROCESS_SLICE_CHARS of small reads together), with
   * a turn of the event loop after each, so that reading and processing alternate. This matters for
   * throughput more than per-batch savings do. The line discipline hands over at most 4 KiB per read,
   * and at flood rates that buffer fills again in about 60 µs. A reader that lets it fill makes the
   * kernel restart its flush work on every read, which costs more than processing the output
   * (bench/README.md, "What sets flood throughput": the reader must not lag).
   */
  private readonly processOutput = (): void => {
    this.outputScheduled = false;
    const pending = this.pendingOutput;
    if (pending.length === 0 || this.disposed) return;
    const startedAt = performance.now();
    let take = 0;
    let chars = 0;
    while (take < pending.length && chars < PROCESS_SLICE_CHARS) chars += pending[take++]!.length;
    const slice = take === pending.length ? pending : pending.slice(0, take);
    this.pendingOutput = take === pending.length ? [] : pending.slice(take);
    const data = slice.length === 1 ? slice[0]! : slice.join('');
    this.pendingChars -= data.length;
    this.route(data);
    if (this.raw.active) this.raw.write(data);
    if (this.rawOpenings.length > 0) this.openPendingRaw(false);
    this.listener()?.endOfChunk(startedAt, data.length);
    this.limitBacklog();
    if (this.pendingOutput.length > 0 && !this.outputScheduled) {
      this.outputScheduled = true;
      this.outputTurn = setImmediate(this.processOutput);
    }
  };

  /**
   * Classifies a chunk once and feeds the terminal model and the sanitizer through the entries that
   * classification allows (line-text.ts): a plain flood is not scanned twice.
   */
  private route(data: string): void {
    const kind = lineTextKind(data, this.lineFeeds);
    if (kind !== LineTextKind.None) {
      const lineFeeds = this.lineFeeds.known; // where the scan found line feeds (ASCII chunks)
      this.replier.feedLineText(data, lineFeeds);
      this.sanitizer.pushLineText(data, this.sink, kind === LineTextKind.Ascii, lineFeeds);
      return;
    }
    // The sanitizer goes first here: when it finds the chunk to be styled line text, the terminal model
    // need not scan it. (Both only see the chunk; the order between them changes nothing else.)
    const styled = this.sanitizer.pushStyled(data, this.sink, this.lineFeeds);
    if (styled === 'whole') this.replier.feedStyledLineText(data);
    else this.replier.feed(data);
  }

  /** Output read and not yet processed through the whole pipeline, in characters. */
  private unprocessedChars(): number {
    return this.pendingChars + this.replier.backlogChars;
  }

  /**
   * Backpressure: pauses reading while too much output waits to be processed, resumes once it shrank.
   * Paused, the kernel's pty buffer fills and the writing program blocks, as at a slow terminal.
   */
  private limitBacklog(): void {
    const reading = this.reading;
    if (reading === undefined || this.disposed) return;
    if (this.readingPaused) {
      if (this.unprocessedChars() > RESUME_READING_AT_CHARS) this.awaitReplierBacklog();
      else {
        this.readingPaused = false;
        reading.resume();
      }
      return;
    }
    if (this.unprocessedChars() <= MAX_UNPROCESSED_OUTPUT_CHARS || this.readingEverything) return;
    this.readingPaused = true;
    reading.pause();
    this.awaitReplierBacklog();
  }

  /**
   * While paused: looks again once the replier's backlog shrank. Only while that backlog is what holds
   * the pause; otherwise pending reads do, and processing them (every turn) looks again.
   */
  private awaitReplierBacklog(): void {
    if (this.awaitingReplier || this.replier.backlogChars < RESUME_READING_AT_CHARS) return;
    this.awaitingReplier = true;
    void this.replier.whenBacklogBelow(RESUME_READING_AT_CHARS).then(() => {
      this.awaitingReplier = false;
      this.limitBacklog();
    });
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
      this.replier.flushSync();
      if (!anyway && (!this.replier.atGround || this.raw.holding)) return; // tried after the next chunk
      snapshot = this.replier.snapshot();
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
