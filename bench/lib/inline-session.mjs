/**
 * The inline baseline: the engine's own session core (pty, terminal model, scrollback, readiness)
 * running on the host thread instead of an engine thread. Same code, same configuration — the only
 * difference to the engine is where it runs, which is what the event-loop comparison is about.
 */
import { performance } from 'node:perf_hooks';
import { resolveEngineConfig } from '../../dist/shared/config.js';
import { SessionCore } from '../../dist/worker/session.js';

/**
 * A stand-in for the engine thread's live-output publisher that only timestamps: the session core
 * calls it synchronously for every piece of sanitized output, so `lastOutputAt` is exact (no batching,
 * no thread hop).
 */
export class OutputClock {
  constructor() {
    this.lastOutputAt = 0;
  }
  /** Always listening: the pipeline tells the live stream only while it is active (a subscriber reads). */
  get active() {
    return true;
  }
  text() {
    this.lastOutputAt = performance.now();
  }
  newline() {
    this.lastOutputAt = performance.now();
  }
  rewriteLine() {
    this.lastOutputAt = performance.now();
  }
  textBlock() {
    this.lastOutputAt = performance.now();
  }
  setEnabled() {}
  dispose() {}
}

let nextInlineId = 1;

/** A session core on this thread. */
export class InlineSession {
  /** Launches bash and resolves once its startup settled. `config` overrides engine defaults. */
  static async start(config = {}, clock = undefined) {
    const resolved = resolveEngineConfig(config);
    const spec = {
      id: `inline${nextInlineId++}`,
      cwd: process.cwd(),
      env: undefined,
      dialect: 'bash',
      rows: resolved.rows,
      cols: resolved.cols,
      config: resolved,
      pidNamespace: false,
    };
    const core = new SessionCore(spec, clock);
    // The bash dialect's default argv (SPEC §3), unconfined: what the engine would launch.
    const info = core.launch(core.plan().argv);
    await core.awaitStartup();
    return new InlineSession(core, info.identity.pid);
  }

  constructor(core, pid) {
    this.core = core;
    this.pid = pid;
    this.nextSendId = 1;
  }

  /**
   * Starts a send; `{ done, cancel }` like the engine's SendOperation. Await `slotFree()` after the
   * previous send's `done` first.
   */
  startSend(text, submit = true) {
    const id = this.nextSendId++;
    this.core.startSend(id, { text, submit });
    return { done: this.core.awaitSend(id), cancel: () => this.core.cancelSend(id) };
  }

  /**
   * Resolves once the previous send released the slot. The core releases it a few microtasks after
   * `done` (once no write or signal of that send can still happen); through the engine the thread hop
   * hides this, inline a send started in the same tick as the previous `done` gets SEND_ACTIVE.
   */
  slotFree() {
    return new Promise((resolve) => setImmediate(resolve));
  }

  /**
   * Sends and resolves `{ result, ms, settledAt }`: the send→settle time and the `performance.now()` at
   * which `done` resolved. The slot is free once this resolves.
   */
  async send(text) {
    const started = performance.now();
    const result = await this.startSend(text).done;
    const settledAt = performance.now();
    await this.slotFree();
    return { result, ms: settledAt - started, settledAt };
  }

  /** Tears the session down. */
  close() {
    return this.core.close('bench done');
  }
}
