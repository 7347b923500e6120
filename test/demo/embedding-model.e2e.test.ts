// End to end: the demo page picks its embedding model and re-embeds, in real Chromium
// (the demo's own Vite config, the network closed but for the local server). With no
// choice saved, a fresh page opens with the best sentence model served (the best known one
// this repository built: e5-small-v2 or all-MiniLM-L6-v2) and says so in the
// status line and the settings; picking the offline model offers to re-embed the stored
// memories, which runs with progress and leaves the page searching with that model.
// Leaves test/demo/__screenshots__/embedding-*.png.
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright';
import type { ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EMBEDDING_MODEL, type KnownEmbeddingModel } from '../../lib/index.js';
import {
  MODEL_WAIT,
  appReady,
  STEP_WAIT,
  bestBuiltModel,
  screenshot,
  sendTurn,
  openApp,
} from '../ui-helpers/app-page.js';

const SHOTS = resolve(import.meta.dirname, '__screenshots__');
/** What the app picks by itself: the best known model whose folder this repository built (`npm run model`). */
const BEST: KnownEmbeddingModel = bestBuiltModel();

let server: ViteDevServer | undefined;
let browser: Browser | undefined;
let page: Page;
let origin: string;
const offsite: string[] = [];
const pageErrors: string[] = [];

async function shot(name: string): Promise<void> {
  await screenshot(page, join(SHOTS, `${name}.png`), true);
}

function chat(text: string): Promise<void> {
  return sendTurn(page, text);
}

beforeAll(async () => {
  ({ server, origin, browser, page } = await openApp('demo', {
    viewport: { width: 1360, height: 1000 },
    offsite,
    errors: pageErrors,
  }));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('demo page: embedding model', () => {
  it('opens a new store with the best sentence model served and shows it in the status line and the settings', async () => {
    await page.goto(origin);
    await appReady(page);
    const status = page.locator('[data-testid="status"]');
    expect(await status.getAttribute('data-embedder')).toBe(BEST.id);
    expect(await status.innerText()).toContain(`${BEST.label}: ${BEST.id} (${BEST.dimensions}-d)`);
    await page.click('#settings-toggle');
    expect(await page.getAttribute('[data-testid="model-in-use"]', 'data-model')).toBe(BEST.id);
    expect(await page.inputValue('[data-testid="model-select"]')).toBe(BEST.id);
    expect(await page.getAttribute('[data-testid="reembed-panel"]', 'data-state')).toBe('hidden');
  }, 120_000);

  it('picking the offline model offers to re-embed the memories, and re-embedding switches the page to it', async () => {
    await chat('My favourite food is spicy ramen from the place downtown.');
    await chat('I am allergic to cats, so no pets with fur.');
    const total = Number(await page.getAttribute('[data-testid="status"]', 'data-memories'));
    expect(total).toBeGreaterThanOrEqual(2);
    await page.selectOption('[data-testid="model-select"]', DEFAULT_EMBEDDING_MODEL);
    await page.waitForSelector('[data-testid="reembed-start"]', { timeout: STEP_WAIT });
    expect(await page.innerText('[data-testid="reembed-start"]')).toBe(`Re-embed ${total} memories`);
    expect(await page.innerText('[data-testid="reembed-note"]')).toContain(BEST.label);
    await shot('embedding-offer');
    await page.click('[data-testid="reembed-start"]');
    await page.waitForFunction(
      () => document.querySelector<HTMLElement>('[data-testid="reembed-panel"]')?.dataset['outcome'] !== undefined,
      undefined,
      { timeout: MODEL_WAIT },
    );
    expect(await page.getAttribute('[data-testid="reembed-panel"]', 'data-outcome')).toBe('done');
    expect(await page.innerText('[data-testid="reembed-result"]')).toContain(`Re-embedded ${total} memories with`);
    await page.waitForFunction(
      (id) => document.querySelector('[data-testid="status"]')?.getAttribute('data-embedder') === id,
      DEFAULT_EMBEDDING_MODEL,
      { timeout: STEP_WAIT },
    );
    // The settings say so too (updated after the status line, in the same turn of the page or the next).
    await page.waitForFunction(
      (id) => document.querySelector('[data-testid="model-in-use"]')?.getAttribute('data-model') === id,
      DEFAULT_EMBEDDING_MODEL,
      { timeout: STEP_WAIT },
    );
    await shot('embedding-done');
    // The page keeps working on the reopened store: another turn is stored and counted.
    await chat('My sister lives in Lisbon and works as an architect.');
    expect(Number(await page.getAttribute('[data-testid="status"]', 'data-memories'))).toBeGreaterThan(total);
    // A reload opens with the offline model, the one now picked and stored: nothing to offer.
    await page.reload();
    await appReady(page);
    expect(await page.getAttribute('[data-testid="status"]', 'data-embedder')).toBe(DEFAULT_EMBEDDING_MODEL);
    expect(await page.getAttribute('[data-testid="reembed-panel"]', 'data-state')).toBe('hidden');
  }, 240_000);

  it('reached nothing off the local server and logged no page error', () => {
    expect(offsite).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
