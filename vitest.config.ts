import { defineConfig } from 'vitest/config'

// One runner for every tier: unit tests beside the code (src/**/*.test.ts),
// system tests that start real processes in test/.
export default defineConfig({
  test: {
    include: ['shared/src/**/*.test.ts', 'services/*/src/**/*.test.ts', 'clients/*/src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Removes the temporary data dirs of a test file whose tests all passed.
    setupFiles: ['test/support/tempDirs.setup.ts'],
  },
})
