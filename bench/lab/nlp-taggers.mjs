#!/usr/bin/env node
// Part-of-speech taggers from npm, side by side on follow-ups: cold load (a fresh
// process: import and model), tagging cost per question, and how often the noun
// phrases read from the last exchange hold the referent a person marked
// (bench/realdocs/conversations.json `referent`). Noun phrases are read the same way
// from every tagger's tags (a run of adjectives, numbers and nouns ending with a noun),
// so the comparison is of the tags. Writes nothing; prints a markdown table.
//
//   node bench/lab/nlp-taggers.mjs [--modules <folder with node_modules>] [--n 50] [--answers <realdocs --json output>]

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { option, root } from '../turn/common.mjs';

const modules = path.resolve(option('modules', root));
const require = createRequire(path.join(modules, 'noop.js'));
const n = Number(option('n', '50'));
const answersFile = option('answers');

// The sample: the first `n` follow-ups of the dev half that carry a referent, each with
// the question before it and (when given) the answer the chat gave to it.
const { halfOf } = await import('../turn/common.mjs');
const set = JSON.parse(fs.readFileSync(path.join(root, 'bench/realdocs/conversations.json'), 'utf8'));
const answers = new Map();
if (answersFile) for (const row of JSON.parse(fs.readFileSync(answersFile, 'utf8')).rows ?? []) answers.set(`${row.conversation}#${row.turn}`, row.answer ?? '');
const sample = [];
for (const conversation of set.conversations) {
  if (halfOf(conversation.id) !== 'dev') continue;
  conversation.turns.forEach((turn, i) => {
    if (i === 0 || !turn.referent || sample.length >= n) return;
    const last = conversation.turns[i - 1];
    sample.push({ question: turn.user, lastQuestion: last.user, lastAnswer: last.answer ?? answers.get(`${conversation.id}#${i}`) ?? '', referent: new RegExp(turn.referent, 'i') });
  });
}

const NOUN = new Set(['NOUN', 'PROPN']);
const MODIFIER = new Set(['ADJ', 'NUM', 'NOUN', 'PROPN']);
/** Noun phrases from (word, tag) pairs: maximal runs of modifiers ending with a noun. */
function phrases(tagged) {
  const found = [];
  let run = [];
  const close = () => {
    while (run.length && !NOUN.has(run.at(-1).tag)) run.pop();
    if (run.length) found.push(run.map((t) => t.word).join(' '));
    run = [];
  };
  for (const token of tagged) (MODIFIER.has(token.tag) ? run.push(token) : close());
  close();
  return found;
}

const COARSE = { Noun: 'NOUN', ProperNoun: 'PROPN', Adjective: 'ADJ', Value: 'NUM', Verb: 'VERB', Pronoun: 'PRON', Determiner: 'DET', Preposition: 'ADP' };
const taggers = {
  'wink-nlp + wink-eng-lite-web-model': {
    load: `const w=require('wink-nlp');const m=require('wink-eng-lite-web-model');w(m)`,
    make() {
      const nlp = require('wink-nlp')(require('wink-eng-lite-web-model'));
      const its = nlp.its;
      return (text) => {
        const tokens = nlp.readDoc(text).tokens();
        return tokens.out(its.value).map((word, i) => ({ word, tag: tokens.itemAt(i).out(its.pos) }));
      };
    },
  },
  'wink-nlp, code-like words kept whole': {
    load: `const w=require('wink-nlp');const m=require('wink-eng-lite-web-model');w(m)`,
    make() {
      const nlp = require('wink-nlp')(require('wink-eng-lite-web-model'));
      const its = nlp.its;
      // "Node.js", "find_package", "--leak-check", "node:fs" read as one proper noun each.
      const CODE = /(?<![\w-])(?:-{1,2}[\p{L}\p{N}][\w=-]*|[\p{L}\p{N}]+(?:[._:/@-][\p{L}\p{N}]+)+)/gu;
      return (text) => {
        const kept = [];
        const masked = text.replace(CODE, (word) => `Zq${kept.push(word) - 1}x`);
        const tokens = nlp.readDoc(masked).tokens();
        return tokens.out(its.value).map((word, i) => {
          const code = /^Zq(\d+)x$/.exec(word);
          return code ? { word: kept[Number(code[1])], tag: 'PROPN' } : { word, tag: tokens.itemAt(i).out(its.pos) };
        });
      };
    },
  },
  compromise: {
    load: `require('compromise')('warm up')`,
    make() {
      const nlp = require('compromise');
      return (text) =>
        nlp(text)
          .terms()
          .json()
          .map((t) => {
            const tags = t.terms[0].tags;
            const coarse = tags.includes('Pronoun') ? 'PRON' : tags.includes('ProperNoun') ? 'PROPN' : (tags.map((tag) => COARSE[tag]).find(Boolean) ?? 'X');
            return { word: t.terms[0].text, tag: coarse };
          });
    },
  },
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`sample: ${sample.length} follow-ups (dev half of bench/realdocs), answers ${answersFile ? 'from ' + answersFile : 'not given'}\n`);
console.log('| tagger | cold load ms (median of 5) | tag ms / question (median) | tag ms / last answer (median) | referent in last question\'s phrases | in last exchange\'s | phrases / last question |');
console.log('|---|---|---|---|---|---|---|');
for (const [name, tagger] of Object.entries(taggers)) {
  const loads = [];
  for (let i = 0; i < 5; i++) {
    const script = `const {createRequire}=require('module');const require2=createRequire(${JSON.stringify(path.join(modules, 'noop.js'))});const t=performance.now();(function(require){${tagger.load}})(require2);console.log(performance.now()-t)`;
    loads.push(Number(spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' }).stdout));
  }
  const tag = tagger.make();
  for (const item of sample.slice(0, 5)) tag(item.question); // warm
  const qms = [];
  const ams = [];
  let inQuestion = 0;
  let inExchange = 0;
  let count = 0;
  for (const item of sample) {
    let t = performance.now();
    tag(item.question);
    qms.push(performance.now() - t);
    const fromQuestion = phrases(tag(item.lastQuestion));
    t = performance.now();
    const fromAnswer = item.lastAnswer ? phrases(tag(item.lastAnswer.slice(0, 2000))) : [];
    if (item.lastAnswer) ams.push(performance.now() - t);
    count += fromQuestion.length;
    if (fromQuestion.some((p) => item.referent.test(p))) inQuestion++;
    if ([...fromQuestion, ...fromAnswer].some((p) => item.referent.test(p))) inExchange++;
    if (process.argv.includes('--verbose')) console.error(`${name}: ${item.lastQuestion} -> ${JSON.stringify(fromQuestion)} (${item.referent})`);
  }
  console.log(`| ${name} | ${median(loads).toFixed(0)} | ${median(qms).toFixed(3)} | ${ams.length ? median(ams).toFixed(2) : '-'} | ${inQuestion}/${sample.length} | ${inExchange}/${sample.length} | ${(count / sample.length).toFixed(1)} |`);
}
