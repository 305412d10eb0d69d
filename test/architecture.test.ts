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

describe('the shared vocabulary lives in src/domain', () => {
  const domain = path.join(src, 'domain');

  it('src/domain imports nothing outside src/domain', () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(domain)) {
      const text = fs.readFileSync(file, 'utf8');
      for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g)) {
        const specifier = match[1]!;
        const target = path.resolve(path.dirname(file), specifier);
        const inside = specifier.startsWith('.') && (target === domain || target.startsWith(domain + path.sep));
        if (!inside) offenders.push(`src/${path.relative(src, file).split(path.sep).join('/')}: ${specifier}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('each domain type is declared exactly once in src', () => {
    const names = [
      'RewriteDecision', 'RewritePolicy', 'Topic', 'TopicSource', 'TurnStatus', 'FinishedStatus', 'TurnTimings',
      'TurnUsage', 'TurnModels', 'AnswerKind', 'ChunkLocation', 'ChunkSpan', 'Locator', 'ChatMessage', 'ChatRole', 'TokenUsage',
    ];
    const files = sourceFiles(src).map((file) => ({ file: `src/${path.relative(src, file).split(path.sep).join('/')}`, text: fs.readFileSync(file, 'utf8') }));
    const declarations = Object.fromEntries(
      names.map((name) => {
        const declared = new RegExp(`\\b(?:type\\s+${name}\\s*(?:<[^>]*>)?\\s*=|interface\\s+${name}\\b)`);
        return [name, files.filter(({ text }) => declared.test(text)).map(({ file }) => file)];
      }),
    );
    for (const name of names) expect(declarations[name], name).toHaveLength(1);
    for (const name of names) expect(declarations[name]![0], name).toMatch(/^src\/domain\//);
  });
});
