/**
 * Turns a failed tool call into text a model can act on: the error's own message plus what to do
 * instead, chosen by the error's code (never by its message text).
 */
import { describeError, isTerminalError, type TerminalErrorCode } from '../../shared/errors.js';

/** Next step per error code; codes that need none map to an empty string. */
const NEXT_STEP: Record<TerminalErrorCode, string> = {
  SEND_ACTIVE:
    'Another send is still running in this session; wait for it to return (or stop it with terminal_signal SIGINT), then send again.',
  SESSION_CLOSED: 'This session is closed or closing; open a new one with terminal_open.',
  UNKNOWN_SESSION: 'Call terminal_list to see your open sessions, or terminal_open to start a new one.',
  ENGINE_CLOSED: 'The terminal service is shutting down; no further calls will succeed.',
  ENGINE_THREAD_DIED: 'The session is gone; open a new one with terminal_open.',
  // The message may say what the user must install or run (a native module missing, SPEC §11):
  // a retry fails the same way until they have, so it is not offered as the way out.
  SPAWN_FAILED:
    'The shell could not start. If the message names something to install or run, tell the user; terminal_open fails the same way until it is done. Otherwise check cwd and the shell.',
  SPAWN_TIMEOUT: 'The shell did not become ready in time; try terminal_open again.',
  SPAWN_EXITED: 'The shell exited while starting; check cwd, or try terminal_open again.',
  INVALID_CONFIG: '',
  INVALID_ARGUMENT: '',
  SIGNAL_REFUSED: 'To end the shell itself, call terminal_close.',
  SIGNAL_FAILED: 'The process may already be gone; check with terminal_read or terminal_list.',
  WRITE_FAILED: 'The session may have ended; check with terminal_list.',
  INPUT_TOO_LARGE:
    'Nothing was typed. Split the input into several smaller sends (one command or one line at a time); to create a large file, append it in parts (e.g. one here-document per send).',
  SANDBOX_UNAVAILABLE:
    'The sandbox mode this server runs in cannot be enforced on this machine; ask the user to install a sandbox provider (bubblewrap) or to run the server with a less confined mode.',
  MODE_CHANGE_FENCED: 'Close the open terminals first, then change the sandbox mode.',
  CLEANUP_FAILED: 'Some processes may still be running; call terminal_close again to retry.',
  CONTAINMENT_FAILED:
    'The shell was not started because it could not be placed in its container; ask the user to check the cgroup setup, or try terminal_open again.',
  UNKNOWN_KEY: 'Use one of the key names listed, or { "text": "..." } for literal text.',
  KEY_REFUSED: 'To interrupt the running command, call terminal_signal with SIGINT.',
  SESSION_LIMIT:
    'Close a terminal you no longer need (terminal_list shows them, terminal_close ends one), then open the new one.',
  NAME_TAKEN:
    'Use another name. terminal_list shows the terminal that has it: if it is this connection’s, use its sessionId; one attached to another connection can be reattached here with terminal_open by name only once it is detached there.',
  SESSION_ATTACHED:
    'Another connection is using this terminal; wait until it is closed or detached, or open a new terminal under another name.',
  ABORTED: 'The call was cancelled.',
  TRANSPORT_CLOSED:
    'The link this session ran over closed (its execution world or the agent-pty daemon stopped), and the terminals on its far side are gone; terminal_open starts a new one (it reconnects).',
  PROTOCOL_MISMATCH:
    'The world runs another agent-pty version; ask the user to install the same version on both ends.',
  HUMAN_HOLDS:
    'A person is typing in this terminal from the watch page; wait (terminal_send without text) until they hand the keyboard back, then try again.',
  INTERNAL: 'This is a bug in the terminal service; the session may be unusable, open a new one.',
};

/** The text of an error result. */
export function describeToolError(error: unknown): string {
  if (isTerminalError(error)) {
    const step = NEXT_STEP[error.code];
    const message = error.message.replace(/\.?$/, '.');
    return step === '' ? message : `${message} ${step}`;
  }
  return `Internal error: ${describeError(error)}. The session may be unusable; open a new one with terminal_open.`;
}
