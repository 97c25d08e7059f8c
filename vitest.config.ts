import { defineConfig } from 'vitest/config';

// Two cores: two test files at a time. Integration tests open real databases, so timeouts are generous.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
