#!/bin/sh
# Runs every strategy on one database, each in a fresh process, REPEAT times
# (default 3), appending JSON lines to bench/out/scale/results.jsonl.
#   bench/scale/run.sh bench/out/scale/100k.db [strategies...]
set -e
cd "$(dirname "$0")/../.."
db="$1"; shift
strategies="${*:-vec0 vec0-nommap memory memory2 js bq-200 bq-1000}"
repeat="${REPEAT:-3}"
queries="${QUERIES:-200}"
i=1
while [ "$i" -le "$repeat" ]; do
  for s in $strategies; do
    node bench/scale/bench.mjs "$db" "$s" "$queries" | tee -a bench/out/scale/results.jsonl
  done
  i=$((i + 1))
done
