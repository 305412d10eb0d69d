// Another program using ragline: node examples/library.mjs <folder> <database>
import { Chat, ingestFolder, openWorkspace } from 'ragline';

const [folder, db] = process.argv.slice(2);
// Settings by dotted key, as in the config file; add `env: process.env` to read RAGLINE_* and the config file too.
const workspace = openWorkspace({ db, settings: { 'retrieval.k': 3 } });
try {
  const summary = await ingestFolder(workspace, folder);
  console.log(`ingested ${summary.files.added} files, ${summary.chunks.written} chunks`);
  const chat = Chat.start(workspace); // a new session, stored with its first question
  for (const question of ['How do I rotate an API key?', 'does it expire?']) {
    for await (const event of chat.ask(question)) {
      if (event.type === 'rewrite') console.log(`searched as: ${event.standaloneQuery} (${event.decision})`);
      if (event.type === 'retrieval') console.log(`found: ${event.chunks.map((chunk) => chunk.documentPath).join(', ')}`);
      if (event.type === 'done') console.log(`answer (${event.status}): ${event.answer}`);
    }
  }
} finally {
  await workspace.close();
}
