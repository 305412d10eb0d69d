// Which embedder the commands would use with a set of settings: the settings
// alone, or the index in the database they name when there is one.

import fs from 'node:fs';
import { chooseEmbedder, type EmbedderChoice, type ResolvedConfig } from '../config/index.js';
import { openDatabase } from '../store/db.js';
import { getFingerprint } from '../store/meta.js';

/** The embedder commands will use with these settings (the index, when there is one, is read, read-only). */
export function embedderInUse(resolved: ResolvedConfig): EmbedderChoice {
  let indexEmbedder: string | undefined;
  if (resolved.config.db !== ':memory:' && fs.existsSync(resolved.config.db)) {
    try {
      const db = openDatabase(resolved.config.db, { readonly: true });
      try {
        indexEmbedder = getFingerprint(db)?.embedder;
      } finally {
        db.close();
      }
    } catch {
      // An unreadable database: `ragline doctor` says why; here the choice without it.
    }
  }
  return chooseEmbedder(resolved, indexEmbedder);
}
