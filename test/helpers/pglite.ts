// A real Postgres for the tests without any server installed: PGlite (Postgres
// compiled to WebAssembly) with pgvector and pg_textsearch, served on a loopback
// port by pglite-socket, so the `pg` client speaks the wire protocol to it as it
// would to a server. A new PGlite runs initdb (20-25 s on a busy machine); the
// first start of each set of extensions keeps its data folder as a tarball in the
// temp folder, and later ones load that (3-4 s).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { PGlite, type Extensions } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { pg_textsearch } from '@electric-sql/pglite-pg_textsearch';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface TestPostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  /** The PGlite behind it, for reads a test makes without the wire protocol. */
  db: PGlite;
  close(): Promise<void>;
}

function templatePath(kind: string): string {
  // The package's exports hide its package.json: read it beside the resolved entry.
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const manifest = path.join(entry.slice(0, entry.lastIndexOf(`${path.sep}dist${path.sep}`)), 'package.json');
  const version = (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { version: string }).version;
  return path.join(os.tmpdir(), `ragline-pglite-${version}-${kind}.tar.gz`);
}

async function newDatabase(textsearch: boolean): Promise<PGlite> {
  const extensions: Extensions = textsearch ? { vector, pg_textsearch } : { vector };
  const template = templatePath(textsearch ? 'vector-textsearch' : 'vector');
  if (fs.existsSync(template)) {
    return PGlite.create({ loadDataDir: new Blob([fs.readFileSync(template)]), extensions });
  }
  const db = await PGlite.create({ extensions });
  const dump = await db.dumpDataDir('gzip');
  // Written under another name and renamed: two test files starting at once never read half a tarball.
  const partial = `${template}.${process.pid}`;
  fs.writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
  fs.renameSync(partial, template);
  return db;
}

/**
 * Starts a Postgres with the pgvector and pg_textsearch extensions available (not
 * created: ragline creates what it uses), listening on 127.0.0.1 at a free port.
 * `textsearch: false` leaves pg_textsearch out, as on a server without it.
 */
export async function startPostgres(options: { textsearch?: boolean } = {}): Promise<TestPostgres> {
  const db = await newDatabase(options.textsearch ?? true);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 64 });
  await server.start();
  const url = `postgres://postgres@${server.getServerConn()}/postgres`;
  return {
    url,
    db,
    async close() {
      await server.stop();
      await db.close();
    },
  };
}
