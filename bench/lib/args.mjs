/** Command-line options of `bench/run.mjs`. */

/** Parses `--quick`, `--only=a,b` and `--out=dir`; throws on anything else. */
export function parseArgs(argv, known) {
  const options = { quick: false, only: undefined, out: undefined };
  for (const arg of argv) {
    if (arg === '--quick') options.quick = true;
    else if (arg.startsWith('--only=')) options.only = arg.slice('--only='.length).split(',').filter(Boolean);
    else if (arg.startsWith('--out=')) options.out = arg.slice('--out='.length);
    else if (arg === '--help' || arg === '-h') options.help = true;
    else throw new Error(`unknown option ${arg} (try --help)`);
  }
  for (const name of options.only ?? []) {
    if (!known.includes(name)) throw new Error(`unknown benchmark '${name}'; known: ${known.join(', ')}`);
  }
  return options;
}
