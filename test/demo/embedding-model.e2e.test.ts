// End to end: the demo page picks its embedding model and re-embeds, in real Chromium
// (the demo's own Vite config, the network closed but for the local server). With no
// choice saved, a fresh page opens with the best sentence model served (the best known one
// this repository built: e5-small-v2 or all-MiniLM-L6-v2) and says so in the
// status line and the settings; picking the offline model offers to re-embed the stored
// memories, which runs with progress and leaves the page searching with that model.
// Leaves test/demo/__screenshots__/embedding-*.png.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright';
import { createServer, type ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EMBEDDING_MODEL, KNOWN_EMBEDDING_MODELS, type KnownEmbeddingModel } from '../../lib/index.js';
import { CHROMIUM_ARGS, NO_CHROMIUM_HELP, chromiumPath } from '../../scripts/chromium.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SHOTS = resolve(import.meta.dirname, '__screenshots__');
const MODEL_WAIT = 90_000;
const STEP_WAIT = 30_000;
/** What the app picks by itself: the best known model whose folder this repository built (`npm run model`). */
const FOUND = KNOWN_EMBEDDING_MODELS.find(
  (m) => m.id !== DEFAULT_EMBEDDING_MODEL && existsSync(resolve(ROOT, 'models', m.id, 'config.json')),
);
if (FOUND === undefined) throw new TypeError('no sentence model in models/: build one with `npm run model`');
const BEST: KnownEmbeddingModel = FOUND;

let server: ViteDevServer | undefined;
let browser: Browser | undefined;
let page: Page;
let origin: string;
const offsite: string[] = [];
const pageErrors: string[] = [];

async function shot(name: string): Promise<void> {
  await mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

async function chat(text: string): Promise<void> {
  const before = await page.locator('[data-testid="turn"]').count();
  await page.fill('[data-testid="chat-input"]', text);
  await page.press('[data-testid="chat-input"]', 'Enter');
  await page.waitForFunction(
    (n) =>
      document.querySelectorAll('[data-testid="turn"]').length === n &&
      !(document.querySelector('[data-testid="chat-input"]') as HTMLInputElement).disabled,
    before + 1,
    { timeout: STEP_WAIT },
  );
}

beforeAll(async () => {
  await promisify(execFile)(process.execPath, [resolve(ROOT, 'scripts/ensure-model.mjs')], { cwd: ROOT });
  server = await createServer({
    configFile: resolve(ROOT, 'demo/vite.config.ts'),
    logLevel: 'error',
    server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false, watch: null },
  });
  await server.listen();
  const address = server.httpServer?.address();
  if (typeof address !== 'object' || address === null) throw new TypeError('the demo server has no address');
  origin = `http://127.0.0.1:${address.port}`;
  const executablePath = chromiumPath();
  if (executablePath === undefined) throw new TypeError(NO_CHROMIUM_HELP);
  browser = await chromium.launch({ executablePath, args: [...CHROMIUM_ARGS] });
  const context = await browser.newContext({ viewport: { width: 1360, height: 1000 } });
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith('blob:')) await route.continue();
    else {
      offsite.push(url);
      await route.abort();
    }
  });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('demo page: embedding model', () => {
  it('opens a new store with the best sentence model served and shows it in the status line and the settings', async () => {
    await page.goto(origin);
    await page.waitForSelector('body[data-state="ready"]', { timeout: MODEL_WAIT });
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
    expect(await page.getAttribute('[data-testid="model-in-use"]', 'data-model')).toBe(DEFAULT_EMBEDDING_MODEL);
    await shot('embedding-done');
    // The page keeps working on the reopened store: another turn is stored and counted.
    await chat('My sister lives in Lisbon and works as an architect.');
    expect(Number(await page.getAttribute('[data-testid="status"]', 'data-memories'))).toBeGreaterThan(total);
    // A reload opens with the offline model, the one now picked and stored: nothing to offer.
    await page.reload();
    await page.waitForSelector('body[data-state="ready"]', { timeout: MODEL_WAIT });
    expect(await page.getAttribute('[data-testid="status"]', 'data-embedder')).toBe(DEFAULT_EMBEDDING_MODEL);
    expect(await page.getAttribute('[data-testid="reembed-panel"]', 'data-state')).toBe('hidden');
  }, 240_000);

  it('reached nothing off the local server and logged no page error', () => {
    expect(offsite).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
