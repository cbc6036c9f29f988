// Registered for every test file: after each test, no process, timer or handle of that test may remain;
// property tests run with the seed the environment picks (property-seed.ts).
import { afterEach, beforeEach, expect } from 'vitest';
import { activeResourceCounts, waitForNoDescendants, waitForResources } from './leaks.js';
import { configurePropertySeed } from './property-seed.js';

configurePropertySeed();

let baseline = new Map<string, number>();

beforeEach(() => {
  baseline = activeResourceCounts();
});

afterEach(async () => {
  const survivors = await waitForNoDescendants();
  expect(
    survivors.map((p) => `${p.pid} ${p.comm}`),
    'processes left behind by the test',
  ).toEqual([]);
  const excess = await waitForResources(baseline);
  expect(excess, 'timers/handles left behind by the test').toEqual([]);
});
