import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real sockets and child processes: keep runs deterministic on a 2-core machine.
    testTimeout: 15_000,
    restoreMocks: true,
  },
})
