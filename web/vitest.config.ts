import { defineConfig } from 'vitest/config'

// Unit tests (the event-stream reducer and other pure logic); the browser tests are e2e/.
export default defineConfig({
  test: { include: ['src/**/*.test.ts', 'src/**/*.test.tsx'], environment: 'node' },
})
