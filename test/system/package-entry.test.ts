/**
 * The published package: its entry exports the API of SPEC §5–§7, its `bin` and `types` point at
 * files the build produced, `exports` holds only `.`, and the tarball carries what an install needs
 * (SPEC §11: LICENSE, the native sources and the patch its install step builds from) and nothing of
 * this machine's build.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8'));
/** Names of the test hooks, as they were and as they are now. */
const HOOK_NAMES = /faultInjection|failTeardowns|FaultPlan|crashThread|ForTest/;

describe('package entry', () => {
  it('exports the engine, harness, tools, MCP server and sandbox provider', async () => {
    const entry = await import('../../dist/main/index.js');
    for (const name of [
      'createPtyEngine',
      'TerminalError',
      'TerminalBackendCleanupError',
      'createHost',
      'createLocalHost',
      'createPtyLocalPlugin',
      'createPtyService',
      'createSandboxPolicy',
      'runTerminalTool',
      'TERMINAL_TOOLS',
      'TERMINAL_TOOLS_GUIDANCE',
      'createTerminalMcpServer',
      'runMcpServer',
      'createBubblewrapSandbox',
    ]) {
      expect(entry, name).toHaveProperty(name);
    }
    expect(entry.TERMINAL_TOOLS.map((tool: { name: string }) => tool.name)).toEqual([
      'terminal_open',
      'terminal_send',
      'terminal_read',
      'terminal_signal',
      'terminal_close',
      'terminal_list',
    ]);
  });

  it('exports only `.`: the test hooks are in dist/main/engine/testing.js, which the tests import by path', async () => {
    expect(Object.keys(pkg.exports)).toEqual(['.']);
    const entry = await import('../../dist/main/index.js');
    expect(Object.keys(entry)).not.toContain('createTestingEngine');
    expect(await import('../../dist/main/engine/testing.js')).toHaveProperty('createTestingEngine');
    // The public types name no hook: not the engine's options, not the session.
    const publicTypes = ['dist/main/index.d.ts', 'dist/shared/types.d.ts', 'dist/shared/config.d.ts'];
    for (const file of publicTypes) expect(readFileSync(`${ROOT}${file}`, 'utf8')).not.toMatch(HOOK_NAMES);
    const engineTypes = readFileSync(`${ROOT}dist/main/engine/engine.d.ts`, 'utf8');
    const options = engineTypes.slice(engineTypes.indexOf('interface EngineOptions'));
    expect(options.slice(0, options.indexOf('}'))).not.toMatch(HOOK_NAMES);
  });

  it('packs LICENSE, the docs and what its install step builds from, and no build output of this machine', () => {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
        cwd: ROOT,
        encoding: 'utf8',
      }),
    );
    const files: string[] = packed.files.map((file: { path: string }) => file.path);
    expect(files).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'README.md',
        'package.json',
        'dist/main/index.js',
        'dist/main/cli/bin.js',
        'dist/worker/pty/pty-binding.js',
        'docs/decisions/0004-own-pty-build.md',
        'native/binding.gyp',
        'native/node-pty-1.1.0-pty.cc.patch',
        'native/src/local-flags.cc',
        'scripts/build-native.mjs',
        'scripts/unified-diff.mjs',
      ]),
    );
    expect(
      files.filter((file) => /^(native\/build|node_modules|patches|src|test|bench)\//.test(file)),
    ).toEqual([]);
    // The install step needs nothing the consumer lacks: plain node, no devDependency.
    expect(pkg.scripts.install).toBe('node scripts/build-native.mjs');
    expect(pkg.scripts.postinstall).toBeUndefined();
    expect(readFileSync(`${ROOT}LICENSE`, 'utf8')).toMatch(
      /^MIT License\n\nCopyright \(c\) 2026 agent-pty contributors\n/,
    );
    expect(pkg.license).toBe('MIT');
  });

  it('points main, types and the agent-pty bin at built files; engines says >=20', () => {
    expect(existsSync(`${ROOT}${pkg.main}`)).toBe(true);
    expect(existsSync(`${ROOT}${pkg.types}`)).toBe(true);
    expect(existsSync(`${ROOT}${pkg.bin['agent-pty']}`)).toBe(true);
    expect(readFileSync(`${ROOT}${pkg.bin['agent-pty']}`, 'utf8').startsWith('#!/usr/bin/env node')).toBe(
      true,
    );
    expect(pkg.engines.node).toBe('>=20');
  });
});
