/**
 * Recording a session (SPEC §13): `spawn({ record })` writes an asciicast v2 file from the raw channel
 * — the pty's output, the private prompt marker already removed — so asciinema (and the watch page)
 * can replay it. Output events only: what anyone typed is never written, and input the program did
 * not echo (a password) never reaches the file.
 *
 * The file starts with the header (the terminal's size), then the screen's snapshot at t = 0 (what
 * the shell printed before the channel opened), then one `[seconds, "o", text]` line per chunk.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { TerminalError } from '../../shared/errors.js';
import type { RawChunk, RawView, TerminalSession } from '../../shared/types.js';

/** Only the session's user may read a recording (it holds everything the terminal showed). */
const RECORDING_FILE_MODE = 0o600;
const RECORDINGS_DIR_MODE = 0o700;

/** `$XDG_STATE_HOME/agent-pty/recordings`, else `~/.local/state/agent-pty/recordings`. */
export function recordingsDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME;
  const base = state !== undefined && isAbsolute(state) ? state : join(homedir(), '.local', 'state');
  return join(base, 'agent-pty', 'recordings');
}

/** A recording being written; `close()` once the session is gone. */
export interface SessionRecording {
  /** The file written. */
  readonly path: string;
  /** Ends the recording (idempotent): the raw view is closed, then the file. */
  close(): void;
}

/** Where `record` puts the file: its own path, or a new file under the recordings directory. */
export function recordingPath(
  record: string | true,
  session: { id: string; name: string | undefined },
): string {
  if (record !== true) return record;
  const dir = recordingsDirectory();
  mkdirSync(dir, { recursive: true, mode: RECORDINGS_DIR_MODE });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const label = (session.name ?? session.id).replace(/[^A-Za-z0-9._-]/g, '_');
  return join(dir, `${stamp}-${label}.cast`);
}

/** Starts recording `session` to `path` (created 0600; an existing file is refused). */
export async function startRecording(session: TerminalSession, path: string): Promise<SessionRecording> {
  let fd: number;
  try {
    fd = openSync(path, 'wx', RECORDING_FILE_MODE);
  } catch (error) {
    throw new TerminalError(
      'INVALID_ARGUMENT',
      `cannot create the recording ${path}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  const startedAt = performance.now();
  let open = true;
  let early: RawChunk[] | undefined = [];
  const event = (data: string): void => {
    if (!open || data === '') return;
    const seconds = Math.round(performance.now() - startedAt) / 1000;
    writeSync(fd, `${JSON.stringify([seconds, 'o', data])}\n`);
  };
  const onChunk = (chunk: RawChunk): void => {
    if (early !== undefined) early.push(chunk);
    else write(chunk);
  };
  const write = (chunk: RawChunk): void => {
    if (chunk.dropped === 0) {
      event(chunk.data);
      return;
    }
    // A lag past the watermark lost output: the screen is drawn again from a fresh snapshot. Chunks
    // that reach this side before its reply are already in it (published before it was taken) and
    // are left out; the two ports keep no common order, so the redraw is as close as the view gets.
    early = [];
    void session.snapshot().then(
      (snapshot) => {
        early = undefined;
        event(`\x1bc${snapshot.ansi}`);
      },
      () => {
        early = undefined; // the session is gone: nothing more to record
      },
    );
  };
  let view: RawView;
  try {
    view = await session.openRaw(onChunk);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  const { snapshot } = view;
  writeSync(
    fd,
    `${JSON.stringify({
      version: 2,
      width: snapshot.cols,
      height: snapshot.rows,
      timestamp: Math.floor(Date.now() / 1000),
      env: { TERM: 'xterm-256color' },
      title: session.name ?? session.id,
    })}\n`,
  );
  event(snapshot.ansi);
  for (const chunk of early) write(chunk);
  early = undefined;
  return {
    path,
    close: () => {
      if (!open) return;
      view.dispose(); // delivers what was published before the end
      open = false;
      closeSync(fd);
    },
  };
}
