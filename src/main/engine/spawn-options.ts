/** Validation of `engine.spawn()` options: bad input gets a coded error that names the field. */
import { type EngineConfig, MIN_SESSION_PIDS, sessionMemoryProblem } from '../../shared/config.js';
import { DIALECTS, isDialect } from '../../shared/dialects.js';
import { TerminalError } from '../../shared/errors.js';
import { screenCellsProblem, terminalDimensionProblem } from '../../shared/terminal-size.js';
import { SANDBOX_MODES, type SpawnOptions } from '../../shared/types.js';

/** The limits of a spawn (SPEC §4.8): its own `limits`, else the engine's. */
export interface ResolvedSpawnLimits {
  memoryBytes: number;
  pids: number;
}

/** Throws TerminalError('INVALID_ARGUMENT') naming the first invalid field. */
export function validateSpawnOptions(options: SpawnOptions, config: EngineConfig): ResolvedSpawnLimits {
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
  const cells = screenCellsProblem(
    options.rows ?? config.rows,
    options.cols ?? config.cols,
    config.maxScreenCells,
  );
  if (cells !== undefined) fail(options.rows === undefined ? 'cols' : 'rows', cells);
  if (options.env !== undefined) {
    if (typeof options.env !== 'object' || options.env === null) fail('env', 'must be an object of strings');
    for (const [key, value] of Object.entries(options.env)) {
      if (typeof value !== 'string') fail(`env.${key}`, 'must be a string');
    }
  }
  if (options.baseEnv !== undefined) {
    if (typeof options.baseEnv !== 'object' || options.baseEnv === null)
      fail('baseEnv', 'must be an object of strings');
    for (const [key, value] of Object.entries(options.baseEnv)) {
      if (typeof value !== 'string') fail(`baseEnv.${key}`, 'must be a string');
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
  const record = options.record;
  if (record !== undefined && record !== true && (typeof record !== 'string' || !record.startsWith('/'))) {
    fail('record', 'must be true (a file under $XDG_STATE_HOME/agent-pty/recordings) or an absolute path');
  }
  return spawnLimits(options, config, fail);
}

/** The spawn's limits, each checked against the rule the config's own value obeys. */
function spawnLimits(
  options: SpawnOptions,
  config: EngineConfig,
  fail: (field: string, rule: string) => never,
): ResolvedSpawnLimits {
  const limits = options.limits;
  if (limits === undefined) return { memoryBytes: config.sessionMemoryBytes, pids: config.sessionPids };
  if (typeof limits !== 'object' || limits === null)
    fail('limits', 'must be an object { memoryBytes?, pids? }');
  const { memoryBytes, pids } = limits;
  const memoryProblem =
    memoryBytes === undefined ? undefined : sessionMemoryProblem(memoryBytes as number, config.tmpfsBytes);
  if (memoryProblem !== undefined) fail('limits.memoryBytes', memoryProblem);
  if (pids !== undefined && (!Number.isSafeInteger(pids) || pids < MIN_SESSION_PIDS)) {
    fail('limits.pids', `must be an integer >= ${MIN_SESSION_PIDS}`);
  }
  return { memoryBytes: memoryBytes ?? config.sessionMemoryBytes, pids: pids ?? config.sessionPids };
}
