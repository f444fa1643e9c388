import { defineConfig } from 'vitest/config'

// The browser tests (run by e2e/run.mjs against a private dev stack, never directly): one file per
// flow, one at a time (they share one stack and the machine's cores), with timeouts long enough
// for a cold Chromium and a streamed reply.
export default defineConfig({
  test: {
    root: new URL('.', import.meta.url).pathname,
    include: ['**/*.test.ts'],
    environment: 'node',
    fileParallelism: false,
    sequence: { concurrent: false },
    testTimeout: 120_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    retry: 0,
    reporters: ['default'],
  },
})
