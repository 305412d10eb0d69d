// Architectural guards that are cheap to check on the source text.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|mts|cts|js|mjs)$/.test(entry.name) ? [full] : [];
  });
}

/** Folders that may read the environment: settings are resolved there and passed down. */
const MAY_READ_ENV = ['cli', 'config'];

describe('settings come from src/config', () => {
  it('no module outside src/cli and src/config reads process.env', () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(src)) {
      const relative = path.relative(src, file).split(path.sep);
      if (MAY_READ_ENV.includes(relative[0]!)) continue;
      fs.readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/process\s*\.\s*env\b|process\s*\[\s*['"]env['"]\s*\]/.test(line)) offenders.push(`src/${relative.join('/')}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });
});
