#!/bin/sh
# Compiles the modules the scale benchmark needs (store, retrieve/vec0 + memory/vector-*,
# the offline embedder) into bench/out/scale/lib, independent of the rest of src/.
set -e
cd "$(dirname "$0")/../.."
npx tsc --outDir bench/out/scale/lib --rootDir src --module NodeNext --moduleResolution NodeNext \
  --target ES2022 --lib ES2023 --strict --skipLibCheck --types node \
  src/store/db.ts src/store/documents.ts src/retrieve/memory/accelerators.ts src/retrieve/vec0.ts \
  src/retrieve/memory/vector-index.ts src/retrieve/memory/vector-kernel.ts src/retrieve/memory/vector-worker.ts \
  src/providers/offline-embedder.ts
