/** Validation of a terminal size (`rows`/`cols` at spawn and in `session.resize()`). */
import { TerminalError } from './errors.js';

/**
 * Largest accepted rows or cols. The screen models hold `rows × cols` cells, so an unbounded size could
 * exhaust memory; 1000 × 1000 is a million cells, far beyond any real terminal.
 */
export const MAX_TERMINAL_DIMENSION = 1000;

/** Why `value` is not a valid rows/cols value, or undefined when it is. */
export function terminalDimensionProblem(value: unknown): string | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0)
    return 'must be a positive integer';
  if (value > MAX_TERMINAL_DIMENSION) return `must be at most ${MAX_TERMINAL_DIMENSION}`;
  return undefined;
}

/** Why `rows × cols` is too large for `maxCells` (config `maxScreenCells`), or undefined when it is not. */
export function screenCellsProblem(rows: number, cols: number, maxCells: number): string | undefined {
  if (rows * cols <= maxCells) return undefined;
  return `${rows} × ${cols} is ${rows * cols} cells; a terminal holds at most ${maxCells} (maxScreenCells, e.g. 500 × 500 or 250 × 1000)`;
}

/**
 * Throws TerminalError('INVALID_ARGUMENT') naming the field when `size` is not `{ rows, cols }` in range,
 * or holds more than `maxCells` cells.
 */
export function assertTerminalSize(
  size: unknown,
  maxCells = Number.POSITIVE_INFINITY,
): asserts size is { rows: number; cols: number } {
  if (typeof size !== 'object' || size === null) {
    throw new TerminalError('INVALID_ARGUMENT', 'a terminal size must be an object { rows, cols }');
  }
  for (const field of ['rows', 'cols'] as const) {
    const problem = terminalDimensionProblem((size as Record<string, unknown>)[field]);
    if (problem !== undefined)
      throw new TerminalError('INVALID_ARGUMENT', `invalid terminal ${field}: ${problem}`);
  }
  const { rows, cols } = size as { rows: number; cols: number };
  const tooLarge = screenCellsProblem(rows, cols, maxCells);
  if (tooLarge !== undefined)
    throw new TerminalError('INVALID_ARGUMENT', `invalid terminal size: ${tooLarge}`);
}
