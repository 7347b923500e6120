import { describe, expect, it } from 'vitest';
import { queryTerms, termFrequencies, tokenize } from '../../lib/search/tokenize.js';

describe('tokenize', () => {
  it('tokenize() lower-cases, folds diacritics and drops punctuation', () => {
    expect(tokenize('Café, AU-lait! naïve 42x')).toEqual(['cafe', 'au', 'lait', 'naive', '42x']);
    expect(tokenize('...!!!')).toEqual([]);
    expect(tokenize('日本語 テキスト')).toEqual(['日本語', 'テキスト']);
  });

  it('termFrequencies() counts terms without stopwords', () => {
    const { terms, length } = termFrequencies('The cat and the other cat');
    expect([...terms]).toEqual([['cat', 2], ['other', 1]]);
    expect(length).toBe(3);
  });

  it('queryTerms() gives distinct terms in order', () => {
    expect(queryTerms('Paris paris, PARIS trip')).toEqual(['paris', 'trip']);
  });
});
