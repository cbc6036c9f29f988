/**
 * Where the line feeds of a chunk are, as the SIMD line-text scan finds them on its way
 * (ascii-line-scan.ts). A flood is one line every ~90 bytes; with the indices at hand, the terminal
 * model's CR check and the scrollback's line index no longer search the chunk line by line (an
 * `indexOf` per line each, costing more than the scan itself).
 *
 * One instance per session, refilled for each chunk: valid until the next scan, so consumers use it
 * synchronously and never keep it.
 */
export class LineFeeds {
  /** Indices of the chunk's line feeds in order; the first `count` entries are valid. */
  positions = new Int32Array(256);
  /** How many line feeds the chunk holds, or -1 when they are not known (then consumers search). */
  count = -1;
  /** How many CRs the chunk holds (when `count` is known). */
  crCount = 0;

  /** Forgets the previous chunk's line feeds; the next {@link add} calls record a new one. */
  reset(): void {
    this.count = 0;
    this.crCount = 0;
  }

  /** Marks the line feeds as not known for this chunk. */
  invalidate(): void {
    this.count = -1;
  }

  /** Records `count` line feeds found at `source[0, count)` + `offset`, and `crs` more CRs. */
  add(source: Int32Array, count: number, crs: number, offset: number): void {
    const total = this.count + count;
    if (total > this.positions.length) {
      const grown = new Int32Array(Math.max(total, this.positions.length * 2));
      grown.set(this.positions.subarray(0, this.count));
      this.positions = grown;
    }
    const positions = this.positions;
    for (let k = 0, at = this.count; k < count; k++, at++) positions[at] = source[k]! + offset;
    this.count = total;
    this.crCount += crs;
  }

  /** Known line feeds, or undefined: what consumers take. */
  get known(): LineFeeds | undefined {
    return this.count >= 0 ? this : undefined;
  }
}
