// Vitest's global setup: compile src/ to dist/ before any test runs, so the CLI
// tests that run the built command as a process (runCli; the in-process ones run
// the sources) never test code older than the sources, with
// `npm test`, `npx vitest run` or a single file alike. Incremental (dist/.tsbuildinfo):
// about 1.5 s when nothing changed. A type error stops the run with tsc's output.

import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export default function setup(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.json')], { cwd: ROOT, stdio: 'pipe' });
  } catch (error) {
    const output = (error as { stdout?: Buffer }).stdout?.toString() ?? String(error);
    throw new Error(`The sources do not compile, so no test was run:\n${output}`, { cause: error });
  }
}
