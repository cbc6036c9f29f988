/**
 * The files the watch page is made of, all served from the package itself (no CDN): the page, its
 * script and style (`web/` of the package), and @xterm/xterm's browser build from its own package.
 * Read once, on first use, and kept in memory.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** One servable file. */
export interface WatchAsset {
  contentType: string;
  body: Buffer;
}

/** URL path → where the file is and its type. */
const ASSETS: Record<string, { resolve: () => string; contentType: string }> = {
  '/': { resolve: () => webFile('watch.html'), contentType: 'text/html; charset=utf-8' },
  '/assets/watch.js': { resolve: () => webFile('watch.js'), contentType: 'text/javascript; charset=utf-8' },
  '/assets/watch.css': { resolve: () => webFile('watch.css'), contentType: 'text/css; charset=utf-8' },
  '/assets/xterm.js': {
    resolve: () => createRequire(import.meta.url).resolve('@xterm/xterm/lib/xterm.js'),
    contentType: 'text/javascript; charset=utf-8',
  },
  '/assets/xterm.css': {
    resolve: () => createRequire(import.meta.url).resolve('@xterm/xterm/css/xterm.css'),
    contentType: 'text/css; charset=utf-8',
  },
};

/** `web/NAME` of the package: this module is `dist/main/watch/watch-assets.js` (or `src/…` under tests). */
function webFile(name: string): string {
  return new URL(`../../../web/${name}`, import.meta.url).pathname;
}

const loaded = new Map<string, WatchAsset>();

/** The asset at URL path `path`, or undefined when there is none. */
export function watchAsset(path: string): WatchAsset | undefined {
  const known = loaded.get(path);
  if (known !== undefined) return known;
  const entry = ASSETS[path];
  if (entry === undefined) return undefined;
  const asset = { contentType: entry.contentType, body: readFileSync(entry.resolve()) };
  loaded.set(path, asset);
  return asset;
}
