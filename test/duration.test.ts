// Ages for `prune --older-than` and `history.retention`: one parser, units s to y,
// a bare `m` refused as ambiguous, huge values refused with the flag or setting named.

import { describe, expect, it } from 'vitest';
import { parseDuration, resolveConfig } from '../src/config/index.js';
import { UserError } from '../src/util/errors.js';

const SECOND = 1000;
const DAY = 86_400_000;

function refusal(run: () => unknown): UserError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    return error as UserError;
  }
  throw new Error('expected a UserError');
}

describe('parseDuration', () => {
  it.each([
    ['90s', 90 * SECOND],
    ['45min', 45 * 60 * SECOND],
    ['12h', 12 * 3600 * SECOND],
    ['30d', 30 * DAY],
    ['8w', 56 * DAY],
    ['6mo', 180 * DAY],
    ['1y', 365 * DAY],
    [' 1.5 D ', 1.5 * DAY],
    ['0s', 0],
  ])('reads %s', (raw, ms) => {
    expect(parseDuration(raw, '--older-than')).toBe(ms);
  });

  it('refuses a bare m as ambiguous and offers min and mo', () => {
    const error = refusal(() => parseDuration('6m', '--older-than'));
    expect(error.message).toBe('--older-than "6m" is ambiguous: "m" could be minutes or months.');
    expect(error.hint).toBe('Write 6min for minutes or 6mo for months.');
    expect(error.exitCode).toBe(2);
  });

  it('refuses huge ages with the flag named, instead of an invalid date', () => {
    for (const raw of ['99999999999w', '1001y', `${'9'.repeat(400)}d`]) {
      const error = refusal(() => parseDuration(raw, '--older-than'));
      expect(error.message).toBe(`--older-than "${raw}" is too long: at most 1000y.`);
    }
    expect(parseDuration('1000y', '--older-than')).toBe(1000 * 365 * DAY);
  });

  it('refuses what is not an age and lists the units', () => {
    for (const raw of ['a while', '30', 'd30', '-1d', '2x', '']) {
      const error = refusal(() => parseDuration(raw, '--older-than'));
      expect(error.message).toMatch(/^--older-than must be an age such as 12h, 30d or 6mo/);
      expect(error.hint).toMatch(/s, min, h, d, w, mo \(30 days\) or y \(365 days\)/);
    }
  });

  it('history.retention goes through the same parser, named by where it was set', () => {
    const env = { HOME: '/nonexistent', RAGLINE_HISTORY_RETENTION: '6m' };
    const error = refusal(() => resolveConfig({ env, flags: {} }));
    expect(error.message).toBe('RAGLINE_HISTORY_RETENTION "6m" is ambiguous: "m" could be minutes or months.');
    expect(resolveConfig({ env: { ...env, RAGLINE_HISTORY_RETENTION: '6mo' }, flags: {} }).config.history.retention).toBe('6mo');
    expect(refusal(() => resolveConfig({ env: { ...env, RAGLINE_HISTORY_RETENTION: '99999999999w' }, flags: {} })).message).toContain('RAGLINE_HISTORY_RETENTION');
  });

  it('history.retention: off keeps everything (and overrides an age set elsewhere); a zero age is refused, saying what to write', () => {
    const env = { HOME: '/nonexistent' };
    for (const raw of ['off', ' OFF ']) expect(resolveConfig({ env: { ...env, RAGLINE_HISTORY_RETENTION: raw }, flags: {} }).config.history.retention).toBe('off');
    for (const raw of ['0d', '0s', '0.0h']) {
      const error = refusal(() => resolveConfig({ env: { ...env, RAGLINE_HISTORY_RETENTION: raw }, flags: {} }));
      expect(error.message).toBe(`RAGLINE_HISTORY_RETENTION "${raw}" would remove all chat history each time a chat starts.`);
      expect(error.hint).toBe('Write off to keep every turn, or an age such as 30d to remove the turns older than that.');
      expect(error.exitCode).toBe(2);
    }
    for (const raw of ['never', 'none', 'a while']) {
      const error = refusal(() => resolveConfig({ env: { ...env, RAGLINE_HISTORY_RETENTION: raw }, flags: {} }));
      expect(error.message).toBe(`RAGLINE_HISTORY_RETENTION must be off or an age such as 12h, 30d or 6mo, got "${raw}".`);
    }
    // The age itself reads as zero; what removes history older than it refuses it (prune: test/prune.test.ts).
    expect(parseDuration('0s', '--older-than')).toBe(0);
  });
});
