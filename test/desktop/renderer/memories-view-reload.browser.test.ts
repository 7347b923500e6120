// The desktop's memories view in Chromium: the list follows the last filters set, even when the read
// for the filters before them answers last.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HashEmbedder } from '../../../lib/embed/hash-embedder.js';
import { Engram, type GetAllOptions } from '../../../lib/index.js';
import { MemoriesView } from '../../../desktop/renderer/memories-view.js';
import { createWebBridge } from '../../../desktop/renderer/web-bridge.js';
import { testAppContext } from './app-context-fixture.js';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe('MemoriesView reload', () => {
  it('a reload that answers after a newer one (other filters) leaves the list to the newer one', async () => {
    const engram = await Engram.open({
      name: `memories-view-reload-${Math.random().toString(36).slice(2)}`,
      embedder: new HashEmbedder({ dimensions: 16 }),
    });
    await engram.add('I am allergic to peanuts', { userId: 'ana' });
    await engram.add('I live in Oslo', { userId: 'ana' });
    await engram.add('I play the cello', { userId: 'ben' });
    const errors: unknown[] = [];
    const view = new MemoriesView(
      testAppContext({
        engram,
        bridge: createWebBridge(),
        dbName: 'memories-view-reload',
        showError: (e) => errors.push(e),
      }),
    );
    document.body.append(view.root);
    cleanup = async () => {
      view.root.remove();
      await engram.close();
    };
    // Ana's reads wait until released; the others answer at once.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const getAll = engram.getAll.bind(engram);
    engram.getAll = async (options?: GetAllOptions) => {
      if (options?.filters?.userId === 'ana') await held;
      return getAll(options);
    };
    const user = view.root.querySelector<HTMLInputElement>('[data-testid="filter-user"]')!;
    user.value = 'ana';
    const first = view.reload();
    user.value = 'ben';
    await view.reload();
    release();
    await first;
    expect(view.root.querySelector('[data-testid="list-heading"]')!.textContent).toBe(
      '1 of 3 match the filters · newest first',
    );
    // The list reads its rows after the reload returns: they are Ben's, and the engram closes only
    // after that read (closing under it fails the read, as it would in the app).
    await vi.waitFor(() => {
      const rows = [...view.root.querySelectorAll('[data-testid="memory-list"] .vlist-row:not(.loading)')];
      expect(rows.map((row) => row.textContent)).toEqual([expect.stringContaining('I play the cello')]);
    });
    expect(errors).toEqual([]);
  });
});
