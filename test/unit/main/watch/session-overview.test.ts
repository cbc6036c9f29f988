/**
 * The watch page's overview of an engine whose session handles keep no hold or foreground (a daemon's
 * sessions seen through `mcp --daemon`): both come from the engine's listing, as the daemon gives it.
 */
import { expect, it } from 'vitest';
import { engineWatchSource } from '../../../../src/main/watch/session-overview.js';
import { unenforcedLimits } from '../../../../src/shared/session-limits.js';
import type { SessionListing, TerminalSession } from '../../../../src/shared/types.js';

const STATUS = { kind: 'running', containment: 'process-tree', limits: unenforcedLimits('test') } as const;

it('takes a remote handle’s foreground, hold and busy state from the engine’s listing', async () => {
  // A remote handle: what TerminalSession promises, nothing a ThreadSession adds.
  const remote = { id: 's-1', name: 'deploy', status: async () => STATUS } as unknown as TerminalSession;
  const listing: SessionListing & { foreground: string } = {
    id: 's-1',
    name: 'deploy',
    attached: true,
    pid: 4242,
    status: STATUS,
    busy: true,
    mode: 'unconfined',
    heldSince: 1_700_000_000_000,
    foreground: 'python3',
  };
  const source = engineWatchSource({ sessions: () => [remote], list: async () => [listing] });
  expect(await source.overview()).toMatchObject([
    { id: 's-1', foreground: 'python3', heldSince: 1_700_000_000_000, busy: true, status: 'running' },
  ]);
  // A listing that fails leaves the session listed, without what only the listing knew.
  const failing = engineWatchSource({
    sessions: () => [remote],
    list: async () => {
      throw new Error('daemon gone');
    },
  });
  expect(await failing.overview()).toMatchObject([
    { id: 's-1', foreground: undefined, heldSince: undefined },
  ]);
});
