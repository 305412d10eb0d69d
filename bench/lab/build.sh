#!/bin/sh
# Compiles only the lab's modules (src/text, src/eval, src/retrieve/{fts-query,fuse},
# src/providers/offline-embedder) into bench/out/lib so the .mjs lab scripts can import them.
set -e
cd "$(dirname "$0")/../.."
npx tsc --outDir bench/out/lib --rootDir src --module NodeNext --moduleResolution NodeNext \
  --target ES2022 --strict --skipLibCheck --types node \
  src/text/index.ts src/eval/metrics.ts src/retrieve/fts-query.ts src/retrieve/fuse.ts \
  src/providers/offline-embedder.ts
