// Which embedder the commands would use with a set of settings: the settings
// alone, or the index in the database they name when there is one.

import fs from 'node:fs';
import { chooseEmbedder, embeddingServer, withEmbedder, type EmbedderChoice, type IndexedWith, type ResolvedConfig } from '../config/index.js';
import { resolvePrefixes, type EmbeddingPrefixes } from '../providers/embedding-prefixes.js';

export { describePrefixes } from '../providers/embedding-prefixes.js';
import { openDatabase } from '../store/db.js';
import { getFingerprint } from '../store/meta.js';
import { displayURL } from '../util/url.js';

/** The embedder in use, and for a remote one where it is and what it puts before texts. */
export interface EmbedderInUse extends EmbedderChoice {
  /** The server embeddings go to (without any user:password), when remote. */
  server?: string;
  /** What is put before each query and document, when remote. */
  prefixes?: EmbeddingPrefixes;
}

/** The embedder commands will use with these settings (the index, when there is one, is read, read-only). */
export function embedderInUse(resolved: ResolvedConfig): EmbedderInUse {
  let index: IndexedWith | undefined;
  if (resolved.config.db !== ':memory:' && fs.existsSync(resolved.config.db)) {
    try {
      const db = openDatabase(resolved.config.db, { readonly: true });
      try {
        index = getFingerprint(db);
      } finally {
        db.close();
      }
    } catch {
      // An unreadable database: `ragline doctor` says why; here the choice without it.
    }
  }
  const choice = chooseEmbedder(resolved, index);
  if (!choice.remote) return choice;
  const config = withEmbedder(resolved.config, choice);
  return {
    ...choice,
    // OpenAI's API when no base URL is set (OPENAI_API_BASE_URL: not imported, it would load the SDK's errors).
    server: displayURL(embeddingServer(config).baseURL ?? 'https://api.openai.com/v1'),
    prefixes: resolvePrefixes(config.models.embedding, config.embedding),
  };
}

