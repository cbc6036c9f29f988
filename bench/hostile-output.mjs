/**
 * Standalone check (not part of `run.mjs`): the hostile streams of SPEC §4.3 at full size. Each runs in
 * its own child host (test/fixtures/hostile-host.mjs): one session, the stream, then `echo ok-$((6*7))`.
 * Prints per stream the host's RSS growth, how long the stream's send took, the time from the stream's
 * end to the next send's result, and whether that result was clean (`ok-42`, exit 0).
 *
 *   npm run build && node bench/hostile-output.mjs [name…]
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const HOST = fileURLToPath(new URL('../test/fixtures/hostile-host.mjs', import.meta.url));

const STREAMS = {
  osc: "printf '\\e]0;'; head -c 100000000 /dev/zero | tr '\\0' a; printf '\\a'",
  dcs: "printf '\\eP$q'; head -c 100000000 /dev/zero | tr '\\0' a; printf '\\e\\\\'",
  apc: "printf '\\e_'; head -c 100000000 /dev/zero | tr '\\0' a; printf '\\e\\\\'",
  spam: "head -c 20000000 < <(yes $'\\e[6n' | tr -d '\\n')",
  nonewline: "head -c 200000000 /dev/zero | tr '\\0' a",
  urandom: 'head -c 50000000 /dev/urandom',
};

const names = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(STREAMS);
for (const name of names) {
  let line;
  try {
    const out = execFileSync(process.execPath, ['--expose-gc', HOST, STREAMS[name], '120000'], {
      encoding: 'utf8',
      timeout: 180_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const report = JSON.parse(out.trim().split('\n').at(-1));
    const clean = report.next.lines.includes('ok-42') && report.next.exitCode === 0;
    line = `RSS +${report.growthMB.toFixed(1)} MB, stream ${(report.hostile.ms / 1000).toFixed(1)} s (${report.hostile.waitReason}), next ${report.afterStreamMs ?? '?'} ms after its end, ${clean ? 'clean' : `NOT clean: ${JSON.stringify(report.next.lines.slice(-2))}`}`;
  } catch (error) {
    line = `failed: ${String(error.message ?? error)
      .split('\n')[0]
      .slice(0, 160)}`;
  }
  console.log(`${name.padEnd(10)} ${line}`);
}
