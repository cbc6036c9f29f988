/**
 * The folders are the architecture (SPEC §2): src/shared imports neither src/main nor src/worker;
 * src/worker never imports src/main; src/main never imports node-pty or @xterm/headless (the host thread
 * only holds proxies). Inside src/worker and src/main, each folder is a stage and imports only the
 * stages listed for it in FOLDER_IMPORTS. The front ends — tools, MCP server, CLI — reach sessions only
 * through `ctx.pty` (the harness) or the engine's public API, never through the engine's own modules.
 * These rules are checked on the source text of every module.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SRC, sourceFiles } from '../support/source-tree.js';

const TEST = fileURLToPath(new URL('..', import.meta.url));

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)[^'"]*from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
}

const layerOf = (file: string) => relative(SRC, file).split('/')[0]!;

/** Folders of the front ends (paths relative to src/). */
const FRONT_ENDS = ['main/tools/', 'main/mcp/', 'main/cli/'];

/**
 * What a front end may take from the engine's own modules (src/main/engine/), by name: the public
 * engine API, what the package entry exports from engine.ts.
 */
const ENGINE_API: Record<string, readonly string[]> = {
  'main/engine/engine.ts': ['createPtyEngine', 'EngineOptions', 'EngineInternals'],
};

/**
 * The allowed directions between folders, by the folder a module is in (relative to src/; `worker` and
 * `main` are the modules at those roots). A folder imports its own modules, src/shared, and the folders
 * listed here; nothing else. Every folder of src/worker and src/main must be listed.
 */
const FOLDER_IMPORTS: Record<string, readonly string[]> = {
  shared: [],
  // src/worker, from where a byte enters to where a process dies.
  'worker/pty': [], // where a byte enters and leaves: the pty binding, its writer, its drain proof
  'worker/proc': [], // what the kernel says: /proc readers, the syscall table, stdin-wait evidence
  'worker/output': [], // scrollback, output window, line-text scan, live output
  'worker/replies': ['worker/output', 'worker/proc'], // answers to terminal queries, gated by waits
  'worker/readiness': ['worker/output', 'worker/proc', 'worker/pty'], // the send lifecycle and verdict
  'worker/shell': ['worker/readiness', 'worker/proc'], // the dialects: startup, marker, policy
  'worker/containment': ['worker/proc'], // cgroup, teardown, environment
  worker: [
    'worker/pty',
    'worker/proc',
    'worker/output',
    'worker/replies',
    'worker/readiness',
    'worker/shell',
    'worker/containment',
  ], // session.ts: the composition root
  'worker/thread': ['worker', 'worker/containment', 'worker/output'], // the Piscina task, heartbeat, thread faults
  // src/main, the host thread.
  'main/engine': [], // the engine client: Piscina pool, thread proxies, heartbeat monitor, exit guard
  'main/sandbox': [],
  'main/worlds': ['main/engine', 'main/sandbox'], // execution worlds: client, server, link
  'main/daemon': ['main/engine', 'main/sandbox', 'main/worlds'], // the per-user daemon (SPEC §12)
  'main/harness': ['main/engine', 'main/sandbox', 'main/worlds'],
  'main/tools': ['main/harness'],
  'main/watch': ['main/engine', 'main/tools', 'main/worlds'], // the watch page's server (SPEC §13): guard, viewers, URL file
  'main/mcp': ['main/harness', 'main/tools', 'main/worlds', 'main/daemon', 'main/watch'],
  'main/cli': [
    'main/engine',
    'main/harness',
    'main/mcp',
    'main/tools',
    'main/worlds',
    'main/daemon',
    'main/watch',
  ],
  main: ['main/engine', 'main/sandbox', 'main/worlds', 'main/harness', 'main/tools', 'main/mcp'], // index.ts: the package entry
};

/** The folder of FOLDER_IMPORTS that `file` (relative to src/) is in. */
function folderOf(file: string): string {
  const parts = file.split('/');
  return parts[0] === 'shared' ? 'shared' : parts.slice(0, Math.min(2, parts.length - 1)).join('/');
}

/** One import or re-export of a module: its specifier and the names it takes ('*': all of them). */
interface ImportClause {
  spec: string;
  names: string[] | '*';
}

/** The imports and re-exports in `text`, with the names each takes. */
function importClauses(text: string): ImportClause[] {
  const clauses: ImportClause[] = [];
  for (const m of text.matchAll(
    /^\s*(?:import|export)\s+(?:type\s+)?([^'"]*?)\s*from\s+['"]([^'"]+)['"]/gm,
  )) {
    const what = m[1]!;
    const braces = /\{([^}]*)\}/.exec(what);
    const named = braces?.[1]
      ?.split(',')
      .map(
        (part) =>
          part
            .trim()
            .replace(/^type\s+/, '')
            .split(/\s+as\s+/)[0]!,
      )
      .filter((name) => name !== '');
    // A default or namespace import (or `export *`) takes more than named parts.
    const rest = what.replace(/\{[^}]*\}/, '').replace(/[\s,]/g, '');
    clauses.push({ spec: m[2]!, names: rest === '' && named !== undefined ? named : '*' });
  }
  return clauses;
}

/**
 * Why an import of a front-end module (`from`, relative to src/) breaks the front-end rule, or undefined
 * when it does not: src/worker and src/main/engine (the engine's own: the thread proxy, the heartbeat
 * monitor and host-exit guard, the internal test entry) are closed to the front ends; from engine.ts
 * they take only the public API.
 */
function frontEndViolation(from: string, clause: ImportClause): string | undefined {
  if (!FRONT_ENDS.some((folder) => from.startsWith(folder)) || !clause.spec.startsWith('.')) return undefined;
  const target = join(from, '..', clause.spec).replace(/\.js$/, '.ts');
  if (target.startsWith('worker/')) return `${from} imports ${target}: engine-thread code`;
  if (!target.startsWith('main/engine/')) return undefined;
  const allowed = ENGINE_API[target] ?? [];
  const names = clause.names === '*' ? ['*'] : clause.names;
  const closed = names.filter((name) => !allowed.includes(name));
  return closed.length === 0
    ? undefined
    : `${from} takes ${closed.join(', ')} from ${target}: an engine internal`;
}

describe('architecture', () => {
  const files = sourceFiles(SRC);

  it('has modules in all three layers', () => {
    expect(new Set(files.map(layerOf))).toEqual(new Set(['shared', 'worker', 'main']));
  });

  it('has no import cycles', () => {
    const graph = new Map<string, string[]>();
    for (const file of files) {
      const targets = importsOf(file)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => join(file, '..', spec).replace(/\.js$/, '.ts'));
      graph.set(file, targets);
    }
    const state = new Map<string, 'visiting' | 'done'>();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'visiting') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(SRC, f)).join(' → '));
        return;
      }
      state.set(file, 'visiting');
      for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of files) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it('states the directions of every folder of src/worker and src/main', () => {
    const folders = new Set(files.map((file) => folderOf(relative(SRC, file))));
    expect([...folders].filter((folder) => FOLDER_IMPORTS[folder] === undefined)).toEqual([]);
  });

  it('lists the sandbox modes in one place (SANDBOX_MODES in src/shared/types.ts)', () => {
    const listing = files.filter((file) =>
      /'read-only',\s*'workspace-write'/.test(readFileSync(file, 'utf8')),
    );
    expect(listing.map((file) => relative(SRC, file))).toEqual(['shared/types.ts']);
  });

  it('front ends reach sessions only through ctx.pty or the engine API (the rule itself)', () => {
    const violation = (from: string, line: string) => frontEndViolation(from, importClauses(line)[0]!);
    // What the front ends do today.
    expect(
      violation('main/cli/bin.ts', "import { createPtyEngine } from '../engine/engine.js';"),
    ).toBeUndefined();
    expect(
      violation('main/tools/tool.ts', "import type { PtyService } from '../harness/pty-service.js';"),
    ).toBe(undefined);
    expect(
      violation('main/cli/demo.ts', "import { findOnPath } from '../../shared/find-on-path.js';"),
    ).toBeUndefined();
    expect(violation('main/mcp/x.ts', "import type { TerminalSession } from '../../shared/types.js';")).toBe(
      undefined,
    );
    // What they must not do.
    expect(
      violation('main/tools/x.ts', "import { ThreadSession } from '../engine/thread-session.js';"),
    ).toMatch(/engine internal/);
    expect(violation('main/mcp/x.ts', "import { raceDeath } from '../engine/thread-session.js';")).toMatch(
      /engine internal/,
    );
    expect(
      violation('main/cli/x.ts', "import { Engine, createPtyEngine } from '../engine/engine.js';"),
    ).toMatch(/takes Engine from main\/engine\/engine.ts/);
    expect(violation('main/cli/x.ts', "import * as engine from '../engine/engine.js';")).toMatch(
      /engine internal/,
    );
    expect(violation('main/cli/x.ts', "export * from '../engine/engine.js';")).toMatch(/engine internal/);
    expect(
      violation('main/tools/x.ts', "import { createTestingEngine } from '../engine/testing.js';"),
    ).toMatch(/engine internal/);
    expect(violation('main/tools/x.ts', "import { SessionCore } from '../../worker/session.js';")).toMatch(
      /engine-thread code/,
    );
    // Elsewhere in src/main the engine's modules are open.
    expect(
      violation('main/engine/engine.ts', "import { ThreadSession } from './thread-session.js';"),
    ).toBeUndefined();
  });

  for (const file of files) {
    const layer = layerOf(file);
    const name = relative(SRC, file);
    it(`${name} respects the import rules of src/${layer}`, () => {
      for (const spec of importsOf(file)) {
        const target = spec.startsWith('.') ? layerOf(join(file, '..', spec)) : spec;
        if (layer === 'shared') expect(['main', 'worker']).not.toContain(target);
        if (layer === 'worker') expect(target).not.toBe('main');
        if (layer === 'main') {
          expect(target).not.toMatch(/^(node-pty|@xterm\/)/);
          expect(target, 'the host reaches worker code only through the engine thread').not.toBe('worker');
        }
      }
      const folder = folderOf(name);
      const allowed = [folder, 'shared', ...(FOLDER_IMPORTS[folder] ?? [])];
      for (const spec of importsOf(file).filter((spec) => spec.startsWith('.'))) {
        const target = folderOf(relative(SRC, join(file, '..', spec)));
        expect(
          allowed,
          `${name} imports ${spec}: src/${target} is not a direction of src/${folder}`,
        ).toContain(target);
      }
      const violations = importClauses(readFileSync(file, 'utf8'))
        .map((clause) => frontEndViolation(name, clause))
        .filter((violation) => violation !== undefined);
      expect(violations, 'front ends reach sessions only through ctx.pty or the engine API').toEqual([]);
    });
  }

  it('keeps the test projects apart: unit tests start no process and import src/, system tests import dist/', () => {
    const misplaced: string[] = [];
    for (const file of sourceFiles(join(TEST, 'unit'))) {
      for (const spec of importsOf(file)) {
        if (/(^|\/)dist\/|^node-pty$|^node:child_process$|support\/engine\.js$/.test(spec))
          misplaced.push(`${relative(TEST, file)} imports ${spec}`);
      }
    }
    for (const file of sourceFiles(join(TEST, 'system'))) {
      for (const spec of importsOf(file)) {
        if (/(^|\/)src\//.test(spec)) misplaced.push(`${relative(TEST, file)} imports ${spec}`);
      }
    }
    expect(misplaced).toEqual([]);
  });
});
