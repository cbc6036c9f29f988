/**
 * The property tests' seed policy (test/support/property-seed.ts): fixed unless the environment picks
 * another, and a failing property says which seed reproduces it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FIXED_PROPERTY_SEED, PROPERTY_SEED_VARIABLE, propertySeed } from '../../support/property-seed.js';

describe('property seed policy', () => {
  it('is the fixed seed unless the variable names a number or `random`', () => {
    expect(propertySeed(undefined)).toBe(FIXED_PROPERTY_SEED);
    expect(propertySeed('')).toBe(FIXED_PROPERTY_SEED);
    expect(propertySeed('-1084435989')).toBe(-1084435989);
    expect(propertySeed(' 42 ')).toBe(42);
    // fast-check prints seeds as signed 32-bit integers; the unsigned spelling names the same seed.
    expect(propertySeed('3210531307')).toBe(-1084435989);
    const drawn = new Set(Array.from({ length: 8 }, () => propertySeed('random')));
    expect(drawn.size).toBeGreaterThan(1);
    for (const seed of drawn) expect(Number.isInteger(seed) && seed === (seed | 0)).toBe(true);
    for (const bad of ['abc', '1.5', '4294967296', '-2147483649']) {
      expect(() => propertySeed(bad), bad).toThrow(PROPERTY_SEED_VARIABLE);
    }
  });

  it('gives every property of the file that seed and names it when one fails', () => {
    const seed = fc.readConfigureGlobal().seed;
    if (process.env[PROPERTY_SEED_VARIABLE] === undefined) expect(seed).toBe(FIXED_PROPERTY_SEED);
    let message = '';
    try {
      fc.assert(fc.property(fc.integer(), (value) => expect(value).toBeLessThan(0)));
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain(`{ seed: ${seed},`);
    expect(message).toContain(`${PROPERTY_SEED_VARIABLE}=${seed} reproduces this run`);
  });
});
