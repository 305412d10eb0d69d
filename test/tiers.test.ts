// The two tiers of tests (docs/testing.md): every test file under test/ runs in
// exactly one of vitest.config.ts's projects, `unit` (npm test) or `soak`
// (npm run test:soak), so none is run twice and none is left out.

import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { expect, test } from 'vitest';
import config from '../vitest.config.js';
import { ROOT } from './helpers/cli.js';

function filesUnder(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    return entry.isDirectory() ? filesUnder(relative) : [relative];
  });
}

test('every test file is in one tier: unit for test/, soak for test/soak/', () => {
  const projects = (config.test?.projects ?? []) as { test: { name: string; include: string[]; exclude?: string[] } }[];
  expect(projects.map((project) => project.test.name)).toEqual(['unit', 'soak']);
  const tierOf = (file: string) =>
    projects
      .filter(({ test: { include, exclude = [] } }) => picomatch(include)(file) && !picomatch(exclude)(file))
      .map((project) => project.test.name);
  const testFiles = filesUnder('test').filter((file) => /\.(test|spec)\.[cm]?[jt]sx?$/.test(file));
  expect(testFiles.length).toBeGreaterThan(70);
  for (const file of testFiles) expect(tierOf(file), file).toEqual([file.startsWith('test/soak/') ? 'soak' : 'unit']);
});
