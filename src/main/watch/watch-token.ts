/**
 * The watch page's secret (SPEC §13): 256 random bits, kept only in the server's memory. It reaches a
 * person through the printed URL (or the 0600 URL file of `mcp --watch`), is exchanged on first load
 * for an HttpOnly cookie, and is compared in constant time.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** Bytes of randomness in a token (256 bits; the SPEC asks for at least 128). */
const TOKEN_BYTES = 32;

/** A fresh token, URL-safe. */
export function createWatchToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/** Whether `candidate` is `token`, without leaking through timing how much of it matched. */
export function tokenMatches(token: string, candidate: string | undefined): boolean {
  if (candidate === undefined) return false;
  const expected = Buffer.from(token, 'utf8');
  const given = Buffer.from(candidate, 'utf8');
  return expected.length === given.length && timingSafeEqual(expected, given);
}
