import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Builds dist/ first: the CLI tests that run a real process run the built command.
    globalSetup: ['test/helpers/build.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Tests never see the developer's own configuration or keys.
    env: {
      OPENAI_API_KEY: '',
      OPENAI_BASE_URL: '',
      RAGLINE_DB: '',
      RAGLINE_CONFIG: '',
      NO_COLOR: '1',
    },
  },
});
