/**
 * Inputs of the output-shape benchmark (`bench/shapes.mjs`): files generated once under
 * bench/.data/ (gitignored) and reused, each a deterministic repetition of one kind of terminal output
 * that SPEC §9 sets a throughput target for. Lines end in `\n` only: the terminal's output processing
 * turns them into `\r\n`, as it does for a program writing to a tty.
 */
import { ensureGeneratedFile } from './data-file.mjs';

const LEVELS = [
  ['32', 'INFO '],
  ['36', 'DEBUG'],
  ['33', 'WARN '],
  ['31', 'ERROR'],
  ['32', 'INFO '],
];
const WORDS_CJK = ['日本語', '中文字符', '한국어', 'テキスト', '漢字', '処理済み', '完了', '错误'];
const EMOJI = ['🚀', '✅', '❌', '🔥', '📦', '⏳', '🎉', '👍🏽'];

/**
 * The workloads: `unit(i, next)` returns the i-th piece of text (`next` is a seeded random source).
 * Each imitates what a common program prints on a tty.
 */
export const WORKLOADS = {
  /** A build/test log with a colored level on most lines and a bold file name on some (SGR only). */
  colored: (i, next) => {
    const [color, level] = LEVELS[next() % LEVELS.length];
    const file = i % 3 === 0 ? ` \x1b[1msrc/module-${next() % 400}.ts\x1b[22m` : '';
    if (i % 10 === 9) return `  compiled ${next() % 1000} files in ${next() % 5000} ms (no color)\n`;
    return `\x1b[2m[${String(i % 86_400).padStart(5, '0')}]\x1b[0m \x1b[${color}m${level}\x1b[0m${file} step ${i} done in ${next() % 2000} ms\n`;
  },
  /** Mostly CJK text with emoji (4-byte UTF-8, a skin-tone modifier) and accented Latin. */
  utf8: (i, next) => {
    const words = [];
    for (let k = 0; k < 8; k++) words.push(WORDS_CJK[next() % WORDS_CJK.length]);
    return `${i} ${words.join('、')} ${EMOJI[next() % EMOJI.length]} ümlaut café ${EMOJI[i % EMOJI.length]}\n`;
  },
  /** A download progress bar redrawn with `\r` (one update per unit), a newline when each file is done. */
  progress: (i) => {
    const pct = i % 101;
    const bar = '#'.repeat(Math.floor(pct / 2.5)).padEnd(40);
    return `\rDownloading file-${Math.floor(i / 101)}.tar.gz [${bar}] ${String(pct).padStart(3)}% ${(pct * 1.7).toFixed(1)} MB/s${pct === 100 ? '\n' : ''}`;
  },
  /** A backspace spinner (`|/-\` then BS) with a status word, a line per finished task. */
  spinner: (i) => {
    const done = i % 400 === 399 ? `\bdone task-${Math.floor(i / 400)}\n` : '';
    return `${'|/-\\'[i % 4]}\b${done}`;
  },
  /**
   * Docker-pull-like multi-line progress: 6 layer lines redrawn in place with cursor-up (`ESC[6A`),
   * erase-line and `\r`, a fresh block of lines every 60 frames.
   */
  cursorUp: (i) => {
    const LAYERS = 6;
    const frame = i % 60;
    let text = '';
    if (frame === 0) {
      for (let k = 0; k < LAYERS; k++) text += `${(i + k).toString(16).padStart(12, '0')}: Waiting\n`;
      return text;
    }
    text += `\x1b[${LAYERS}A`;
    for (let k = 0; k < LAYERS; k++) {
      const size = ((frame * (k + 3)) % 200) + 1;
      const bar = '='.repeat(Math.floor((frame * 50) / 60)).padEnd(50);
      text += `\r\x1b[2K${(i + k).toString(16).padStart(12, '0')}: Downloading [${bar.slice(0, -1)}>] ${size}.${k}MB/200MB\n`;
    }
    return text;
  },
};

/** Path of the `name` workload's file of at least `bytes` bytes, generated on first use. */
export function ensureWorkloadFile(name, bytes) {
  const unit = WORKLOADS[name];
  if (unit === undefined) throw new Error(`unknown workload '${name}'`);
  // End on a newline, so the prompt that follows starts its own line in every workload.
  return ensureGeneratedFile(name, bytes, unit, '\n');
}
