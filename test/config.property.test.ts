// Config parsing never fails with anything but a UserError (a sentence that
// names the setting), whatever the environment or the config file holds.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, test } from 'vitest';
import { resolveConfig, SETTING_KEYS } from '../src/config/index.js';
import { UserError } from '../src/util/errors.js';

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-config-prop-'));
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

const ENV_NAMES = [
  'RAGLINE_DB', 'RAGLINE_PROVIDER', 'RAGLINE_EMBED_PROVIDER', 'RAGLINE_BASE_URL', 'OPENAI_BASE_URL', 'RAGLINE_API_KEY',
  'OPENAI_API_KEY', 'RAGLINE_CHAT_MODEL', 'RAGLINE_K', 'RAGLINE_RAW_WEIGHT', 'RAGLINE_CHUNK_SIZE', 'RAGLINE_CHUNK_OVERLAP',
  'RAGLINE_REWRITE', 'RAGLINE_HISTORY_RETENTION', 'RAGLINE_HISTORY_TOKENS', 'RAGLINE_TOPICS', 'RAGLINE_TIMEOUT_MS',
];

/** Resolves, and fails the property on any error that is not a UserError. */
function resolvesOrUserError(run: () => unknown): boolean {
  try {
    run();
    return true;
  } catch (err) {
    if (err instanceof UserError) return err.message.length > 0;
    throw err;
  }
}

const valueLike = fc.oneof(
  fc.string(),
  fc.constantFrom('', ' ', '0', '-1', '1e9', 'NaN', 'auto', 'offline', 'openai', '30d', 'http://x', 'ftp://x', '3000', '150'),
  fc.integer().map(String),
  fc.double().map(String),
);

describe('config parsing (fast-check)', () => {
  test('any environment gives a config or a UserError', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...ENV_NAMES), valueLike), (vars) => {
        return resolvesOrUserError(() => resolveConfig({ env: { HOME: home, ...vars } }));
      }),
      { seed: 20261121, numRuns: 1000 },
    );
  });

  test('any config file (JSON or not) gives a config or a UserError', () => {
    const file = path.join(home, 'config.json');
    const jsonValue = fc.oneof(valueLike, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }));
    const settings = fc.dictionary(fc.constantFrom(...SETTING_KEYS, 'unknown.key'), jsonValue);
    const nested = settings.map((flat) => {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(flat)) {
        const parts = key.split('.');
        let node = out;
        for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
        node[parts.at(-1)!] = value;
      }
      return JSON.stringify(out);
    });
    fc.assert(
      fc.property(fc.oneof(nested, fc.string(), fc.json()), (text) => {
        fs.writeFileSync(file, text);
        return resolvesOrUserError(() => resolveConfig({ env: { HOME: home }, configFile: file }));
      }),
      { seed: 20261121, numRuns: 1000 },
    );
  });

  test('a resolved config keeps its invariants', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 0, max: 100_000 }), (size, overlap) => {
        try {
          const { config } = resolveConfig({ env: { HOME: home, RAGLINE_CHUNK_SIZE: String(size), RAGLINE_CHUNK_OVERLAP: String(overlap) } });
          expect(config.chunk.overlap).toBeLessThan(config.chunk.size);
          return true;
        } catch (err) {
          expect(err).toBeInstanceOf(UserError);
          expect(overlap).toBeGreaterThanOrEqual(size);
          return true;
        }
      }),
      { seed: 20261121, numRuns: 500 },
    );
  });
});
