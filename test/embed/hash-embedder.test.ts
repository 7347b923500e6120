import { describe, expect, it } from 'vitest';
import { AbortError, ClosedError, ValidationError } from '../../lib/errors.js';
import { HashEmbedder } from '../../lib/embed/hash-embedder.js';
import { validateEmbeddings } from '../../lib/embed/embedder.js';
import { rng } from '../helpers.js';
import { cosine } from './paraphrases.js';

const WORDS = [
  'apple',
  'river',
  'blue',
  'engine',
  'quiet',
  'market',
  'seven',
  'cloud',
  'paper',
  'garden',
  'north',
  'salt',
];

function randomTexts(n: number, seed: number): string[] {
  const next = rng(seed);
  return Array.from({ length: n }, () =>
    Array.from({ length: 1 + Math.floor(next() * 8) }, () => WORDS[Math.floor(next() * WORDS.length)]!).join(' '),
  );
}

describe('HashEmbedder', () => {
  it('constructor() names the embedder after its dimensions', () => {
    expect(new HashEmbedder().id).toBe('hash-256');
    expect(new HashEmbedder().dimensions).toBe(256);
    const small = new HashEmbedder({ dimensions: 16 });
    expect(small.id).toBe('hash-16');
    expect(small.dimensions).toBe(16);
  });

  it('constructor() rejects a non-positive or fractional dimension with ValidationError', () => {
    expect(() => new HashEmbedder({ dimensions: 0 })).toThrow(ValidationError);
    expect(() => new HashEmbedder({ dimensions: 2.5 })).toThrow(ValidationError);
  });

  it('embed() returns one normalised vector per text', async () => {
    const embedder = new HashEmbedder({ dimensions: 64 });
    const texts = randomTexts(200, 42);
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(200);
    expect(() => {
      validateEmbeddings(texts, vectors, 64);
    }).not.toThrow();
    for (const v of vectors) expect(Math.sqrt(cosine(v, v))).toBeCloseTo(1, 5);
  });

  it('embed() is deterministic across instances and calls', async () => {
    const texts = randomTexts(50, 7);
    const a = await new HashEmbedder({ dimensions: 32 }).embed(texts);
    const b = await new HashEmbedder({ dimensions: 32 }).embed(texts);
    expect(b).toEqual(a);
  });

  it('embed() ignores case, punctuation and word order', async () => {
    const embedder = new HashEmbedder({ dimensions: 128 });
    const [a, b, c] = await embedder.embed(['Red apple, green pear', 'green PEAR red apple!', 'red apple green pear']);
    expect(cosine(a!, b!)).toBeCloseTo(1, 6);
    expect(cosine(a!, c!)).toBeCloseTo(1, 6);
  });

  it('embed() scores texts sharing words above texts sharing none', async () => {
    const embedder = new HashEmbedder({ dimensions: 256 });
    const [base, overlap, disjoint] = await embedder.embed([
      'the quick brown fox jumps',
      'a quick brown fox sleeps',
      'stock prices fell sharply today',
    ]);
    expect(cosine(base!, overlap!)).toBeGreaterThan(0.4);
    expect(cosine(base!, overlap!)).toBeGreaterThan(cosine(base!, disjoint!) + 0.3);
  });

  it('embed() gives empty and punctuation-only texts the same valid vector', async () => {
    const [empty, punct] = await new HashEmbedder({ dimensions: 8 }).embed(['', '?!...']);
    expect(Math.sqrt(cosine(empty!, empty!))).toBeCloseTo(1, 6);
    expect(punct).toEqual(empty);
  });

  it('embed() rejects non-string texts with ValidationError', async () => {
    await expect(new HashEmbedder().embed([null as unknown as string])).rejects.toThrow(ValidationError);
  });

  it('embed() rejects with AbortError when the signal has fired', async () => {
    await expect(new HashEmbedder().embed(['x'], { signal: AbortSignal.abort() })).rejects.toThrow(AbortError);
  });

  it('dispose() makes later embed() calls reject with ClosedError', async () => {
    const embedder = new HashEmbedder();
    await embedder.dispose();
    await embedder.dispose();
    await expect(embedder.embed(['x'])).rejects.toThrow(ClosedError);
  });
});
