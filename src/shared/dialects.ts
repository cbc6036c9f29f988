/**
 * The shell dialects the engine speaks (SPEC §8), as one list: the config schema, spawn validation, the
 * `terminal_open` schema and `agent-pty mcp --shell` all accept exactly these. Each name has one file in
 * `src/worker/shell/`.
 */

/** Every dialect name, the default first. */
export const DIALECTS = ['bash', 'zsh', 'pwsh'] as const;

/** Whether `name` is one of {@link DIALECTS}. */
export function isDialect(name: unknown): name is (typeof DIALECTS)[number] {
  return (DIALECTS as readonly unknown[]).includes(name);
}
