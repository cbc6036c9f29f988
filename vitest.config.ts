import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    setupFiles: ['test/support/setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        // Modules of src/ on their own: no process is started, so the whole project takes seconds.
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        // Real bash, python3, bubblewrap and sshd through the compiled package, after the unit project.
        test: {
          name: 'system',
          include: ['test/system/**/*.test.ts'],
          globalSetup: ['test/support/current-build.ts'],
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
