/**
 * The system-prompt section that teaches a model how to use the terminal tools, and above all what
 * each wait reason does and does not prove (SPEC §4.2 rule 6).
 */

/** Markdown section for a system prompt. */
export const TERMINAL_TOOLS_GUIDANCE = `## Terminal sessions

You have persistent, interactive terminals. \`terminal_open\` starts a bash shell and returns a sessionId;
the shell keeps its state (working directory, variables, running programs such as a python3 REPL)
across calls. \`terminal_send\` types text (and presses Enter unless submit is false) and returns the
output once the terminal is waiting for input again. \`terminal_read\` pages through the scrollback,
\`terminal_signal\` interrupts (SIGINT) or stops the foreground program, \`terminal_close\` ends a
session and everything running in it, \`terminal_list\` shows your sessions.

Every \`terminal_send\` result ends with status lines:
- \`[wait: stdin_read]\` — proven: the shell is back at its prompt, or the running program is blocked
  reading the terminal (a REPL prompt, a y/n question). Safe to continue.
- \`[wait: inferred_idle]\` — NOT proven: the output merely stopped for a few seconds. The command may
  still be running (a slow build between outputs) or waiting for input in a way that could not be
  detected. Do not assume it finished: check with \`terminal_read\`, and look for its prompt or result.
- \`[wait: timeout]\` — NOT proven: the send's time limit passed while the command was busy; it is
  most likely still running. Check later with \`terminal_read\`, or stop it with \`terminal_signal\` SIGINT.
- \`[wait: session_exit]\` — the shell exited or the session was closed; open a new one.
- \`[exit: N]\` — exit status of the last command. It is present only when the shell's own prompt came
  back, so it is reliable; its absence means no exit status is known (e.g. inside a REPL).
- \`[session: running]\` or \`[session: exited code=… signal=…]\` — whether the shell is alive.
- \`[truncated: …]\` — older output was dropped; the note gives the \`terminal_read\` call that pages back.

Practices: send one command per call; prefer non-interactive flags (\`-y\`, \`--no-pager\`); avoid
full-screen programs (vim, less, top), which are not supported; never type control characters to
interrupt — use \`terminal_signal\`; close sessions you no longer need. Sessions run in a sandbox:
in read-only mode nothing but /tmp is writable; in workspace-write mode the workspace is writable too.
`;
