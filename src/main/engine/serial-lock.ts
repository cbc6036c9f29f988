/** A promise-based mutex: `run()` calls execute one at a time, in call order. */
export class SerialLock {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `task` after every earlier task settled; resolves or rejects like `task`. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task, task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
