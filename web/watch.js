// The watch page (SPEC §13): lists the sessions, shows each in an xterm fed from the raw channel
// (starting from a snapshot), sized to the session's terminal and never resizing it. Keys go to the
// server only while this page holds that session's keyboard.
'use strict';

/** How often a page that holds a keyboard says it is still there (the server ends a hold after 30 s). */
const HEARTBEAT_MS = 5000;

const sessionsEl = document.getElementById('sessions');
const recordingsEl = document.getElementById('recordings');
const connectionEl = document.getElementById('connection');
/** id → { el, term, held, facts, state, message } */
const views = new Map();
const socket = new WebSocket(`ws://${location.host}/ws`);

function send(message) {
  if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

function text(tag, className, content) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (content !== undefined) el.textContent = content;
  return el;
}

function viewFor(session) {
  let view = views.get(session.id);
  if (view !== undefined) return view;
  const el = text('article', 'session');
  el.dataset.session = session.id;
  const title = text('h2', '', session.name ? `${session.name} (${session.id})` : session.id);
  const facts = text('p', 'facts');
  const controls = text('div', 'controls');
  const take = text('button', 'take', 'Take over');
  const force = text('button', 'force', 'Take over anyway');
  const release = text('button', 'release', 'Hand back');
  const state = text('span', 'hold-state', 'read-only');
  const message = text('span', 'message');
  force.hidden = true;
  release.hidden = true;
  controls.append(take, force, release, state, message);
  const termEl = text('div', 'terminal');
  el.append(title, facts, controls, termEl);
  sessionsEl.append(el);
  const term = new Terminal({ disableStdin: true, convertEol: false, scrollback: 1000, fontSize: 13 });
  term.open(termEl);
  view = { el, term, held: false, facts, state, message, take, force, release };
  term.onData((data) => {
    // Read-only unless this page holds the keyboard: nothing leaves the page otherwise.
    if (view.held) send({ t: 'key', id: session.id, data });
  });
  take.onclick = () => send({ t: 'take', id: session.id });
  force.onclick = () => send({ t: 'take', id: session.id, force: true });
  release.onclick = () => send({ t: 'release', id: session.id });
  views.set(session.id, view);
  send({ t: 'watch', id: session.id });
  return view;
}

function showFacts(view, session) {
  view.facts.replaceChildren(
    ...[
      `mode: ${session.mode}`,
      ...(session.workspace === undefined ? [] : [`workspace: ${session.workspace}`]),
      `containment: ${session.containment}`,
      `foreground: ${session.foreground ?? '—'}`,
      session.busy ? 'busy: the agent is waiting on a command' : 'busy: no',
      `limits: ${session.limits}`,
      `status: ${session.status}`,
    ].map((fact) => text('span', '', fact)),
  );
}

function showHold(view, message) {
  view.held = message.state === 'mine';
  view.term.options.disableStdin = !view.held;
  view.el.classList.toggle('held-mine', view.held);
  view.take.hidden = view.held;
  // Forcing is offered only once a take was refused (the message says who holds it since when).
  if (message.state !== 'other') view.force.hidden = true;
  view.release.hidden = !view.held;
  const since = message.since === undefined ? '' : ` since ${new Date(message.since).toLocaleTimeString()}`;
  view.state.textContent =
    message.state === 'mine'
      ? `you hold the keyboard${since} — the agent waits`
      : message.state === 'other'
        ? `held by another viewer${since}`
        : 'read-only';
  if (message.state !== 'other') view.message.textContent = '';
  if (view.held) view.term.focus();
}

function showRecordings(recordings) {
  recordingsEl.replaceChildren(
    ...recordings.map((recording) => {
      const li = text('li');
      const play = text('button', 'replay', 'Replay');
      play.onclick = () => replay(recording.file);
      li.append(play, ` ${recording.file} (${recording.bytes} bytes)`);
      return li;
    }),
  );
}

/** Replays an asciicast v2 recording into a fresh terminal (pauses capped at a second). */
async function replay(file) {
  const response = await fetch(`/recordings/${encodeURIComponent(file)}`);
  const lines = (await response.text()).split('\n').filter((line) => line !== '');
  const header = JSON.parse(lines[0]);
  const host = document.getElementById('replay');
  host.replaceChildren();
  const term = new Terminal({ rows: header.height, cols: header.width, disableStdin: true });
  term.open(host);
  window.agentPtyWatch.replayTerminal = term;
  let at = 0;
  for (const line of lines.slice(1)) {
    const [time, kind, data] = JSON.parse(line);
    if (kind !== 'o') continue;
    const pause = Math.min(1, Math.max(0, time - at));
    at = time;
    if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause * 1000));
    await new Promise((resolve) => term.write(data, resolve));
  }
  host.dataset.replayed = file;
}

socket.onopen = () => {
  connectionEl.textContent = 'connected';
};
socket.onclose = () => {
  connectionEl.textContent = 'disconnected — reload the page to reconnect';
};
socket.onmessage = (event) => {
  const message = JSON.parse(event.data);
  switch (message.t) {
    case 'sessions': {
      for (const session of message.sessions) showFacts(viewFor(session), session);
      showRecordings(message.recordings);
      break;
    }
    case 'snapshot': {
      const view = views.get(message.id);
      if (view === undefined) break;
      const { snapshot } = message;
      // The page shows the pty at its own size: it never asks the session to resize.
      view.term.reset();
      view.term.resize(snapshot.cols, snapshot.rows);
      view.term.write(snapshot.ansi);
      break;
    }
    case 'out':
      views.get(message.id)?.term.write(message.data);
      break;
    case 'hold': {
      const view = views.get(message.id);
      if (view !== undefined) showHold(view, message);
      break;
    }
    case 'refused': {
      const view = views.get(message.id);
      if (view === undefined) break;
      view.message.textContent = message.message;
      view.force.hidden = false;
      view.take.hidden = true;
      break;
    }
    case 'gone': {
      const view = views.get(message.id);
      if (view === undefined) break;
      view.state.textContent = 'closed';
      view.held = false;
      view.term.options.disableStdin = true;
      view.el.dataset.closed = 'true';
      break;
    }
  }
};

setInterval(() => {
  if ([...views.values()].some((view) => view.held)) send({ t: 'beat' });
}, HEARTBEAT_MS);

/** What a test (or a curious person in the console) can read: a session's screen as text. */
window.agentPtyWatch = {
  screenText(id) {
    const view = views.get(id);
    if (view === undefined) return undefined;
    const buffer = view.term.buffer.active;
    const rows = [];
    for (let y = 0; y < view.term.rows; y++) rows.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? '');
    return rows.join('\n');
  },
  size(id) {
    const view = views.get(id);
    return view === undefined ? undefined : { rows: view.term.rows, cols: view.term.cols };
  },
  replayText() {
    const term = window.agentPtyWatch.replayTerminal;
    if (term === undefined) return undefined;
    const buffer = term.buffer.active;
    const rows = [];
    for (let y = 0; y < term.rows; y++) rows.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? '');
    return rows.join('\n');
  },
};
