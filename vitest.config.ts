import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real sockets and child processes: keep runs deterministic on a 2-core machine. A hang fails within seconds.
    testTimeout: 10_000,
    hookTimeout: 10_000,
    restoreMocks: true,
  },
})
