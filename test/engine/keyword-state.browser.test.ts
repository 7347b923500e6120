// The in-memory keyword index over real IndexedDB in Chromium: built from the
// terms rows, kept current from the change log, restored from its snapshot,
// and ranking exactly like the IndexedDB keyword search, scoped and unscoped.
import { describe, expect, it } from 'vitest';
import { KeywordState } from '../../lib/engine/keywords/keyword-state.js';
import { MESSAGE_CORPUS } from '../../lib/store/keyword-terms.js';
import {
  MESSAGE_SCOPES,
  addMessages,
  churn,
  expectSameAsStored,
  freshCore,
  messageMaker,
  queries,
} from './keyword-state-cases.js';

describe('KeywordState in Chromium', () => {
  it('search() ranks like the IndexedDB keyword search on two corpora, through writes, a snapshot and a reopen', async () => {
    for (const [seed, vocabulary] of [
      [51, 2000],
      [52, 30],
    ] as const) {
      const name = `kw-browser-${seed}-${Date.now()}`;
      const c = await freshCore(name);
      const make = messageMaker(seed, vocabulary);
      await addMessages(c, Array.from({ length: 800 }, make));
      const state = await KeywordState.load(c);
      expect(state.origin).toBe('rebuild');
      await state.snapshot();
      const more = Array.from({ length: 200 }, make);
      await addMessages(c, more);
      await churn(c, more, seed + 1);
      // The churn deleted messages, which drops the snapshot (it holds their words): take it again.
      expect(await c.db.meta.get('keywordSnapshot')).toBeUndefined();
      await state.catchUp();
      await state.snapshot();
      for (const q of queries(seed + 2, 20, vocabulary)) {
        await expectSameAsStored(c, MESSAGE_CORPUS, q, 10, () => state.search(MESSAGE_CORPUS, q, { depth: 10 }));
        for (const scope of MESSAGE_SCOPES) {
          await expectSameAsStored(
            c,
            MESSAGE_CORPUS,
            q,
            10,
            () => state.search(MESSAGE_CORPUS, q, { depth: 10, accept: (_, f) => scope(f) }),
            scope,
          );
        }
      }
      c.db.close();
      const reopened = await freshCore(name);
      const restored = await KeywordState.load(reopened);
      expect(restored.origin).toBe('snapshot');
      for (const q of queries(seed + 3, 10, vocabulary)) {
        await expectSameAsStored(reopened, MESSAGE_CORPUS, q, 10, () =>
          restored.search(MESSAGE_CORPUS, q, { depth: 10 }),
        );
      }
      reopened.db.close();
      indexedDB.deleteDatabase(name);
    }
  });
});
