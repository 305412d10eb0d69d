// The offline rewriter and topic tracker on the fixture conversations (about
// fixtures/docs), plus properties: the gate and the rewriter never throw, and the
// rewrite always keeps every content word the user typed.

import fs from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config/index.js';
import { ConversationRewriter } from '../src/eval/conversation.js';
import { askedAction } from '../src/rewrite/offline.js';
import { toConversationTurn } from '../src/chat/stages/history.js';
import { plainQuestion } from '../src/util/words.js';
import {
  activeTopic,
  classifyQuestion,
  contentWords,
  createRewriter,
  extractTerms,
  OfflineRewriter,
  rankTopics,
  summarizeOffline,
  updateTopics,
  type RewriteOutcome,
} from '../src/rewrite/index.js';
import type { Topic } from '../src/domain/index.js';

interface Conversation {
  id: string;
  turns: { question: string; standalone: string; path: string }[];
}
const conversations = JSON.parse(fs.readFileSync(new URL('../fixtures/CONVERSATIONS.json', import.meta.url), 'utf8')) as Conversation[];

/** Plays a conversation through the chat's own history and rewrite stages, as eval does (no answers in the fixture). */
async function play(conversation: Conversation): Promise<RewriteOutcome[]> {
  const { config } = resolveConfig({ env: { HOME: '/nonexistent', XDG_CONFIG_HOME: '/nonexistent/config' } });
  const rewriter = new ConversationRewriter(createRewriter(undefined), config, 'auto');
  const questions = conversation.turns.map((turn) => turn.question);
  return Promise.all(
    questions.map((question, index) =>
      rewriter.rewrite({ id: `${conversation.id}::${index}`, group: conversation.id, question, history: questions.slice(0, index).map((user) => ({ user, assistant: '' })), relevant: [] }),
    ),
  );
}

const conversation = (id: string) => conversations.find((c) => c.id === id)!;

describe('offline rewriter on fixtures/CONVERSATIONS.json', () => {
  // [conversation, turn index, words the rewrite must contain (lower case)]
  const expected: [string, number, string[]][] = [
    ['api-key-lifecycle', 1, ['api key', 'expire']],
    ['api-key-lifecycle', 2, ['api key', 'rotate']],
    ['plans-ordinal', 1, ['plans']],
    ['plans-ordinal', 2, ['plans', 'workspaces']],
    ['relay-install', 1, ['relay agent', 'windows']],
    ['relay-install', 2, ['relay agent', 'port']],
    ['webhook-verification', 1, ['webhook', 'signature']],
    ['nightly-schedule-then-failure', 1, ['job', 'timezone']],
    ['nightly-schedule-then-failure', 3, ['job', 'attempts']],
    ['headless-cli-auth', 1, ['cli', 'ci']],
    ['headless-cli-auth', 2, ['cli', 'exit code']],
  ];
  it.each(expected)('%s turn %i contains %j', async (id, index, words) => {
    const outcome = (await play(conversation(id)))[index]!;
    expect(outcome.decision).toBe('rewritten');
    expect(outcome.model).toBe('offline:rewrite-v1');
    for (const word of words) expect(outcome.standaloneQuery.toLowerCase()).toContain(word);
  });

  it('resolves "it" in place: "Does it expire?" -> "Does the API key expire?"', async () => {
    const outcomes = await play(conversation('api-key-lifecycle'));
    expect(outcomes.map((o) => o.standaloneQuery)).toEqual(['How do I create an API key?', 'Does the API key expire?', 'How do I rotate the API key?']);
    expect(outcomes.map((o) => o.reason)).toEqual(['first turn: no history', "pronoun 'it'; 'it' is 'the API key'", "pronoun 'it'; 'it' is 'the API key'"]);
  });

  it('does not drag the old topic into a new standalone question (topic switch)', async () => {
    const outcomes = await play(conversation('rate-limit-then-topic-switch'));
    expect(outcomes[2]).toEqual({
      standaloneQuery: 'How do I install the orbit CLI on macOS?',
      decision: 'skipped',
      reason: 'standalone: no reference to earlier turns',
    });
  });

  it('without tracked topics falls back to the questions in the history window', async () => {
    const outcome = await new OfflineRewriter().rewrite({
      question: 'And on Windows?',
      history: [{ question: 'How do I install the Relay agent?', standaloneQuery: 'How do I install the Relay agent?', answer: '' }],
      topics: [],
      policy: 'auto',
    });
    // The last how-to question again, in the new circumstance: what a person would have typed.
    expect(outcome).toMatchObject({
      standaloneQuery: 'How do I install the Relay agent on Windows?',
      decision: 'rewritten',
      reason: "opener 'and'; the last question, for this instead",
    });
  });

  it('skips with a reason when a follow-up has nothing to resolve against', async () => {
    const outcome = await new OfflineRewriter().rewrite({
      question: 'Does it expire?',
      history: [{ question: 'hi', standaloneQuery: 'hi', answer: 'Hello!' }],
      topics: [],
      policy: 'auto',
    });
    expect(outcome).toMatchObject({ standaloneQuery: 'Does it expire?', decision: 'skipped', reason: "pronoun 'it'; no topic to resolve it with" });
  });

  describe('two things, or the same phrase swapped', () => {
    const play = async (questions: string[]) => {
      const rewriter = new OfflineRewriter();
      const history: { question: string; standaloneQuery: string; answer: string }[] = [];
      const outcomes: RewriteOutcome[] = [];
      for (const question of questions) {
        const outcome = await rewriter.rewrite({ question, history, topics: [], policy: 'auto' });
        outcomes.push(outcome);
        history.push({ question, standaloneQuery: outcome.standaloneQuery, answer: 'Some answer.' });
      }
      return outcomes;
    };

    it('does not put one referent in place of two of "it" in one clause: they are two things', async () => {
      const [, both] = await play(['How do I write a suppression file for valgrind?', 'where does it look for it by default?']);
      expect(both!.standaloneQuery).toBe('where does it look for it by default? (write a suppression file for valgrind)');
      // In two clauses the first is put in place, as for one.
      const [, apart] = await play(['How do I create an API key?', 'Does it expire, and can I renew it?']);
      expect(apart!.standaloneQuery).toBe('Does the API key expire, and can I renew it?');
    });

    it('"the memcheck and helgrind tools" are two tools, and "it" after "the second one" is the one it named', async () => {
      const [, second, run] = await play(['What are the memcheck and helgrind tools?', 'tell me more about the second one', 'how do I run it?']);
      expect(second!.standaloneQuery).toBe('tell me more about the helgrind tool');
      expect(run!.standaloneQuery).toBe('how do I run the helgrind tool?');
      // The head in the singular: "caches" -> cache, "sizes" -> size, "patches" -> patch.
      const [, cache] = await play(['What are the npm and yarn caches?', 'how do I clear the first one?']);
      expect(cache!.standaloneQuery).toBe('how do I clear the npm cache?');
      const [, size] = await play(['What are the heap and stack sizes?', 'how do I raise the second one?']);
      expect(size!.standaloneQuery).toBe('how do I raise the stack size?');
      const [, patch] = await play(['Where are the security and bugfix patches?', 'how do I apply the first one?']);
      expect(patch!.standaloneQuery).toBe('how do I apply the security patch?');
      // Items of their own are left as written.
      const [, own] = await play(['What is the difference between npm ci and npm install?', 'when should I use the first one?']);
      expect(own!.standaloneQuery).toBe('when should I use npm ci?');
    });

    it('"the second one" after an answer that quotes the documents is the second thing the question named, not its second quote', async () => {
      const question = 'Should I use git subtree or submodules?';
      const answer = 'Extractive answer (no language model configured):\n- Unlike submodules, subtrees do not need any special constructions. [1]\n- Subtrees are not to be confused with submodules, which are meant for the same task. [1]';
      const outcome = await new OfflineRewriter().rewrite({ question: 'tell me more about the second one', history: [toConversationTurn({ question, standaloneQuery: question, answer, answerKind: 'extractive' })], topics: [], policy: 'auto' });
      expect(outcome.standaloneQuery).toBe('tell me more about submodules');
      // A model's answer that lists things is what "the second one" counts in.
      const listed = await new OfflineRewriter().rewrite({ question: 'tell me more about the second one', history: [toConversationTurn({ question: 'Which tools are there?', standaloneQuery: 'Which tools are there?', answer: '1. Memcheck\n2. Cachegrind', answerKind: 'llm' })], topics: [], policy: 'auto' });
      expect(listed.standaloneQuery).toBe('tell me more about Cachegrind');
    });

    it('reads a question less its runs of spaces and of one punctuation mark, so a pasted run costs nothing', async () => {
      expect(plainQuestion('  how  do I\t\tfix it??????  ')).toBe('how do I fix it???');
      expect(plainQuestion('Node.js... C++ -- ok')).toBe('Node.js... C++ -- ok');
      const history = [{ question: 'How do I write a suppression file for valgrind?', standaloneQuery: 'How do I write a suppression file for valgrind?', answer: 'x' }];
      const long = await new OfflineRewriter().rewrite({ question: `and for helgrind${'.'.repeat(20000)}`, history, topics: [], policy: 'auto' });
      expect(long.standaloneQuery).toBe('How do I write a suppression file for helgrind?');
      const spaced = await new OfflineRewriter().rewrite({ question: `and for ${' '.repeat(20000)}helgrind?`, history, topics: [], policy: 'auto' });
      expect(spaced.standaloneQuery).toBe('How do I write a suppression file for helgrind?');
    });

    it('"what about --squash?" names an option of the last action, not a thing to do it to', async () => {
      const [, squash] = await play(['How do I split a subtree out with git subtree?', 'what about --squash?']);
      expect(squash!.standaloneQuery).toBe('what about --squash? (split a subtree out with git subtree)');
    });

    it('"who wrote X?" is about X: the word after "who" is its verb, not a thing "it" can be', async () => {
      const [, license, upgrade] = await play(['Who wrote the Frobnicator?', 'What license is it under?', 'How do I upgrade it from 1.x?']);
      expect(license!.standaloneQuery).toBe('What license is the Frobnicator under?');
      expect(upgrade!.standaloneQuery).toBe('How do I upgrade the Frobnicator from 1.x?');
      const [, find] = await play(['What causes a memory leak?', 'How do I find it?']);
      expect(find!.standaloneQuery).toBe('How do I find the memory leak?');
    });

    it('a possessive phrase keeps the article it was written with', async () => {
      const [, hash] = await play(["How do I verify a downloaded file's hash with pip?", 'how do I get it for a package?']);
      expect(hash!.standaloneQuery).toBe("how do I get the downloaded file's hash for a package?");
      const [, cache] = await play(["How do I clear npm's cache?", 'is it safe to delete it by hand?']);
      expect(cache!.standaloneQuery).toBe("is it safe to delete npm's cache by hand?");
    });

    it('"and for X?" swaps the phrase after the same preposition, and says which question it asks again', async () => {
      const [, , swapped] = await play(['How do I write a suppression file for valgrind?', 'where does it look for it by default?', 'and for helgrind?']);
      expect(swapped).toMatchObject({ standaloneQuery: 'How do I write a suppression file for helgrind?', reason: "opener 'and'; the question before the last, for this instead" });
      const [, windows] = await play(['How do I install the agent on Linux with apt?', 'and on Windows?']);
      expect(windows).toMatchObject({ standaloneQuery: 'How do I install the agent on Windows with apt?', reason: "opener 'and'; the last question, for this instead" });
    });
  });

  describe('"do that" stands for the last question\'s action', () => {
    const ask = (question: string, last: string, standalone = last) =>
      new OfflineRewriter().rewrite({ question, history: [{ question: last, standaloneQuery: standalone, answer: '' }], topics: [], policy: 'auto' });

    it('puts the action where "do that" / "do it" stood', async () => {
      expect(await ask('How often should I do that?', 'How do I rotate an API key?')).toMatchObject({
        standaloneQuery: 'How often should I rotate an API key?',
        decision: 'rewritten',
        reason: "pronoun 'that'; 'do that' is the last question's action",
      });
      expect((await ask('Can I do it from the CLI?', 'How often should I do that?', 'How often should I rotate an API key?')).standaloneQuery).toBe(
        'Can I rotate an API key from the CLI?',
      );
      expect((await ask('why would I do this?', "What's the best way to pin a version?")).standaloneQuery).toBe('why would I pin a version?');
    });

    it('leaves "do that <noun>", identifiers and questions that asked no action to the noun-phrase rules', async () => {
      expect((await ask('Should I do that migration first?', 'How do I rotate an API key?')).reason).not.toContain('action');
      expect((await ask('Can I do it.example?', 'How do I rotate an API key?')).reason).not.toContain('action');
      const noAction = await ask('How often should I do that?', 'What is an API key?');
      expect(noAction.reason).not.toContain('action');
      expect(noAction.standaloneQuery).toContain('API key');
    });
  });

  it('askedAction finds the action a question asks about, and nothing in other questions', () => {
    expect(askedAction('How do I rotate an API key?')).toBe('rotate an API key');
    expect(askedAction('how can we export a report as CSV')).toBe('export a report as CSV');
    expect(askedAction('How long should I wait for the relay to connect? (Relay agent)')).toBe('wait for the relay to connect');
    expect(askedAction('Can I delete a workspace?')).toBe('delete a workspace');
    expect(askedAction('How to pin a version?')).toBe('pin a version');
    expect(askedAction('I want to invite a teammate')).toBe('invite a teammate');
    expect(askedAction('What is an API key?')).toBeUndefined();
    expect(askedAction('How do I do that?')).toBeUndefined();
    expect(askedAction('How does billing work?')).toBeUndefined();
  });

  it('propagates an abort', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(new OfflineRewriter().rewrite({ question: 'x', history: [], topics: [], policy: 'auto', signal: controller.signal })).rejects.toBeDefined();
  });
});

describe('topics', () => {
  it('extracts identifiers, backticked commands, names and noun phrases, merging by stem', () => {
    const terms = extractTerms('Set ORBIT_TOKEN and run `orbit login` so the Relay agent can reach IBM Cloud. API keys and the API key rotate.').map((t) => t.term);
    expect(terms).toEqual(expect.arrayContaining(['ORBIT_TOKEN', 'orbit login', 'Relay agent', 'IBM Cloud', 'API keys']));
    expect(terms).not.toContain('API key'); // merged with "API keys"
  });

  it('keeps names whose punctuation is their meaning whole: C++, C#, F#, .NET', () => {
    const terms = (text: string) => extractTerms(text).map((t) => t.term);
    expect(terms('How do I set the C++ standard in CMake?')).toEqual(expect.arrayContaining(['C++ standard', 'CMake']));
    expect(terms('Does C# work with .NET 8?')).toEqual(expect.arrayContaining(['C#', '.NET']));
    expect(terms('Is F# supported?')).toContain('F#');
    // `#` and `+` that stand apart still separate words.
    expect(terms('## Valgrind memcheck + Helgrind')).toEqual(expect.arrayContaining(['Valgrind memcheck', 'Helgrind']));
  });

  it.each([
    // After an auxiliary and its subject pronoun.
    ['How do I turn off email alerts?', 'turn', ['email alerts']],
    ['Where should I put the config file?', 'put', ['config file']],
    ['Can we schedule nightly exports?', 'schedule', ['nightly exports']],
    ['Will it retry failed deliveries?', 'retry', ['deliveries']],
    // After a subject that is never an object.
    ["I've put the token in my shell profile", 'put', ['token', 'shell profile']],
    ['We turn on audit logs for every workspace', 'turn', ['audit logs', 'workspace']],
    // After a wh-word and "to".
    ['how to pin a dependency version', 'pin', ['dependency version']],
    // An imperative: the first word, with an object after it.
    ['Put the API key in an environment variable', 'Put', ['API key', 'environment variable']],
  ])('a verb is never a topic, told by its place: %s', (question, verb, nouns) => {
    const terms = extractTerms(question).map((t) => t.term);
    expect(terms.filter((term) => term.split(' ').includes(verb))).toEqual([]);
    expect(terms).toEqual(expect.arrayContaining(nouns));
    const topics = updateTopics([], { ordinal: 1, question, standaloneQuery: question, answer: '' }).map((t) => t.term);
    expect(topics.filter((term) => term.split(' ').includes(verb))).toEqual([]);
  });

  it('the same words where a noun stands stay topics', () => {
    const terms = (text: string) => extractTerms(text).map((t) => t.term);
    expect(terms('What happens on my turn in the queue?')).toContain('turn');
    expect(terms('Is it a put or a call option?')).toContain('put');
    // A noun subject after an auxiliary is the subject, not a verb ("can webhooks fail").
    expect(terms('How can webhooks be retried?')).toContain('webhooks');
    // "be" with its subject is followed by an adjective or a noun, not a verb.
    expect(terms('Is it secure storage?')).toContain('secure storage');
    // "to" after anything but a wh-word is a preposition: what follows is its object.
    expect(terms('Send the audit logs to Datadog')).toEqual(expect.arrayContaining(['audit logs', 'Datadog']));
  });

  it('keeps topics most recent first, bounded, with the latest question as the active topic', () => {
    let topics: Topic[] = [];
    for (let ordinal = 1; ordinal <= 30; ordinal++) {
      topics = updateTopics(topics, { ordinal, question: `How do I configure widget${ordinal} limits?`, standaloneQuery: `How do I configure widget${ordinal} limits?`, answer: `The widget${ordinal} dashboard shows them.` });
    }
    expect(topics.length).toBeLessThanOrEqual(20);
    expect(topics[0]!.lastTurn).toBe(30);
    for (let i = 1; i < topics.length; i++) expect(topics[i - 1]!.lastTurn).toBeGreaterThanOrEqual(topics[i]!.lastTurn);
    expect(activeTopic(topics)).toMatchObject({ lastTurn: 30, source: 'question' });
    expect(activeTopic(topics)!.term).toMatch(/widget30/);
  });

  it('decays a topic that is not mentioned again', () => {
    let topics = updateTopics([], { ordinal: 1, question: 'How do I create an API key?', standaloneQuery: 'How do I create an API key?', answer: '' });
    const first = topics.find((t) => t.term === 'API key')!.weight;
    topics = updateTopics(topics, { ordinal: 2, question: 'What are webhooks?', standaloneQuery: 'What are webhooks?', answer: '' });
    expect(topics.find((t) => t.term === 'API key')!.weight).toBeLessThan(first);
    expect(activeTopic(topics)!.term).toBe('webhooks');
  });

  it('ranks the terms of the part that asks above the scene set before it', () => {
    const question = 'The build script in our package.json uses bash-only syntax and fails. Which shell does npm run scripts with?';
    const ranked = rankTopics(updateTopics([], { ordinal: 1, question, standaloneQuery: question, answer: '' })).map((topic) => topic.term);
    expect(ranked.indexOf('shell')).toBeGreaterThanOrEqual(0);
    expect(ranked.indexOf('shell')).toBeLessThan(ranked.indexOf('build script'));
    // A follow-up left unsure carries the asked-about words first.
    const rewriter = new OfflineRewriter();
    const outcome = rewriter.rewriteSync({ question: 'and on Windows?', history: [{ question, standaloneQuery: question, answer: '' }], topics: [], policy: 'auto' });
    expect(outcome.standaloneQuery).toMatch(/\(.*\bshell\b/);
  });

  it('summarizes earlier turns as their standalone queries and the topics, short', () => {
    const turns = Array.from({ length: 40 }, (_, i) => ({ question: `q${i}`, standaloneQuery: `How do I configure the retry policy number ${i}?`, answer: 'a' }));
    const topics = updateTopics([], { ordinal: 1, question: 'retry policy', standaloneQuery: 'retry policy', answer: '' });
    const summary = summarizeOffline(turns, topics);
    expect(summary.length).toBeLessThanOrEqual(400);
    expect(summary).toContain('number 39?');
    expect(summary).toContain('Topics: retry policy');
    expect(summarizeOffline([], [])).toBe('');
  });
});

describe('properties', () => {
  const RUNS = { seed: 20240611, numRuns: 300 };
  const word = fc.oneof(
    fc.constantFrom('it', 'its', 'that', 'this', 'they', 'them', 'what', 'about', 'and', 'the', 'second', 'one', 'cheaper', 'more', 'ok', 'thanks', 'hi', "it's", 'ORBIT_TOKEN', 'v1.2', 'API', 'key', 'Relay', 'agent', '$&', "$'", 'it.example', '-it', 'é', '日本語'),
    fc.string({ maxLength: 8 }),
  );
  const text = fc.array(word, { maxLength: 12 }).map((words) => words.join(' '));
  const turn = fc.record({ question: text, standaloneQuery: text, answer: text });

  it('classifyQuestion never throws and always names a reason', () => {
    fc.assert(
      fc.property(text, fc.boolean(), (question, hasHistory) => {
        const result = classifyQuestion(question, hasHistory);
        expect(result.reason.length).toBeGreaterThan(0);
      }),
      RUNS,
    );
  });

  it('the offline rewrite never throws and keeps every content word of the question', () => {
    const rewriter = new OfflineRewriter();
    fc.assert(
      fc.property(text, fc.array(turn, { maxLength: 4 }), fc.constantFrom('auto', 'always', 'never'), (question, history, policy) => {
        let topics: Topic[] = [];
        history.forEach((t, i) => {
          topics = updateTopics(topics, { ordinal: i + 1, ...t });
        });
        const outcome = rewriter.rewriteSync({ question, history, topics, policy });
        const kept = new Set(contentWords(outcome.standaloneQuery));
        for (const word of contentWords(question)) expect(kept.has(word)).toBe(true);
      }),
      RUNS,
    );
  });
});
