/**
 * The system-prompt section that teaches a model how to use the terminal tools: what each wait reason
 * does and does not prove (SPEC §4.2 rule 7), how to keep waiting, and `waitFor` for servers.
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
  reading the terminal (a REPL prompt, a y/n question, a continuation prompt). Safe to continue.
- \`[wait: running]\` — the command is still running: this call's wait bound (\`timeoutMs\`) passed
  before it finished, and it was seen running, not waiting for input. It keeps running. To keep
  waiting, call \`terminal_send\` with the sessionId and **no text** (nothing is typed; output that
  arrived meanwhile comes first). To stop it, \`terminal_signal\` SIGINT. Do not type the next
  command into a session whose command is still running.
- \`[wait: pattern]\` — your \`waitFor\` expression matched a line of the output. The command may
  still be running (a server keeps serving); that is the point.
- \`[wait: inferred_idle]\` — NOT proven: output stopped where readiness cannot be observed (an
  unusual prompt, or a relay such as ssh, script, sudo or tmux that hides the real reader). The
  command may still be running or waiting for input. Check with \`terminal_read\` or wait again with
  \`terminal_send\` without text before you rely on it.
- \`[wait: timeout]\` — NOT proven: the wait bound passed and the terminal's state could not be read;
  the command is most likely still running. Wait again without text, or stop it with \`terminal_signal\`.
- \`[wait: session_exit]\` — the shell exited or the session was closed; open a new one.
- \`[exit: N]\` — exit status of the last command. It is present only when the shell's own prompt came
  back, so it is reliable; its absence means no exit status is known (e.g. inside a REPL).
- \`[foreground: NAME]\` — a program other than the shell holds the terminal (\`python3\` at \`>>>\`,
  \`vim\`, a running \`sleep\`): what you type next goes to it, not to bash.
- \`[session: running]\` or \`[session: exited code=… signal=…]\` — whether the shell is alive.
- \`[truncated: …]\` — older output was dropped; the note gives the \`terminal_read\` call that pages back.

Waiting: \`timeoutMs\` sets how long one call waits (the server may cap it). A long build or test run
returns \`[wait: running]\` with its output so far; call \`terminal_send\` without text until it
settles with \`[wait: stdin_read]\` and an exit code. Start servers and watchers (anything that never
returns to the prompt) with \`waitFor\`, a regular expression for the line that says it is up, e.g.
\`{"text": "python3 -m http.server 8000", "waitFor": "Serving HTTP on"}\` or \`"waitFor": "Listening on|ready in"\`;
the call returns \`[wait: pattern]\` as soon as that line appears. Run other commands in a second
session while a server holds the first; stop it later with \`terminal_signal\` SIGINT.

Practices: send one command per call; prefer non-interactive flags (\`-y\`, \`--no-pager\`). A
full-screen program (vim, nano, less, htop) returns \`[screen: …]\`, its rendered screen: drive it with
\`keys\` (leave vim with \`["Escape", {"text": ":wq"}, "Enter"]\`, save and leave nano with
\`["C-o", "Enter", "C-x"]\`, quit less with \`["q"]\`). Never type control characters to
interrupt — use \`terminal_signal\`; close sessions you no longer need. Sessions run in a sandbox:
in read-only mode nothing but /tmp is writable; in workspace-write mode the workspace is writable too.
`;
