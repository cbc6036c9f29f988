/** Validation of `engine.spawn()` options: bad input gets a coded error that names the field. */
import { DIALECTS, isDialect } from '../../shared/dialects.js';
import { TerminalError } from '../../shared/errors.js';
import { terminalDimensionProblem } from '../../shared/terminal-size.js';
import { SANDBOX_MODES, type SpawnOptions } from '../../shared/types.js';

/** Throws TerminalError('INVALID_ARGUMENT') naming the first invalid field. */
export function validateSpawnOptions(options: SpawnOptions): void {
  const fail = (field: string, rule: string): never => {
    throw new TerminalError('INVALID_ARGUMENT', `invalid spawn option ${field}: ${rule}`);
  };
  if (options.cwd !== undefined && (typeof options.cwd !== 'string' || options.cwd === '')) {
    fail('cwd', 'must be a non-empty path');
  }
  if (options.name !== undefined && typeof options.name !== 'string') fail('name', 'must be a string');
  if (options.dialect !== undefined && !isDialect(options.dialect)) {
    fail('dialect', `must be one of ${DIALECTS.map((name) => `'${name}'`).join(', ')}`);
  }
  for (const field of ['rows', 'cols'] as const) {
    const problem = options[field] === undefined ? undefined : terminalDimensionProblem(options[field]);
    if (problem !== undefined) fail(field, problem);
  }
  if (options.env !== undefined) {
    if (typeof options.env !== 'object' || options.env === null) fail('env', 'must be an object of strings');
    for (const [key, value] of Object.entries(options.env)) {
      if (typeof value !== 'string') fail(`env.${key}`, 'must be a string');
    }
  }
  if (options.sandbox !== undefined) {
    if (!SANDBOX_MODES.includes(options.sandbox.mode)) {
      fail('sandbox.mode', `must be one of ${SANDBOX_MODES.map((mode) => `'${mode}'`).join(', ')}`);
    }
    if (typeof options.sandbox.workspaceRoot !== 'string' || options.sandbox.workspaceRoot === '') {
      fail('sandbox.workspaceRoot', 'must be a non-empty path');
    }
    const explicit = options.sandbox.workspaceExplicit;
    if (explicit !== undefined && typeof explicit !== 'boolean')
      fail('sandbox.workspaceExplicit', 'must be a boolean');
  }
}
