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

/** `src/<folder>/...` files, with their text. */
function filesUnder(folder: string): { name: string; text: string }[] {
  return sourceFiles(path.join(src, folder)).map((file) => ({ name: path.relative(src, file).split(path.sep).join('/'), text: fs.readFileSync(file, 'utf8') }));
}

/** The module specifiers a file imports (static, dynamic and re-exports). */
function importsOf(text: string): string[] {
  return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"]+)\1/g)].map((match) => match[2]!);
}

/** An error's message matched to decide something: `/x/.test(err.message)`, `message.includes(...)` and the like. */
const MESSAGE_MATCH = /\.test\([^)]*\bmessage\b|\bmessage\)?\s*\.\s*(match|includes|startsWith|endsWith|search)\(/;

describe('the CLI is parse, call, render', () => {
  it('no file in src/cli has SQL in a string', () => {
    const offenders: string[] = [];
    for (const { name, text } of filesUnder('cli')) {
      for (const match of text.matchAll(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g)) {
        if (/\b(SELECT|INSERT|UPDATE|DELETE)\b/.test(match[0])) offenders.push(`src/${name}: ${match[0].slice(0, 80)}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('src/cli and src/mcp reach the database and the providers only through src/app', () => {
    const offenders: string[] = [];
    for (const { name, text } of [...filesUnder('cli'), ...filesUnder('mcp')]) {
      for (const specifier of importsOf(text)) {
        if (/(^|\/)store\//.test(specifier) || specifier === 'better-sqlite3' || /(^|\/)providers\/index\.js$/.test(specifier)) offenders.push(`src/${name} imports ${specifier}`);
      }
      if (/\bnew Retriever\(/.test(text)) offenders.push(`src/${name} builds a Retriever`);
    }
    expect(offenders).toEqual([]);
  });

  it('no command imports another command', () => {
    const offenders: string[] = [];
    for (const { name, text } of filesUnder('cli/commands')) {
      for (const specifier of importsOf(text)) {
        if (specifier.startsWith('./') || /(^|\/)commands\//.test(specifier)) offenders.push(`src/${name} imports ${specifier}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('no file in src/cli decides what happened by reading an error message', () => {
    const offenders: string[] = [];
    for (const { name, text } of filesUnder('cli')) {
      text.split('\n').forEach((line, i) => {
        if (MESSAGE_MATCH.test(line)) offenders.push(`src/${name}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });

  it('the guards see what they look for', () => {
    // A check that can never fail proves nothing: each pattern above, on a sample.
    expect(importsOf(`import { a } from '../../store/db.js';\nconst b = await import('./prune.js');\nexport { c } from "better-sqlite3";`)).toEqual(['../../store/db.js', './prune.js', 'better-sqlite3']);
    expect(/\b(SELECT|INSERT|UPDATE|DELETE)\b/.test("'SELECT count(*) FROM turns'")).toBe(true);
    expect(MESSAGE_MATCH.test("if (/needs an upgrade/.test(err.message)) return 'outdated';")).toBe(true);
    expect(MESSAGE_MATCH.test("if ((error as Error).message.includes('locked')) retry();")).toBe(true);
    expect(MESSAGE_MATCH.test("output.err(error.message);")).toBe(false);
  });
});

/**
 * Each folder of src/ and its rank: a module may import from its own folder and
 * from folders of a lower rank, never from a higher one or a sibling of the same
 * rank. The README's layout says the same in words.
 */
const LAYERS: Record<string, number> = {
  domain: 0,
  util: 0,
  text: 0,
  config: 1,
  store: 1,
  providers: 2,
  rewrite: 3,
  retrieve: 3,
  ingest: 3,
  chat: 4,
  replay: 5,
  eval: 5,
  app: 6,
  // The MCP server is a front end of its own; the CLI's `ragline mcp` starts it.
  mcp: 7,
  'index.ts': 7,
  cli: 8,
};

/** The src/ folder (or top-level file) a relative import from `file` lands in. */
function layerOf(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = path.relative(src, path.resolve(path.dirname(file), specifier)).split(path.sep);
  return target[0];
}

function layerViolations(files: { file: string; text: string }[]): string[] {
  const offenders: string[] = [];
  for (const { file, text } of files) {
    const from = path.relative(src, file).split(path.sep)[0]!;
    for (const specifier of importsOf(text)) {
      const to = layerOf(file, specifier);
      if (to === undefined || to === from) continue;
      if (LAYERS[from] === undefined || LAYERS[to] === undefined || LAYERS[to]! >= LAYERS[from]!) offenders.push(`src/${path.relative(src, file)} (${from}) imports ${specifier} (${to})`);
    }
  }
  return offenders;
}

describe('imports point one way', () => {
  it('every folder of src/ has a rank', () => {
    expect(fs.readdirSync(src).filter((name) => LAYERS[name] === undefined)).toEqual([]);
  });

  it('no module imports from a folder above it or beside it', () => {
    const files = sourceFiles(src).map((file) => ({ file, text: fs.readFileSync(file, 'utf8') }));
    expect(layerViolations(files)).toEqual([]);
  });

  it('the check sees an upward and a sideways import', () => {
    const at = (folder: string) => path.join(src, folder, 'x.ts');
    expect(layerViolations([{ file: at('store'), text: "import { runTurn } from '../chat/turn.js';" }])).toHaveLength(1);
    expect(layerViolations([{ file: at('rewrite'), text: "export * from '../retrieve/search.js';" }])).toHaveLength(1);
    expect(layerViolations([{ file: at('chat'), text: "import type { Db } from '../store/db.js';" }])).toEqual([]);
  });
});
