import { describe, expect, it } from 'vitest';
import { STOPWORDS, identifierParts, isStopword, stem, tokenize } from '../src/text/index.js';

describe('tokenize', () => {
  it('lower-cases and splits on anything but letters and digits', () => {
    expect(tokenize('Hello, World! IBM Cloud 2023')).toEqual(['hello', 'world', 'ibm', 'cloud', '2023']);
    expect(tokenize('')).toEqual([]);
    expect(tokenize('  ...  ')).toEqual([]);
  });

  it('removes diacritics like unicode61 remove_diacritics 2', () => {
    expect(tokenize('Café naïve Ångström')).toEqual(['cafe', 'naive', 'angstrom']);
    expect(tokenize('Café', { removeDiacritics: false })).toEqual(['café']);
  });

  it('keeps non-Latin scripts, a CJK run being one token', () => {
    expect(tokenize('Привет мир')).toEqual(['привет', 'мир']);
    expect(tokenize('東京タワー is tall')).toEqual(['東京タワー', 'is', 'tall']);
    expect(tokenize('مرحبا بالعالم')).toEqual(['مرحبا', 'بالعالم']);
    expect(tokenize('emoji 🎉 party')).toEqual(['emoji', 'party']);
  });

  it('keeps identifiers whole when asked', () => {
    expect(tokenize('set max_connections on ibm-cloud v1.2.3.')).toEqual(['set', 'max', 'connections', 'on', 'ibm', 'cloud', 'v1', '2', '3']);
    expect(tokenize('set max_connections on ibm-cloud v1.2.3.', { identifiers: true })).toEqual([
      'set',
      'max_connections',
      'on',
      'ibm-cloud',
      'v1.2.3',
    ]);
    expect(tokenize('a - b -- c_', { identifiers: true })).toEqual(['a', 'b', 'c']);
    expect(identifierParts('max_connections')).toEqual(['max', 'connections']);
  });
});

describe('stem (Porter)', () => {
  it('matches the reference Porter outputs', () => {
    const cases: Record<string, string> = {
      caresses: 'caress',
      ponies: 'poni',
      cats: 'cat',
      feed: 'feed',
      agreed: 'agre',
      plastered: 'plaster',
      motoring: 'motor',
      hopping: 'hop',
      filing: 'file',
      happy: 'happi',
      relational: 'relat',
      conditional: 'condit',
      generalization: 'gener',
      connections: 'connect',
      connected: 'connect',
      running: 'run',
      electricity: 'electr',
      adjustment: 'adjust',
      controll: 'control',
      roll: 'roll',
      probate: 'probat',
      rate: 'rate',
      yelling: 'yell',
    };
    for (const [word, expected] of Object.entries(cases)) expect(stem(word), word).toBe(expected);
  });

  it('leaves short words, digits and non-Latin words alone', () => {
    expect(stem('is')).toBe('is');
    expect(stem('v1')).toBe('v1');
    expect(stem('2023s')).toBe('2023s');
    expect(stem('привет')).toBe('привет');
  });
});

describe('stopwords', () => {
  it('contains function words and not content words', () => {
    expect(isStopword('the')).toBe(true);
    expect(STOPWORDS.has('how')).toBe(true);
    expect(isStopword('cloud')).toBe(false);
  });
});
