/**
 * Standalone check (not part of `run.mjs`): terminal replies under load. One session sends cursor
 * position requests (`read -sdR -p $'\e[6n'`) back to back for a while, as fast as they settle, while
 * two other sessions flood on the engine's two threads. Every send must settle only once the shell has
 * read its reply and printed it. A send that settles `stdin_read` without the reply in its viewport was
 * judged "waiting for input" while our own reply was still on its way to the reader (see
 * REPLY_GRACE_MS in src/worker/readiness/send-operation.ts). Before that grace: 34 of 25 004 sends in 90 s here.
 *
 *   npm run build && node bench/cpr-under-load.mjs [seconds=60]
 */
import { createPtyEngine } from '../dist/main/index.js';
import { CPR_COMMAND, cprAnswered } from './lib/cpr-check.mjs';
import { ensureLogFile } from './lib/data-file.mjs';

const seconds = Number(process.argv[2] ?? 60);
const file = ensureLogFile(100 * 2 ** 20);
const engine = await createPtyEngine({ threads: 2 });
try {
  const flooders = await Promise.all([engine.spawn(), engine.spawn()]);
  const asker = await engine.spawn();
  let flooding = true;
  const floods = flooders.map(async (session) => {
    while (flooding) await session.startSend({ text: `head -c 30000000 ${file}` }).done;
  });
  let sends = 0;
  let unanswered = 0;
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    const result = await asker.startSend({ text: CPR_COMMAND }).done;
    sends++;
    if (!cprAnswered(result)) {
      unanswered++;
      await asker.startSend({ text: '' }).done; // let the late reply finish the read before the next one
    }
  }
  flooding = false;
  await Promise.all(floods);
  console.log(
    `${sends} cursor position requests under load, ${unanswered} settled before their reply was read`,
  );
  process.exitCode = unanswered === 0 ? 0 : 1;
} finally {
  await engine.close();
}
