#!/bin/sh
# Everything in RESULTS.md, in one command (about 30-60 minutes on a quiet 2-core machine):
#   bench/scale/all.sh
# Builds the modules, generates the databases that are missing (bench/out/scale/,
# gitignored), then runs the bandwidth floor, every strategy (REPEAT runs each), the
# one-shot and refresh costs and the exactness check. Raw JSON lines go to
# bench/out/scale/*.jsonl, the table to bench/out/scale/summary.md.
set -e
cd "$(dirname "$0")/../.."
out=bench/out/scale
./bench/scale/build.sh
[ -f $out/100k.db ] || node bench/scale/gen.mjs 100000
[ -f $out/1000k.db ] || node bench/scale/gen.mjs 1000000
[ -f $out/real.db ] || node bench/scale/gen.mjs real
rm -f $out/results.jsonl
for i in 1 2 3; do node bench/scale/bandwidth.mjs | tee -a $out/bandwidth.jsonl; done
REPEAT=${REPEAT:-3} ./bench/scale/run.sh $out/100k.db vec0 vec0-nommap memory memory2 js bq-200 bq-1000
REPEAT=1 ./bench/scale/run.sh $out/real.db vec0 memory memory2 bq-200 bq-1000 bq-3000
REPEAT=${REPEAT:-3} ./bench/scale/run.sh $out/1000k.db vec0 memory memory2 bq-200 bq-1000
REPEAT=1 QUERIES=50 ./bench/scale/run.sh $out/1000k.db vec0-nommap js
for db in 100k 1000k; do node bench/scale/cold.mjs $out/$db.db 20 | tee -a $out/cold.jsonl; done
for db in 100k 1000k; do node bench/scale/refresh.mjs $out/$db.db | tee -a $out/refresh.jsonl; done
node bench/scale/exact-check.mjs $out/real.db | tee -a $out/exact.jsonl
node bench/scale/exact-check.mjs $out/100k.db 50 | tee -a $out/exact.jsonl
node bench/scale/summarize.mjs $out/results.jsonl | tee $out/summary.md
