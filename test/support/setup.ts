// Per-test-file setup. Leak checks live in test/support/leaks.ts and are registered here.
export {};
