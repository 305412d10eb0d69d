// The follow-up gate: small talk is never searched, the first turn and standalone
// questions are searched as typed, and each follow-up signal is named in the reason.

import { describe, expect, it } from 'vitest';
import { classifyQuestion } from '../src/rewrite/gate.js';

describe('classifyQuestion: small talk', () => {
  it.each(['hi', 'Hello!', 'thanks!', 'Thank you so much', 'ok great', 'cool', 'Got it, thanks', 'merci beaucoup', 'danke schön', 'gracias', '👍 ok'])(
    '"%s" is small talk, with or without history',
    (message) => {
      expect(classifyQuestion(message, true).kind).toBe('small_talk');
      expect(classifyQuestion(message, false).kind).toBe('small_talk');
    },
  );

  it('a message with nothing but punctuation is small talk (nothing to search)', () => {
    expect(classifyQuestion('?!', true)).toEqual({ kind: 'small_talk', reason: 'no words' });
  });

  it.each(['ok, and how do I rotate it?', 'thanks, what about Windows?', 'great, which port does the agent use?'])(
    '"%s" is not small talk',
    (message) => {
      expect(classifyQuestion(message, true).kind).toBe('follow_up');
    },
  );
});

describe('classifyQuestion: first turn', () => {
  it('skips every question without history, even one full of pronouns', () => {
    expect(classifyQuestion('Does it expire?', false)).toEqual({ kind: 'standalone', reason: 'first turn: no history' });
  });
});

describe('classifyQuestion: follow-up signals', () => {
  it.each([
    ['Does it expire?', "pronoun 'it'"],
    ['How do I rotate them?', "pronoun 'them'"],
    ['What are their limits?', "pronoun 'their'"],
    ['Is that free?', "pronoun 'that'"],
    ['How much do those cost per month?', "pronoun 'those'"],
    ['What about in CI?', "opener 'what about'"],
    ['How about the Enterprise plan?', "opener 'how about'"],
    ['And on Windows?', "opener 'and'"],
    ['Also, can I pause a schedule during deploys?', "opener 'also'"],
    ['What if the webhook endpoint times out for an hour?', "opener 'what if'"],
    ['Tell me about the first one', "reference 'the first one'"],
    ['Can you explain the second option in more detail?', "reference 'the second option'"],
    ['Is the latter supported in Europe?', "reference 'the latter'"],
    ['Is the other plan billed monthly?', "reference 'the other'"],
    ['Which is cheaper?', "comparative 'cheaper' without 'than'"],
    ['Is the Team plan more expensive?', "comparative 'more expensive' without 'than'"],
    ['Pricing?', '1 content word'],
    ['How do retry delays work?', '2 content words'],
    ['the retry backoff settings', 'fragment without a verb'],
  ])('"%s" -> %s', (question, reason) => {
    expect(classifyQuestion(question, true)).toEqual({ kind: 'follow_up', reason });
  });
});

describe('classifyQuestion: standalone questions do not trigger', () => {
  it.each([
    'How do I install the Relay agent on Windows?',
    'How can I check that a webhook request really came from Orbitly?',
    'Is it possible to rotate API keys without downtime?',
    'Which HTTP header carries the Orbitly webhook signature?',
    'What is the default timezone of cron schedules in Orbitly?',
    'How do I set ORBIT_TOKEN for the orbit CLI in a CI pipeline?',
    'What is WACC?',
    'How can I use the WebSocket API?',
    'Is the Team plan cheaper than the Enterprise plan?',
    'My credit card payment failed and it keeps showing an error, what should I do?',
  ])('"%s"', (question) => {
    expect(classifyQuestion(question, true)).toEqual({ kind: 'standalone', reason: 'standalone: no reference to earlier turns' });
  });
});

describe('classifyQuestion: the eager gate (a model rewrites)', () => {
  it.each([
    ['Will purchasing stocks give me control over it?', "pronoun 'it'"],
    ['I meant for a deceased relative', "reference 'i meant'"],
  ])('"%s" -> %s, and standalone for the strict gate', (question, reason) => {
    expect(classifyQuestion(question, true, { eager: true })).toEqual({ kind: 'follow_up', reason });
    expect(classifyQuestion(question, true).kind).toBe('standalone');
  });

  it('"keeps doing this" points back for both gates: "doing this" stands for an action of the conversation', () => {
    const question = 'Is there an advantage for why Germany keeps doing this?';
    expect(classifyQuestion(question, true, { eager: true })).toEqual({ kind: 'follow_up', reason: "pronoun 'this'" });
    expect(classifyQuestion(question, true)).toEqual({ kind: 'follow_up', reason: "pronoun 'this'" });
  });

  it.each([
    'Is it possible to rotate API keys without downtime?',
    'How can I check that a webhook request really came from Orbitly?',
    'What is WACC?',
    'Is the Team plan cheaper than the Enterprise plan?',
  ])('still lets "%s" stand alone', (question) => {
    expect(classifyQuestion(question, true, { eager: true }).kind).toBe('standalone');
  });

  it('is never used on the first turn', () => {
    expect(classifyQuestion('Will purchasing stocks give me control over it?', false, { eager: true }).kind).toBe('standalone');
  });
});
