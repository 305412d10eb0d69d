import { describe, expect, it } from 'vitest';
import { addedStems, scoreAddedTerms, summariseAddedTerms } from '../src/eval/added-terms.js';

describe('added-term recall and precision against the reference rewrite', () => {
  it('counts only the content words a text adds to the question, stemmed', () => {
    expect([...addedStems('does it expire?', 'Does the API key expire?')].sort()).toEqual(['api', 'kei']);
    expect([...addedStems('do API keys expire?', 'Does the API key expire?')]).toEqual([]);
  });

  it('recall is the share of the reference additions the rewrite makes; precision the share of its additions the reference has', () => {
    const score = scoreAddedTerms('does it expire?', 'does it expire? (API key, webhooks, billing)', 'Does the API key expire?');
    expect(score.recall).toBe(1);
    expect(score.precision).toBeCloseTo(2 / 4);
  });

  it('leaves recall undefined when the reference adds nothing, precision when the rewrite adds nothing', () => {
    expect(scoreAddedTerms('What is WACC?', 'What is WACC? (discount rate)', 'What is WACC?')).toEqual({ precision: 0 });
    expect(scoreAddedTerms('does it expire?', 'does it expire?', 'Does the API key expire?')).toEqual({ recall: 0 });
  });

  it('averages each number over the turns where it is defined', () => {
    expect(summariseAddedTerms([{ recall: 1, precision: 0.5 }, { recall: 0 }, { precision: 1 }])).toEqual({ recall: 0.5, recallN: 2, precision: 0.75, precisionN: 2 });
  });
});
