// Where the real documentation lives on this machine, and the folder of links the
// real-document benchmark ingests: CMake's Help pages (reStructuredText), the Node.js
// API docs (Markdown; the HTML copies beside them are left out), npm's own docs
// (Markdown, inside the npm package) and the Valgrind manual (HTML); pip's docs and the
// held-out set's (Docker's reference, SQLite's manual) are sets of their own.

import fs from 'node:fs';
import path from 'node:path';

export const SOURCES = [
  { name: 'cmake', dirs: ['/usr/share/cmake-3.25/Help', ...globCmake()] },
  { name: 'node', dirs: ['/usr/share/doc/nodejs/api'] },
  { name: 'npm', dirs: ['/usr/lib/node_modules/npm/docs/content', '/usr/local/lib/node_modules/npm/docs/content'] },
  { name: 'valgrind', dirs: ['/usr/share/doc/valgrind/html'] },
  // A set of its own (`--set pip`): pip's Sphinx sources as Debian ships them (RST and MyST, some gzipped).
  { name: 'pip', dirs: ['/usr/share/doc/python3-pip/html'] },
  // The held-out set (`--set heldout-12`), on documentation not installed by default:
  //   apt-get install -y docker-doc sqlite3-doc
  // docker-doc is the Docker CLI and Dockerfile references in Markdown (many gzipped); sqlite3-doc
  // is SQLite's website as HTML. The sqlite3 package alone leaves changelogs in the same folder,
  // so that folder counts only when the manual's own index page is there (`marker`).
  { name: 'docker', dirs: ['/usr/share/doc/docker-doc'], marker: 'reference/commandline/run.md.gz' },
  { name: 'sqlite', dirs: ['/usr/share/doc/sqlite3'], marker: 'index.html' },
];

/** The documentation sets of each conversation set (`--set`): the default one, pip's, and the held-out one. */
export const SETS = { default: ['cmake', 'node', 'npm', 'valgrind'], pip: ['pip'], 'heldout-12': ['docker', 'sqlite'] };

/** Globs left out of the ingest: Node's HTML pages duplicate its Markdown ones. */
export const EXCLUDE = ['node/**/*.html', 'node/**/*.htm'];

function globCmake() {
  try {
    return fs
      .readdirSync('/usr/share')
      .filter((name) => /^cmake-\d/.test(name))
      .map((name) => path.join('/usr/share', name, 'Help'));
  } catch {
    return [];
  }
}

/**
 * A folder under `out` holding one link per documentation set of `names` found on this machine;
 * returns the folder and the names of the sets found and missing.
 */
export function stageDocs(out, names = SETS.default) {
  const folder = path.join(out, 'docs');
  fs.mkdirSync(folder, { recursive: true });
  const found = [];
  const missing = [];
  for (const source of SOURCES.filter((candidate) => names.includes(candidate.name))) {
    const dir = source.dirs.find((candidate) => fs.existsSync(path.join(candidate, source.marker ?? '')));
    const link = path.join(folder, source.name);
    if (!dir) {
      missing.push(source.name);
      fs.rmSync(link, { force: true });
      continue;
    }
    let current;
    try {
      current = fs.readlinkSync(link);
    } catch {
      current = undefined;
    }
    if (current !== dir) {
      fs.rmSync(link, { force: true, recursive: true });
      fs.symlinkSync(dir, link);
    }
    found.push(source.name);
  }
  return { folder, found, missing };
}
