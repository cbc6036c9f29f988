/**
 * Races a session's many short calls against the few promises that end them all (the engine thread's
 * death, the session's closed port), without a reaction per call on those long-lived promises.
 *
 * `Promise.race([call, death])` adds a reaction to `death` for every call, and `death` keeps it until
 * it settles — usually never, for a session that closes normally. Each reaction holds the race's
 * promise, and so the call's result: a session kept ~0.9 KB per call for its whole life (40 000
 * `read`s: +36 MB of heap, `test/fixtures/call-heap-host.mjs`). Here each ender gets one reaction, and a
 * call in flight is one entry in a set, removed when it settles.
 */
export class CallRace {
  /** The rejecters of the calls in flight. */
  private readonly inFlight = new Set<(error: unknown) => void>();
  /** Set once an ender rejected: every call from then on rejects with its error. */
  private failure: { error: unknown } | undefined;

  /** `enders` reject when no call can be answered any more; they never fulfil. */
  constructor(enders: readonly Promise<never>[]) {
    for (const ender of enders) ender.catch((error: unknown) => this.fail(error));
  }

  /** Settles like `call`, or rejects with an ender's error if that comes first. */
  race<T>(call: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.failure !== undefined) {
        call.catch(() => undefined); // its answer, if one ever comes, has nobody to go to
        reject(this.failure.error);
        return;
      }
      this.inFlight.add(reject);
      call.then(
        (value) => {
          this.inFlight.delete(reject);
          resolve(value);
        },
        (error: unknown) => {
          this.inFlight.delete(reject);
          reject(error);
        },
      );
    });
  }

  private fail(error: unknown): void {
    if (this.failure !== undefined) return;
    this.failure = { error };
    for (const reject of this.inFlight) reject(error);
    this.inFlight.clear();
  }
}
