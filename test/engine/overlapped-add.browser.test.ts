// add() whose write overlaps a quick embedder, over real IndexedDB in Chromium: the
// transaction stays alive while a later task brings the vectors; a slow embedder never holds the store.
import { describe, it } from 'vitest';
import { quickEmbedderOverlaps, slowEmbedderWaits } from './overlapped-add-cases.js';

describe('add() in Chromium, its write overlapping the embedding', () => {
  it(
    'a quick embedder: rows written while the vectors are computed, all of it lands, searchable, duplicates found',
    quickEmbedderOverlaps,
  );
  it('a slow embedder: add() waits for its vectors first, and the store stays readable meanwhile', slowEmbedderWaits);
});
