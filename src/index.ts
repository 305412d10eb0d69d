// ragline as a library: open a workspace on a database, ingest folders, search,
// chat (each turn a stream of typed events), replay and evaluate; the same
// operations the `ragline` command runs (src/app). See the README, "Use it from
// another program".

export * from './app/index.js';
export { UserError } from './util/errors.js';
export { OutdatedSchemaError } from './store/migrations.js';
