/**
 * The system-prompt section that teaches a model how to use the terminal tools: what each wait reason
 * does and does not prove (SPEC §4.2 rule 7), how to keep waiting, `waitFor` for servers, `keys` for
 * full-screen programs. The MCP server sends it as its `instructions`, which some clients cut after
 * 2 048 characters (Claude Code), so it stays short: {@link TERMINAL_TOOLS_GUIDANCE_MAX_CHARS} leaves
 * room for the server's own sentences. The details live in the tool descriptions and in every result
 * (its notes, and the JSON `hint`).
 */

/**
 * Longest the guidance may be: the server's instructions (this, its wait bound, its sandbox mode and
 * worlds) must stay under 2 000 characters, below the 2 048 at which Claude Code cuts them.
 */
export const TERMINAL_TOOLS_GUIDANCE_MAX_CHARS = 1_500;

/** Markdown section for a system prompt. */
export const TERMINAL_TOOLS_GUIDANCE = `## Terminal sessions

\`terminal_open\` starts a persistent shell and returns a sessionId; it keeps its state (cwd, variables, a running REPL) between calls. \`terminal_send\` types a line (and Enter) and returns once the terminal waits for input again. Results end with \`[wait: <reason>]\` (JSON \`waitReason\`); read their notes (JSON \`hint\`):
- \`stdin_read\`: proven ready, at the shell's prompt (with \`[exit: N]\`) or a program's prompt.
- \`running\`: the wait bound passed and the command is still running. Keep waiting with \`terminal_send\` with the sessionId and no text, or stop it with \`terminal_signal\` SIGINT; never type the next command into it.
- \`pattern\`: your \`waitFor\` matched; the program may still run (a server).
- \`inferred_idle\`, \`timeout\`: NOT proven finished; check before relying on it.
- \`session_exit\`: the shell is gone; open a new one.
- \`human\`: a person holds the keyboard. Wait with a send without text; type it again only if the note says nothing was typed (a command in flight at take-over was typed).
\`[input: hidden]\` (JSON \`inputHidden\`) marks a password prompt: ask the user to type it, never guess it.

Start servers and watchers with \`waitFor\`, e.g. \`{"text": "npm run dev", "waitFor": "Listening on|ready in"}\`. A full-screen program (vim, nano, less) returns its \`[screen: …]\`: drive it with \`keys\`, e.g. \`["Escape", {"text": ":wq"}, "Enter"]\`. One command per send; interrupt with \`terminal_signal\`, never control characters; close sessions you no longer need.
`;
