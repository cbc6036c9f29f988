/**
 * An attempt shared by concurrent callers and remembered while it runs or once it succeeded, but
 * forgotten when it fails, so the next call tries again: a close that could not verify its teardown
 * must be retried against the live process table, never answered with the old failure.
 */

/** One memoized attempt that resets on failure. */
export class RetryableAttempt<T> {
  private attempt: Promise<T> | undefined;

  /** Whether an attempt is running or has succeeded. */
  get started(): boolean {
    return this.attempt !== undefined;
  }

  /**
   * The current attempt, or a new one made by `start`. A failed attempt is forgotten unless
   * `keepFailure()` says otherwise (the object is gone for good, and retrying cannot help).
   */
  run(start: () => Promise<T>, keepFailure: () => boolean = () => false): Promise<T> {
    if (this.attempt !== undefined) return this.attempt;
    const attempt = start().catch((error: unknown) => {
      if (!keepFailure() && this.attempt === attempt) this.attempt = undefined;
      throw error;
    });
    this.attempt = attempt;
    return attempt;
  }
}
