import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/errors.js';
import {
  ANALYZER_ID,
  ANALYZER_LANGUAGES,
  ENGLISH_ANALYZER,
  analyzeDocument,
  analyzeQuery,
  analyzerId,
  loadAnalyzer,
  normalizeText,
  queryTextOf,
  tokenize,
} from '../../lib/search/analyze.js';

describe('normalizeText()', () => {
  it('normalizeText() expands English contractions and keeps the case of the word head', () => {
    expect(normalizeText("I'm allergic to peanuts")).toBe('I am allergic to peanuts');
    expect(normalizeText("Don't forget, we'll be late and they've left")).toBe(
      'Do not forget, we will be late and they have left',
    );
    expect(normalizeText("Won't you come? I can't. It's fine, let's go")).toBe(
      'Will not you come? I can not. It is fine, let us go',
    );
    expect(normalizeText("you're, I'd, isn't, shan't, y'all")).toBe('you are, I would, is not, shall not, you all');
  });

  it('normalizeText() treats typographic apostrophes like the ASCII one', () => {
    expect(normalizeText('I\u2019m here, don\u2019t worry')).toBe('I am here, do not worry');
  });

  it('normalizeText() leaves possessives and plain text alone', () => {
    expect(normalizeText("Ana's cat sleeps")).toBe("Ana's cat sleeps");
    expect(normalizeText('No contractions here.')).toBe('No contractions here.');
  });
});

describe('tokenize()', () => {
  it('tokenize() folds case and diacritics and drops punctuation and possessive s', () => {
    expect(tokenize('Café, au-lait! Ana\u2019s')).toEqual(['cafe', 'au', 'lait', 'ana']);
  });
});

describe('analyzeDocument()', () => {
  it('analyzeDocument() gives the same terms whichever way a fact is phrased', () => {
    const short = analyzeDocument("I'm allergic to peanuts");
    const long = analyzeDocument('I am allergic to peanuts');
    expect([...short.terms]).toEqual([...long.terms]);
    expect(short.length).toBe(2);
  });

  it('analyzeDocument() stems inflections to one term and counts repeats', () => {
    const doc = analyzeDocument('Running runs; she runs daily');
    expect(doc.terms.get('run')).toBe(3);
    expect(doc.length).toBe(4);
  });

  it('analyzeDocument() drops stopwords and lone letters but keeps numbers', () => {
    const doc = analyzeDocument('I am a nurse at the 3 hospitals');
    expect([...doc.terms.keys()]).toEqual(['nurs', '3', 'hospit']);
  });

  it('analyzeDocument() of only stopwords has no terms', () => {
    expect(analyzeDocument('and the of I').terms.size).toBe(0);
  });
});

describe('analyzeQuery()', () => {
  it('analyzeQuery() drops question words and stopwords', () => {
    expect(analyzeQuery('What can I not eat?')).toEqual(['eat']);
    expect(analyzeQuery('When did I tell you about my allergies?')).toEqual(['allergi']);
    expect(analyzeQuery('How does Ana remember her trip to Paris?')).toEqual(['ana', 'trip', 'pari']);
  });

  it('analyzeQuery() stems like analyzeDocument() so inflections meet', () => {
    const [term] = analyzeQuery('Which languages am I learning?');
    expect(analyzeDocument("I'm learning two languages").terms.has(term!)).toBe(true);
  });

  it('analyzeQuery() returns distinct terms in order of appearance', () => {
    expect(analyzeQuery('cats and dogs and cats')).toEqual(['cat', 'dog']);
  });
});

describe('queryTextOf()', () => {
  it('queryTextOf() keeps the content words of a question, unstemmed', () => {
    expect(queryTextOf("What can't I eat?")).toBe('eat');
    expect(queryTextOf('Where did I say my sister lives?')).toBe('sister lives');
  });

  it('queryTextOf() falls back to the normalized question when no content word is left', () => {
    expect(queryTextOf('Who am I?')).toBe('Who am I?');
    expect(queryTextOf("What's it?")).toBe('What is it?');
  });
});

describe('loadAnalyzer()', () => {
  it('loadAnalyzer() returns the built-in English analyzer by default', async () => {
    expect(await loadAnalyzer()).toBe(ENGLISH_ANALYZER);
    expect(ENGLISH_ANALYZER.id).toBe(ANALYZER_ID);
  });

  it('loadAnalyzer() loads another language with its own stemmer, stopwords and id', async () => {
    const german = await loadAnalyzer('german');
    expect(german.id).toBe(analyzerId('german'));
    expect(german.id).not.toBe(ANALYZER_ID);
    expect(german.query('Wo sind die Häuser?')).toEqual(['haus']);
    expect(german.normalize("I'm")).toBe("I'm");
  });

  it('loadAnalyzer() loads every listed language', async () => {
    for (const language of ANALYZER_LANGUAGES) {
      const analyzer = await loadAnalyzer(language);
      expect(analyzer.language).toBe(language);
      expect(analyzer.document('testing').length).toBeGreaterThan(0);
    }
  });

  it('loadAnalyzer() rejects an unknown language', async () => {
    await expect(loadAnalyzer('klingon' as never)).rejects.toThrow(ValidationError);
  });
});
