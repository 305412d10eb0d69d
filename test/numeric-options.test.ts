// Every numeric option is range-checked where it is parsed, and a bad value is
// reported under the name the user typed (-k, not --retrieval.k), as a usage
// error (exit 2) instead of an internal error from deeper down.

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { resolveConfig } from '../src/config/index.js';
import { UserError } from '../src/util/errors.js';
import { FIXTURE_DOCS, isolatedEnv, ragline, tempDir } from './helpers/cli.js';

let home: string;
beforeAll(() => {
  home = tempDir();
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

function failure(run: () => unknown): UserError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    return err as UserError;
  }
  throw new Error('expected a UserError');
}

describe('settings', () => {
  test('values out of range are refused, named by where they came from', () => {
    const env = { HOME: home };
    expect(failure(() => resolveConfig({ env: { ...env, RAGLINE_K: '100000' } })).message).toBe('RAGLINE_K must be a whole number from 1 to 1,000, got "100000".');
    expect(failure(() => resolveConfig({ env: { ...env, RAGLINE_TIMEOUT_MS: '99999999999' } })).message).toContain('RAGLINE_TIMEOUT_MS must be a whole number from 1 to 2,147,483,647');
    expect(failure(() => resolveConfig({ env: { ...env, RAGLINE_EMBED_DIMENSIONS: '100000' } })).message).toContain('from 1 to 8,192');
    expect(failure(() => resolveConfig({ env: { ...env, RAGLINE_RAW_WEIGHT: '1e9' } })).message).toContain('RAGLINE_RAW_WEIGHT must be a number from 0 to 100');
    expect(failure(() => resolveConfig({ env: { ...env, RAGLINE_MAX_RETRIES: ' ' + '-1' } })).message).toContain('RAGLINE_MAX_RETRIES');
  });

  test('numbers are read as written in decimal: hexadecimal, exponents and Infinity are refused', () => {
    const env = { HOME: home };
    for (const raw of ['0x10', '1e2', '0b11', 'Infinity', '5 5']) {
      expect(failure(() => resolveConfig({ env: { ...env, RAGLINE_K: raw } })).message).toBe(`RAGLINE_K must be a whole number from 1 to 1,000, got "${raw}".`);
    }
    expect(failure(() => resolveConfig({ env: { ...env, RAGLINE_RAW_WEIGHT: '1e-1' } })).message).toContain('RAGLINE_RAW_WEIGHT must be a number');
    expect(resolveConfig({ env: { ...env, RAGLINE_K: ' 7 ', RAGLINE_RAW_WEIGHT: '.5' } }).config.retrieval).toMatchObject({ k: 7, rawWeight: 0.5 });
  });

  test('a flag is named as typed when its spelling is given', () => {
    const err = failure(() => resolveConfig({ env: { HOME: home }, flags: { 'retrieval.k': '0' }, flagNames: { 'retrieval.k': '-k' } }));
    expect(err.message).toBe('-k must be a whole number from 1 to 1,000, got "0".');
    expect(err.exitCode).toBe(2);
  });
});

describe('through the CLI', () => {
  let dbFile: string;
  beforeAll(async () => {
    dbFile = path.join(home, 'r.db');
    expect((await ragline(['--db', dbFile, 'ingest', FIXTURE_DOCS], { env: isolatedEnv(home) })).code).toBe(0);
  });

  const cases: [string[], string][] = [
    [['search', '-k', '100000', 'webhooks'], 'error: -k must be a whole number from 1 to 1,000, got "100000".'],
    [['search', '-k', '0', 'webhooks'], 'error: -k must be a whole number from 1 to 1,000, got "0".'],
    [['search', '--k', '2.5', 'webhooks'], 'error: -k must be a whole number from 1 to 1,000, got "2.5".'],
    [['ingest', FIXTURE_DOCS, '--chunk-size', '0'], 'error: --chunk-size must be a whole number from 1 to 1,000,000, got "0".'],
    [['ingest', FIXTURE_DOCS, '--max-file-size', '1e12'], 'error: --max-file-size must be a whole number from 1 to 2,147,483,647, got "1e12".'],
    [['doctor', '--timeout', '99999999999'], 'error: --timeout must be a whole number of milliseconds from 1 to 2,147,483,647, got "99999999999".'],
    [['replay', 'last', '--turn', '0'], 'error: --turn must be a turn number of 1 or more, got "0".'],
    [['sessions', 'fork', 'last', '--at', 'x'], 'error: --at must be a turn number of 1 or more, got "x".'],
  ];
  test.each(cases)('%j: a usage error naming the flag', async (args, message) => {
    const result = await ragline(['--db', dbFile, ...args], { env: isolatedEnv(home) });
    expect(result.stderr).toContain(message);
    expect(result.code).toBe(2);
  });
});
