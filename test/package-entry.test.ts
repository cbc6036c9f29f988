/**
 * The published package: its entry exports the API of SPEC §5–§7, and its `bin` and `types` point at
 * files the build produced.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8'));
/** Names of the test hooks, as they were and as they are now. */
const HOOK_NAMES = /faultInjection|failTeardowns|FaultPlan|crashThread|ForTest/;

describe('package entry', () => {
  it('exports the engine, harness, tools, MCP server and sandbox provider', async () => {
    const entry = await import('../dist/main/index.js');
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

  it('keeps test hooks out of the public entry: they are behind agent-pty/internal/testing', async () => {
    const entry = await import('../dist/main/index.js');
    expect(Object.keys(entry)).not.toContain('createTestingEngine');
    const testing = pkg.exports['./internal/testing'];
    expect(existsSync(`${ROOT}${testing.default}`)).toBe(true);
    expect(existsSync(`${ROOT}${testing.types}`)).toBe(true);
    expect(await import(`${ROOT}${testing.default}`)).toHaveProperty('createTestingEngine');
    // The public types name no hook: not the engine's options, not the session.
    const publicTypes = ['dist/main/index.d.ts', 'dist/shared/types.d.ts', 'dist/shared/config.d.ts'];
    for (const file of publicTypes) expect(readFileSync(`${ROOT}${file}`, 'utf8')).not.toMatch(HOOK_NAMES);
    const engineTypes = readFileSync(`${ROOT}dist/main/engine.d.ts`, 'utf8');
    const options = engineTypes.slice(engineTypes.indexOf('interface EngineOptions'));
    expect(options.slice(0, options.indexOf('}'))).not.toMatch(HOOK_NAMES);
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
