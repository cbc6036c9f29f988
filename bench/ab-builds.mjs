/**
 * Standalone A/B of two builds (not run by `run.mjs`): the same `true` send→settle through each, in one
 * process, alternating send by send (the order swapping each round), so a load that comes and goes
 * meets both alike. What the latency notes of bench/README.md cite as "lower in N of M rounds".
 *
 *   npm run build && node bench/ab-builds.mjs --snapshot before     # the build to compare against
 *   (change the code) npm run build && node bench/ab-builds.mjs --snapshot after
 *   node bench/ab-builds.mjs before after [--path=engine|daemon] [--rounds=11] [--sends=150]
 *
 * A snapshot is this checkout's `dist/` copied to `$TMPDIR/agent-pty-ab/NAME`, beside links to its
 * `package.json`'s siblings (`native/`, `node_modules/`), so it loads like the package itself.
 * - `engine`: `createPtyEngine({ threads: 1 })` of each build, one session each.
 * - `daemon`: each build's `agent-pty daemon` on a socket of its own, through that build's
 *   `createRemoteEngine({ socket })`.
 * Prints each round's p50 of both and their difference, then the median over rounds.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median } from './lib/stats.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SNAPSHOTS = join(tmpdir(), 'agent-pty-ab');
const WARMUP = 30;

const args = process.argv.slice(2);
/** `--name=value` or `--name value`. */
const option = (name) => {
  const at = args.findIndex((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`));
  if (at === -1) return undefined;
  const [, inline] = args[at].split('=');
  if (inline !== undefined) return inline;
  const [value] = args.splice(at + 1, 1);
  return value;
};
const snapshot = option('snapshot');
if (snapshot !== undefined) {
  takeSnapshot(snapshot);
} else {
  const settings = {
    path: option('path') ?? 'engine',
    rounds: Number(option('rounds') ?? 11),
    sends: Number(option('sends') ?? 150),
  };
  const [a, b] = args.filter((arg) => !arg.startsWith('--'));
  if (a === undefined || b === undefined) {
    throw new Error(
      'usage: ab-builds.mjs --snapshot NAME | ab-builds.mjs NAME_A NAME_B [--path=engine|daemon]',
    );
  }
  await compare(
    [a, b].map((name) => join(SNAPSHOTS, name)),
    settings,
  );
}

function takeSnapshot(name) {
  const dir = join(SNAPSHOTS, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  for (const linked of ['native', 'node_modules']) symlinkSync(join(ROOT, linked), join(dir, linked));
  console.log(`snapshot ${name}: ${dir}`);
}

async function compare(dirs, { path, rounds, sends }) {
  for (const dir of dirs) if (!existsSync(join(dir, 'dist'))) throw new Error(`no snapshot at ${dir}`);
  const scratch = mkdtempSync(join(tmpdir(), 'agent-pty-ab-run-'));
  const builds = [];
  try {
    for (const [k, dir] of dirs.entries())
      builds.push(await open(dir, path, join(scratch, `s${k}`, 'engine.sock')));
    const send = async (build) => {
      const started = performance.now();
      const result = await build.session.startSend({ text: 'true' }).done;
      if (result.waitReason !== 'stdin_read') throw new Error(`a true settled ${result.waitReason}`);
      return performance.now() - started;
    };
    for (let i = 0; i < WARMUP; i++) for (const build of builds) await send(build);
    const rows = [];
    for (let r = 0; r < rounds; r++) {
      const samples = [[], []];
      const order = r % 2 === 0 ? [0, 1] : [1, 0];
      for (let i = 0; i < sends; i++) for (const k of order) samples[k].push(await send(builds[k]));
      const [pa, pb] = samples.map(median);
      rows.push({ pa, pb });
      console.log(
        `round ${r}: A ${pa.toFixed(3)} ms, B ${pb.toFixed(3)} ms, B − A ${(pb - pa).toFixed(3)} ms`,
      );
    }
    const lower = rows.filter((row) => row.pb < row.pa).length;
    console.log(
      `${path}: p50 A ${median(rows.map((row) => row.pa)).toFixed(3)} ms, B ${median(rows.map((row) => row.pb)).toFixed(3)} ms; B − A ${median(rows.map((row) => row.pb - row.pa)).toFixed(3)} ms (median of ${rounds} rounds); B lower in ${lower} of ${rounds}`,
    );
  } finally {
    for (const build of builds) await build.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** One build's engine (or daemon client) and a session on it. */
async function open(dir, path, socket) {
  const api = await import(join(dir, 'dist/main/index.js'));
  if (path === 'engine') {
    const engine = await api.createPtyEngine({ threads: 1 });
    return { session: await engine.spawn(), close: () => engine.close() };
  }
  const daemon = spawn(process.execPath, [join(dir, 'dist/main/cli/bin.js'), 'daemon', '--socket', socket], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise((resolve, reject) => {
    let stderr = '';
    daemon.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (stderr.includes('listening on')) resolve();
    });
    daemon.once('exit', (code) => reject(new Error(`daemon exited ${code}: ${stderr}`)));
  });
  const engine = await api.createRemoteEngine({ socket });
  return {
    session: await engine.spawn(),
    close: async () => {
      await engine.shutdown();
      daemon.kill('SIGTERM');
      await new Promise((resolve) => daemon.once('close', resolve));
    },
  };
}
