// End to end: the desktop renderer picks its embedding model and re-embeds a store,
// in real Chromium (the renderer's own Vite config and CSP, the web bridge, the
// network closed but for the local server). A store made with the offline GloVe
// model opens with that model while a sentence model's folder is served too (the best
// known one this repository built: e5-small-v2 or all-MiniLM-L6-v2); the status view
// shows the model in use and offers to re-embed; Cancel mid-way leaves the store as
// it was, searchable with its GloVe vectors; a second run finishes, and the app then
// searches with the sentence model and opens with it. While a re-embed runs, Status's Encrypt now and the
// import are disabled with why, and enabled again once it ends; while the store's encryption runs, the
// re-embed's start is. Leaves screenshots of the model card, the re-embed progress and the controls it
// disables in test/desktop/__screenshots__/ (reembed-*.png).
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright';
import type { ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EMBEDDING_MODEL, type KnownEmbeddingModel } from '../../lib/index.js';
import { ROOT, STEP_WAIT, appReady, bestBuiltModel, screenshot, openApp } from '../ui-helpers/app-page.js';

const SHOTS = resolve(import.meta.dirname, '__screenshots__');
const REEMBED_WAIT = 240_000;
/** What the app picks by itself: the best known model whose folder this repository built (`npm run model`). */
const BEST: KnownEmbeddingModel = bestBuiltModel();

/** Six facts (issue 22) and filler sentences on other subjects, none about food. */
const FACTS = [
  'My favourite food is spicy ramen from the place downtown.',
  'I am allergic to cats, so no pets with fur.',
  'The quarterly report is due on the first Friday of next month.',
  'My sister lives in Lisbon and works as an architect.',
  'I go running every morning before work.',
  'The car needs new tyres before winter.',
];
const WHO = ['Zoe', 'My brother', 'The neighbour', 'Our team', 'The teacher', 'Grandma'];
const WHAT = ['wrote about', 'asked about', 'is learning', 'is planning', 'talked about'];
const TOPICS = ['chess openings', 'jazz piano', 'birdwatching', 'astronomy', 'pottery', 'sailing', 'tax forms'];
const FILLER = WHO.flatMap((who) =>
  WHAT.flatMap((what) =>
    TOPICS.flatMap((topic) => [1, 2, 3].map((week) => `${who} ${what} ${topic} in week ${week}.`)),
  ),
);
const TOTAL = FACTS.length + FILLER.length;

let server: ViteDevServer | undefined;
let browser: Browser | undefined;
let page: Page;
let origin: string;
const offsite: string[] = [];
const pageErrors: string[] = [];

async function shot(name: string): Promise<void> {
  await screenshot(page, join(SHOTS, `${name}.png`));
}

/** Loads the app afresh (a reload, not a hash change) on the status view. */
async function statusView(): Promise<void> {
  await page.goto('about:blank');
  await page.goto(`${origin}/#status`);
  await appReady(page);
  await page.waitForSelector('[data-view="status"][data-state="ready"]', { timeout: STEP_WAIT });
}

async function panelState(): Promise<string | null> {
  return page.getAttribute('[data-testid="reembed-panel"]', 'data-state');
}

async function vectorSearch(query: string): Promise<string[]> {
  await page.click('[data-testid="nav-memories"]');
  await page.click('[data-testid="mode-vector"]');
  await page.fill('[data-testid="search-input"]', query);
  await page.evaluate(() =>
    document.querySelector('[data-testid="search-results"]')?.setAttribute('data-state', 'stale'),
  );
  await page.click('[data-testid="search-button"]');
  await page.waitForFunction(
    () => document.querySelector('[data-testid="search-results"]')?.getAttribute('data-state') === 'done',
    undefined,
    { timeout: STEP_WAIT },
  );
  return page.locator('[data-testid="search-results"] .result .text').allInnerTexts();
}

beforeAll(async () => {
  ({ server, origin, browser, page } = await openApp('desktop', {
    viewport: { width: 1280, height: 860 },
    offsite,
    errors: pageErrors,
  }));
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('desktop renderer: embedding model and re-embedding', () => {
  it('serves the sentence model folder this repository built (npm run model)', async () => {
    const response = await fetch(`${origin}/models/${BEST.id}/config.json`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { hidden_size?: number }).hidden_size).toBe(BEST.dimensions);
  });

  it('opens a store made with the offline model with that model, and offers the sentence model', async () => {
    // The store, written by the library in this origin with the offline model (as an older app did).
    await page.goto(`${origin}/models/${DEFAULT_EMBEDDING_MODEL}/config.json`);
    // A string, so the test runner does not rewrite its import(): the page loads the library from the dev server.
    await page.evaluate(`(async () => {
      const lib = await import('/@fs${ROOT}/lib/index.ts');
      const engram = await lib.Engram.open({ name: 'engram-desktop' });
      for (const text of ${JSON.stringify(FACTS)}) await engram.add(text, { userId: 'ana' });
      const filler = ${JSON.stringify(FILLER)};
      for (let i = 0; i < filler.length; i += 50)
        await engram.add(filler.slice(i, i + 50).map((content) => ({ role: 'user', content })), { userId: 'ana' });
      await engram.close();
    })()`);
    await statusView();
    expect(await page.getAttribute('[data-testid="model-in-use"]', 'data-model')).toBe(DEFAULT_EMBEDDING_MODEL);
    expect(await page.innerText('[data-fact="embedder"]')).toContain(`(${DEFAULT_EMBEDDING_MODEL}), 100-d`);
    expect(await page.inputValue('[data-testid="model-select"]')).toBe(BEST.id);
    expect(await panelState()).toBe('offer');
    expect(await page.innerText('[data-testid="reembed-start"]')).toBe(`Re-embed ${TOTAL} memories`);
    expect(await page.innerText('#banner')).toContain('re-embed');
    await shot('reembed-offer');
  }, 180_000);

  it('re-embeds with a progress bar, and Cancel leaves the store as it was, searchable with its old vectors', async () => {
    const before = await vectorSearch('What does she like to eat?');
    expect(before.length).toBeGreaterThan(0);
    await page.click('[data-testid="nav-status"]');
    await page.waitForSelector('[data-testid="reembed-start"]', { timeout: STEP_WAIT });
    await page.click('[data-testid="reembed-start"]');
    await page.waitForFunction(
      () => {
        const panel = document.querySelector<HTMLElement>('[data-testid="reembed-panel"]');
        return Number(panel?.dataset['done']) >= 64 || panel?.dataset['outcome'] !== undefined;
      },
      undefined,
      { timeout: REEMBED_WAIT },
    );
    expect(await page.innerText('[data-testid="reembed-panel"]')).toContain('Cancel');
    await page.waitForFunction(
      () => /\/s/.test(document.querySelector('[data-testid="reembed-rate"]')?.textContent ?? ''),
      undefined,
      { timeout: STEP_WAIT },
    );
    await shot('reembed-progress');
    const shown = await page.innerText('[data-testid="reembed-count"]');
    expect(shown).toMatch(new RegExp(`^\\d+ / ${TOTAL}$`));
    expect(Number(shown.split(' ')[0])).toBeLessThan(TOTAL);
    await page.click('[data-testid="reembed-cancel"]');
    await page.waitForFunction(
      () => document.querySelector<HTMLElement>('[data-testid="reembed-panel"]')?.dataset['outcome'] === 'cancelled',
      undefined,
      { timeout: REEMBED_WAIT },
    );
    // The offer is back, under the result; the store is open again with its own model.
    await page.waitForFunction(
      () => document.querySelector<HTMLElement>('[data-testid="reembed-panel"]')?.dataset['state'] === 'offer',
      undefined,
      { timeout: STEP_WAIT },
    );
    expect(await page.innerText('[data-testid="reembed-result"]')).toContain('Cancelled after');
    expect(await page.getAttribute('[data-testid="model-in-use"]', 'data-model')).toBe(DEFAULT_EMBEDDING_MODEL);
    await shot('reembed-cancelled');
    expect(await vectorSearch('What does she like to eat?')).toEqual(before);
  }, 300_000);

  it('while a re-embed runs, Status’s Encrypt now and the import are disabled with why, an Enter starts nothing; once it ends (cancelled) both are enabled again', async () => {
    await page.click('[data-testid="nav-status"]');
    await page.waitForSelector('[data-testid="reembed-start"]', { timeout: STEP_WAIT });
    const encrypt = '[data-testid="encrypt-passphrase-form-submit"]';
    const free = async (button: string, note: string): Promise<[boolean, string | null, boolean]> => [
      await page.isDisabled(button),
      await page.getAttribute(button, 'title'),
      await page.isHidden(note),
    ];
    expect(await free(encrypt, '[data-testid="store-key-blocked"]')).toEqual([false, null, true]);
    await page.click('[data-testid="reembed-start"]');
    await page.waitForSelector('[data-testid="reembed-panel"][data-state="running"]', { timeout: STEP_WAIT });
    const why = (what: string): string =>
      `Busy: a re-embed with another model is running; ${what} can start once it ends.`;
    const conversion = why('a conversion of the store’s encryption');
    expect([
      await page.isDisabled(encrypt),
      await page.getAttribute(encrypt, 'title'),
      await page.innerText('[data-testid="store-key-blocked"]'),
    ]).toEqual([true, conversion, conversion]);
    // Enter in a passphrase field (the form's implicit submit) starts nothing: the store stays open, the card idle.
    await page.fill('[data-testid="encrypt-new"]', 'heron pebble saffron');
    await page.fill('[data-testid="encrypt-confirm"]', 'heron pebble saffron');
    await page.press('[data-testid="encrypt-confirm"]', 'Enter');
    expect([
      await page.getAttribute('body', 'data-store'),
      await page.getAttribute('[data-testid="store-key-card"]', 'data-state'),
      await page.getAttribute('[data-testid="reembed-panel"]', 'data-state'),
    ]).toEqual(['open', 'idle', 'running']);
    await page
      .locator('[data-testid="store-key-card"]')
      .screenshot({ path: join(SHOTS, 'reembed-blocks-encrypt.png') });
    // The import view: its Import is disabled with why too.
    await page.click('[data-testid="nav-transfer"]');
    const importing = why('an import');
    expect([
      await page.isDisabled('[data-testid="import-button"]'),
      await page.getAttribute('[data-testid="import-button"]', 'title'),
      await page.innerText('[data-testid="import-blocked"]'),
    ]).toEqual([true, importing, importing]);
    await shot('reembed-blocks-import');
    await page.click('[data-testid="nav-status"]');
    await page.click('[data-testid="reembed-cancel"]');
    // Ended (the outcome of the last run says cancelled already): the offer is back.
    await page.waitForSelector('[data-testid="reembed-panel"][data-state="offer"]', { timeout: REEMBED_WAIT });
    expect(await page.innerText('[data-testid="reembed-result"]')).toContain('Cancelled after');
    expect(await free(encrypt, '[data-testid="store-key-blocked"]')).toEqual([false, null, true]);
    expect(await free('[data-testid="import-button"]', '[data-testid="import-blocked"]')).toEqual([false, null, true]);
    await page.fill('[data-testid="encrypt-new"]', '');
    await page.fill('[data-testid="encrypt-confirm"]', '');
  }, 300_000);

  it('re-embeds to the end: the app then searches with the sentence model, and opens with it', async () => {
    await page.click('[data-testid="nav-status"]');
    await page.click('[data-testid="reembed-start"]');
    await page.waitForFunction(
      () => document.querySelector<HTMLElement>('[data-testid="reembed-panel"]')?.dataset['outcome'] === 'done',
      undefined,
      { timeout: REEMBED_WAIT },
    );
    await page.waitForFunction(
      (id) => document.querySelector<HTMLElement>('[data-testid="model-in-use"]')?.dataset['model'] === id,
      BEST.id,
      { timeout: STEP_WAIT },
    );
    expect(await page.innerText('[data-testid="reembed-result"]')).toContain(`Re-embedded ${TOTAL} memories with`);
    expect(await panelState()).toBe('done');
    // The facts above follow, and the notice that offered it is gone.
    await page.waitForFunction(
      (d) => document.querySelector('[data-fact="embedder"]')?.textContent.includes(`${d}-d`) === true,
      BEST.dimensions,
      { timeout: STEP_WAIT },
    );
    expect(await page.isHidden('#banner')).toBe(true);
    await shot('reembed-done');
    // A question that shares no word with its answer: the sentence model finds it.
    expect((await vectorSearch('What does she like to eat?'))[0]).toBe(FACTS[0]);
    await statusView();
    expect(await page.getAttribute('[data-testid="model-in-use"]', 'data-model')).toBe(BEST.id);
    expect(await page.innerText('[data-fact="embedder"]')).toContain(`(${BEST.id}), ${BEST.dimensions}-d`);
    expect(await page.innerText('[data-fact="index"]')).toContain(`${TOTAL} vectors`);
    expect(await panelState()).toBe('hidden');
    expect(await page.isHidden('#banner')).toBe(true);
  }, 300_000);

  it('picking the offline model in the select offers to re-embed back, and the choice survives a reload', async () => {
    await page.selectOption('[data-testid="model-select"]', DEFAULT_EMBEDDING_MODEL);
    await page.waitForFunction(
      () => document.querySelector<HTMLElement>('[data-testid="reembed-panel"]')?.dataset['state'] === 'offer',
      undefined,
      { timeout: STEP_WAIT },
    );
    expect(await page.innerText('[data-testid="reembed-note"]')).toContain('offline GloVe word vectors');
    await statusView();
    expect(await page.inputValue('[data-testid="model-select"]')).toBe(DEFAULT_EMBEDDING_MODEL);
    expect(await page.getAttribute('[data-testid="model-in-use"]', 'data-model')).toBe(BEST.id);
    expect(await panelState()).toBe('offer');
    // A saved choice that names no known model is ignored: the best served model is picked.
    await page.evaluate(() => {
      localStorage.setItem('engram-desktop:embedding-model', '../../etc/passwd');
    });
    await statusView();
    expect(await page.inputValue('[data-testid="model-select"]')).toBe(BEST.id);
    expect(await panelState()).toBe('hidden');
  }, 180_000);

  it('while the store’s encryption runs (from Status), the re-embed offer’s start is disabled with why; once the store reopens it is offered again', async () => {
    await page.selectOption('[data-testid="model-select"]', DEFAULT_EMBEDDING_MODEL);
    await page.waitForFunction(
      () => document.querySelector<HTMLElement>('[data-testid="reembed-panel"]')?.dataset['state'] === 'offer',
      undefined,
      { timeout: STEP_WAIT },
    );
    // The offer's start as the store closes for the conversion (and the panel's state then).
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { offerSeen: string[] }).offerSeen = seen;
      new MutationObserver(() => {
        if (document.body.dataset['store'] !== 'closed' || seen.length > 0) return;
        const start = document.querySelector<HTMLButtonElement>('[data-testid="reembed-start"]')!;
        const note = document.querySelector<HTMLElement>('[data-testid="reembed-blocked"]')!;
        // A click anyway starts nothing.
        start.click();
        const state = document.querySelector<HTMLElement>('[data-testid="reembed-panel"]')!.dataset['state'];
        seen.push(
          `disabled ${start.disabled}; title ${start.title}; note ${note.hidden ? '(hidden)' : note.textContent}; ${state}`,
        );
      }).observe(document.body, { attributes: true, attributeFilter: ['data-store'] });
    });
    await page.fill('[data-testid="encrypt-new"]', 'heron pebble saffron');
    await page.fill('[data-testid="encrypt-confirm"]', 'heron pebble saffron');
    await page.click('[data-testid="encrypt-passphrase-form-submit"]');
    await page.waitForSelector('[data-testid="store-key-message"][data-state="done"]', { timeout: REEMBED_WAIT });
    const why =
      'Busy: a conversion of the store’s encryption is running; a re-embed with another model can start once it ends.';
    expect(await page.evaluate(() => (window as unknown as { offerSeen: string[] }).offerSeen)).toEqual([
      `disabled true; title ${why}; note ${why}; offer`,
    ]);
    // Reopened (encrypted): the offer can start again.
    expect(await panelState()).toBe('offer');
    expect(await page.isDisabled('[data-testid="reembed-start"]')).toBe(false);
    expect(await page.getAttribute('[data-testid="reembed-start"]', 'title')).toBeNull();
    expect(await page.isHidden('[data-testid="reembed-blocked"]')).toBe(true);
  }, 180_000);

  it('reached nothing off the local server and logged no page error', () => {
    expect(offsite).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
