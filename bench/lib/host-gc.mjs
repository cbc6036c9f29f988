/**
 * A full garbage collection of the host thread's heap, run between measurements (never inside one), so
 * one path's garbage is not collected — and billed — during the next path's flood. The inline core in
 * particular leaves ~100 MiB of strings behind on the host heap, which a later live subscriber's
 * allocations would otherwise pay for. Engine threads have heaps of their own and are not touched.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

/** Collects the host heap now. */
export function collectHostGarbage() {
  gc();
}
