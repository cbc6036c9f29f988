/**
 * The folders are the architecture (SPEC §2): src/shared imports neither src/main nor src/worker;
 * src/worker never imports src/main; src/main never imports node-pty or @xterm/headless (the host thread
 * only holds proxies). These rules are checked on the source text of every module.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)[^'"]*from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
}

const layerOf = (file: string) => relative(SRC, file).split('/')[0]!;

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

  for (const file of files) {
    const layer = layerOf(file);
    const name = relative(SRC, file);
    it(`${name} respects the import rules of src/${layer}`, () => {
      for (const spec of importsOf(file)) {
        const target = spec.startsWith('.') ? layerOf(join(file, '..', spec)) : spec;
        if (layer === 'shared') expect(['main', 'worker']).not.toContain(target);
        if (layer === 'worker') expect(target).not.toBe('main');
        if (layer === 'main') {
          expect(target).not.toMatch(/^(node-pty|@xterm\/headless)/);
          expect(target, 'the host reaches worker code only through the engine thread').not.toBe('worker');
        }
      }
    });
  }
});
