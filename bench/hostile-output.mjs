/**
 * Standalone check (not part of `run.mjs`): the hostile streams of SPEC §4.3 at full size. Each runs in
 * its own child host (test/fixtures/hostile-host.mjs): one session, the stream, then `echo ok-$((6*7))`.
 * Prints per stream the host's RSS growth, how long the stream's send took, the time from the stream's
 * end to the next send's result, and whether that result was clean (`ok-42`, exit 0).
 *
 *   npm run build && node bench/hostile-output.mjs [--quick] [name…]   # --quick: 1/100 of each size
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const HOST = fileURLToPath(new URL('../test/fixtures/hostile-host.mjs', import.meta.url));

/** Each stream as a function of its size in bytes, with its full size (SPEC §4.3). */
const STREAMS = {
  osc: [100_000_000, (n) => `printf '\\e]0;'; head -c ${n} /dev/zero | tr '\\0' a; printf '\\a'`],
  dcs: [100_000_000, (n) => `printf '\\eP$q'; head -c ${n} /dev/zero | tr '\\0' a; printf '\\e\\\\'`],
  apc: [100_000_000, (n) => `printf '\\e_'; head -c ${n} /dev/zero | tr '\\0' a; printf '\\e\\\\'`],
  spam: [20_000_000, (n) => `head -c ${n} < <(yes $'\\e[6n' | tr -d '\\n')`],
  nonewline: [200_000_000, (n) => `head -c ${n} /dev/zero | tr '\\0' a`],
  urandom: [50_000_000, (n) => `head -c ${n} /dev/urandom`],
};
/** `--quick`: every stream at a hundredth of its size, to check that the bench runs (numbers are noise). */
const QUICK_DIVISOR = 100;

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const names = args.filter((arg) => arg !== '--quick');
for (const name of names) {
  if (!Object.hasOwn(STREAMS, name))
    throw new Error(`unknown stream ${name}: one of ${Object.keys(STREAMS).join(', ')} (and --quick)`);
}
if (names.length === 0) names.push(...Object.keys(STREAMS));
for (const name of names) {
  let line;
  try {
    const out = execFileSync(process.execPath, ['--expose-gc', HOST, streamCommand(name), '120000'], {
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

/** The shell command of stream `name` at its full size, or a hundredth of it with `--quick`. */
function streamCommand(name) {
  const [bytes, command] = STREAMS[name];
  return command(quick ? bytes / QUICK_DIVISOR : bytes);
}
