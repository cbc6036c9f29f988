/**
 * Workspace roots too broad to bind (SPEC §4.1): `/`, `$HOME` or an ancestor of `$HOME`. Bound
 * writable, `/` would make the whole filesystem writable over the read-only root, and `$HOME` every
 * credential store in it; so such a root is refused for `workspace-write` unless it was named
 * explicitly (`/` always), and the MCP server and the CLI started in one without `--workspace` run
 * `read-only` and say so. Path arithmetic only: callers pass the home directory.
 */
import path from 'node:path';
import { TerminalError } from './errors.js';
import type { SandboxMode } from './types.js';

/** True when `target` is `dir` or lies below it (both absolute). */
export function isInside(dir: string, target: string): boolean {
  const relative = path.relative(dir, target);
  return (
    relative === '' ||
    (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
  );
}

/** True when `target` lies below `dir`, not at it. */
export function isStrictlyInside(dir: string, target: string): boolean {
  return isInside(dir, target) && path.relative(dir, target) !== '';
}

/** What makes `root` too broad a workspace, in words, or undefined when it is not. */
export function broadWorkspace(root: string, home: string): string | undefined {
  const dir = path.resolve(root);
  if (dir === path.parse(dir).root) return 'the whole filesystem';
  if (dir === path.resolve(home)) return 'your home directory';
  if (isInside(dir, home)) return 'a directory that contains your home directory';
  return undefined;
}

/** Throws `INVALID_ARGUMENT` when `root` is `/` and `mode` would make it writable. */
export function refuseWritableFilesystemRoot(mode: SandboxMode, root: string): void {
  const dir = path.resolve(root);
  if (mode !== 'workspace-write' || dir !== path.parse(dir).root) return;
  throw new TerminalError(
    'INVALID_ARGUMENT',
    `workspace root ${dir} is the whole filesystem and cannot be writable: name a project directory ` +
      'as the workspace, or use sandbox mode read-only',
  );
}

/** The mode a front end started without `--workspace` runs in, and what it must tell the user. */
export interface ImplicitWorkspace {
  /** `read-only` in place of a confined mode when the directory is too broad; else the mode asked for. */
  mode: SandboxMode;
  /** Set when the mode was narrowed: one line saying why and what to pass instead. */
  notice?: string;
}

/**
 * For `agent-pty mcp` and the CLI when no `--workspace` was given: a confined `mode` in a `cwd` that
 * is too broad ({@link broadWorkspace}) becomes `read-only` with a private `$HOME`, and says so;
 * `danger-full-access` has no sandbox to narrow and stays.
 */
export function narrowImplicitWorkspace(mode: SandboxMode, cwd: string, home: string): ImplicitWorkspace {
  const broad = mode === 'danger-full-access' ? undefined : broadWorkspace(cwd, home);
  if (broad === undefined) return { mode };
  return {
    mode: 'read-only',
    notice:
      `started in ${cwd} (${broad}) without --workspace: terminals run read-only and see none of ` +
      `$HOME but the allowed paths; pass --workspace DIR to give them a writable workspace`,
  };
}
