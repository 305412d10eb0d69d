import { defineConfig } from 'vitest/config';

// Two tiers (docs/testing.md). `unit` is everything under test/ but test/soak/:
// `npm test`, which a change must pass. `soak` is test/soak/: the fault and
// endurance tests that kill, race, fill a disk or drive a terminal, many times
// over; `npm run test:soak`, which .ci/run runs after the rest.
// `npx vitest run` runs both; `npx vitest run test/x.test.ts` runs one file of either.
export default defineConfig({
  test: {
    // Builds dist/ first: the CLI tests that run a real process run the built command.
    globalSetup: ['test/helpers/build.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default leaves one core idle (availableParallelism - 1): on 2 cores,
    // one worker. The test files wait on child processes and SQLite files as much
    // as they compute, so one worker per core is faster.
    maxWorkers: '100%',
    // Tests never see the developer's own configuration or keys.
    env: {
      OPENAI_API_KEY: '',
      OPENAI_BASE_URL: '',
      RAGLINE_DB: '',
      RAGLINE_CONFIG: '',
      NO_COLOR: '1',
    },
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/soak/**'] },
      },
      {
        extends: true,
        test: { name: 'soak', include: ['test/soak/**/*.test.ts'] },
      },
    ],
  },
});
