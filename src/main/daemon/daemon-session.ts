/**
 * One session the daemon holds (SPEC §12): the engine's session plus what outlives its clients —
 * which client is attached, the send in flight when a client vanished (its result is kept for the next
 * attach), and the detached-TTL timer.
 */
import { TerminalError } from '../../shared/errors.js';
import { DisposableSlot, DisposableStore } from '../../shared/lifecycle.js';
import type {
  CloseOptions,
  ReattachReport,
  SendOperation,
  SendRequest,
  SessionListing,
  TerminalSendResult,
  TerminalSession,
} from '../../shared/types.js';
import { statusOrExited } from '../engine/session-listing.js';
import { startSendUntil, WaitEnd } from '../engine/wait-end.js';

/**
 * Bytes of lines a reattach shows at most: the tool result cap's default (SPEC §3 `maxResultBytes`),
 * so a report fits one tool result.
 */
export const REATTACH_LINE_BYTES = 64 * 1024;

/**
 * Wait bound of the send a reattach settles to read what the client missed: a wait-only send writes
 * nothing and returns what arrived since the previous result — and moves the continuity cursor past
 * it (SPEC §4.2). Short: it must not keep the client waiting on a command that is still running.
 */
const REATTACH_PROBE_MS = 200;

/** Whoever is attached: a client connection, compared by identity. */
export interface Attachment {
  /** The daemon took the session from this client (stolen by another, or closed without it asking). */
  revoke(sessionId: string, reason: string): void;
}

/** A send the daemon started for a client, and how that client's abort ends its wait. */
export interface StartedDaemonSend {
  readonly operation: SendOperation;
  /** Ends the send's wait (never the command it typed: `cancel()` is the SIGINT path). */
  endWait(): void;
}

/** A session of the daemon. */
export class DaemonSession {
  /** The client attached now (undefined while detached). */
  private attachedTo: Attachment | undefined;
  /** The latest send, while it is in flight: who started it and how to end its wait. */
  private inFlight: { by: Attachment; waitEnd: WaitEnd; done: Promise<TerminalSendResult> } | undefined;
  /** The result of a send that settled after its client had gone, kept for the next attach. */
  private orphan: TerminalSendResult | undefined;
  /** The TTL timer; disposed once the session is gone ({@link forget}). */
  private readonly owned = new DisposableStore();
  /** The detached TTL's timer, while detached. */
  private readonly ttl = this.owned.add(new DisposableSlot());
  private closing: Promise<unknown> | undefined;

  constructor(
    /** The daemon's id: a per-daemon prefix and a counter (never repeats). */
    readonly id: string,
    /** The client's name for it, unique in its scope. */
    readonly name: string | undefined,
    /** The scope key (sandbox mode and workspace root) whose clients may see it. */
    readonly scope: string,
    readonly session: TerminalSession,
    owner: Attachment,
    private readonly detachedTtlMs: number,
    private readonly onGone: (session: DaemonSession) => void,
  ) {
    this.attachedTo = owner;
  }

  /** True while `client` is the attached one. */
  isAttachedTo(client: Attachment): boolean {
    return this.attachedTo === client;
  }

  /** True while any client is attached. */
  get attached(): boolean {
    return this.attachedTo !== undefined;
  }

  /**
   * Starts a send for `client`; its result is kept as orphaned if the client is gone when it settles.
   * Returns the send and how to end its wait (the client's abort, or a reattach): one {@link WaitEnd}
   * serves both, and no AbortSignal is made for it (wait-end.ts says what one cost here).
   */
  startSend(client: Attachment, request: Omit<SendRequest, 'signal'>): StartedDaemonSend {
    const waitEnd = new WaitEnd();
    const operation = startSendUntil(this.session, request, waitEnd);
    const entry = { by: client, waitEnd, done: operation.done };
    this.inFlight = entry;
    const leaveFlight = () => {
      if (this.inFlight === entry) this.inFlight = undefined;
    };
    operation.done.then((result) => {
      leaveFlight();
      if (this.attachedTo !== client) this.orphan = result; // settled on the daemon, nobody to hand it to
    }, leaveFlight);
    return { operation, endWait: () => waitEnd.end() };
  }

  /** The listing of `engine.list()`. */
  async listing(): Promise<SessionListing> {
    // The engine's handle keeps it (keyboard-hold.ts); another engine's may not.
    const foreground = (this.session as { readonly lastForeground?: { command: string } }).lastForeground
      ?.command;
    return {
      id: this.id,
      name: this.name,
      attached: this.attached,
      pid: this.session.pid,
      status: await statusOrExited(this.session),
      busy: this.inFlight !== undefined,
      mode: this.session.sandbox?.mode ?? 'unconfined',
      dialect: this.session.dialect,
      ...heldSinceOf(this.session),
      ...(foreground === undefined ? {} : { foreground }),
    };
  }

  /**
   * Attaches `client` (refused with SESSION_ATTACHED while another one is, unless `steal`) and reports
   * what it missed. Returns the client it was taken from, if any, to be told.
   */
  async attach(
    client: Attachment,
    steal: boolean,
  ): Promise<{ report: ReattachReport; takenFrom: Attachment | undefined }> {
    const previous = this.attachedTo;
    if (previous !== undefined && previous !== client && !steal) {
      throw new TerminalError(
        'SESSION_ATTACHED',
        `session ${this.name ?? this.id} is attached to another client; attach with steal to take it`,
      );
    }
    this.attachedTo = client;
    this.stopTtl();
    return { report: await this.report(), takenFrom: previous === client ? undefined : previous };
  }

  /** `client` lets go (a detach, or its connection ended): the session keeps running, its TTL starts. */
  detach(client: Attachment): void {
    if (this.attachedTo !== client) return;
    this.attachedTo = undefined;
    if (this.detachedTtlMs > 0 && this.closing === undefined) {
      this.ttl.value = this.owned.timeout(
        'daemon session detached ttl',
        this.detachedTtlMs,
        () => void this.close(`detached for ${this.detachedTtlMs} ms (detachedTtlMs)`).catch(() => undefined),
      );
    }
  }

  /** Closes the session (idempotent while in progress; a failed close may be retried). */
  close(reason: string, options?: CloseOptions): Promise<unknown> {
    this.closing ??= this.session.close(reason, options).then(
      (outcome) => {
        this.forget(reason);
        return outcome;
      },
      (error: unknown) => {
        this.closing = undefined;
        throw error;
      },
    );
    return this.closing;
  }

  /** It is closed (by a client, its TTL, or the daemon's stop): the attached client is told. */
  forget(reason: string): void {
    this.owned.dispose(); // the TTL: a gone session arms it no more
    const client = this.attachedTo;
    this.attachedTo = undefined;
    client?.revoke(this.id, `the session was closed: ${reason}`);
    this.onGone(this);
  }

  private stopTtl(): void {
    this.ttl.clear();
  }

  /**
   * What happened while no client looked: the send that was in flight (its wait ended now if it still
   * runs: it settles `running`, nothing is signalled), then a wait-only send, whose result holds the
   * output since (or the screen) and moves the continuity cursor past what this report shows.
   */
  private async report(): Promise<ReattachReport> {
    const inFlight = this.inFlight;
    if (inFlight !== undefined) {
      inFlight.waitEnd.end(); // the session was reattached
      await inFlight.done.catch((lostWithTheSession: unknown) => void lostWithTheSession);
    }
    const orphanedResult = this.orphan;
    this.orphan = undefined;
    let probe: TerminalSendResult | undefined;
    try {
      probe = await this.session.startSend({ timeoutMs: REATTACH_PROBE_MS }).done;
    } catch (exitedOrClosed) {
      void exitedOrClosed; // an exited session's scrollback is read below
    }
    // Exact: the orphan and the probe cover every line since the last result a client got, and each
    // says how many lines its viewport holds nothing of; the report cuts the probe's lines once more.
    const omittedBefore = (orphanedResult?.omittedLines ?? 0) + (probe?.omittedLines ?? 0);
    // How far terminal_read can still page back: missed lines beyond the scrollback are gone.
    const held = await this.session.read({ count: 1 }).then(
      (page) => ({ scrollbackLines: page.totalLines }),
      () => ({}),
    );
    if (probe?.screen !== undefined) {
      // The screen stands for what the probe's lines drew: none of them is shown as a line.
      return {
        ...(orphanedResult === undefined ? {} : { orphanedResult }),
        screen: probe.screen,
        missedLines: omittedBefore + lineCount(probe.viewport),
        ...held,
      };
    }
    // An exited session has no probe: its last page stands in (lines before it are not counted).
    const text =
      probe?.viewport ??
      (await this.session.read({ count: 500 }).then(
        (page) => page.text,
        () => '',
      ));
    const lines = lastLinesWithin(text, REATTACH_LINE_BYTES);
    return {
      ...(orphanedResult === undefined ? {} : { orphanedResult }),
      lines,
      missedLines: omittedBefore + lineCount(text) - lineCount(lines),
      ...held,
    };
  }
}

/** `{ heldSince }` while a person holds the session's keyboard (SPEC §13), else nothing. */
export function heldSinceOf(session: TerminalSession): { heldSince?: number } {
  const heldSince = (session as { readonly heldSince?: number }).heldSince;
  return heldSince === undefined ? {} : { heldSince };
}

/** Lines of a text (a trailing newline ends the last line). */
function lineCount(text: string): number {
  if (text === '') return 0;
  let lines = 1;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines++;
  return text.endsWith('\n') ? lines - 1 : lines;
}

/** The last whole lines of `text` within `maxBytes` of UTF-8 (the newest output is what matters). */
function lastLinesWithin(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  const tail = bytes.subarray(bytes.length - maxBytes);
  const newline = tail.indexOf(0x0a);
  return (newline === -1 ? tail : tail.subarray(newline + 1)).toString('utf8').replace(/^\uFFFD+/, '');
}
