// End to end: the demo's opt-in encryption at rest in real Chromium (demo/
// served by its own Vite config, the offline model, the network closed). A
// fresh store is plain; the "Encryption at rest" card's passphrase makes it
// again, encrypted; a reload asks for the passphrase, a wrong one is refused
// with a clear message and the right one opens everything that was stored. Raw
// IndexedDB reads show the texts sealed. Leaves screenshots in
// test/demo/__screenshots__/.
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright';
import type { ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawDatabase, screenshot, sendTurn, openApp } from '../ui-helpers/app-page.js';

const SHOTS = resolve(import.meta.dirname, '__screenshots__');
const MODEL_WAIT = 120_000;
const STEP_WAIT = 60_000;
const PASSPHRASE = 'copper kettle at dawn';

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

async function memories(): Promise<string[]> {
  return page.locator('[data-testid="memory-list"] .text').allInnerTexts();
}

/** Loads the page: ready, or the unlock panel. */
async function load(): Promise<'ready' | 'unlock'> {
  await page.goto(origin);
  await page.waitForFunction(
    () =>
      document.body.dataset['state'] === 'ready' || document.querySelector('[data-testid="passphrase-panel"]') !== null,
    undefined,
    { timeout: MODEL_WAIT },
  );
  return (await page.isVisible('[data-testid="passphrase-panel"]')) ? 'unlock' : 'ready';
}

beforeAll(async () => {
  ({ server, origin, browser, page } = await openApp('demo', {
    viewport: { width: 1360, height: 1100 },
    offsite,
    errors: pageErrors,
    pick: 'engram-glove-100d',
  }));
  page.on('dialog', (d) => void d.accept());
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('demo encryption at rest (Chromium)', () => {
  it('a new store is plain; the passphrase field makes it encrypted while it is empty', async () => {
    expect(await load()).toBe('ready');
    const card = page.locator('[data-testid="encryption-card"]');
    expect(await card.getAttribute('data-encrypted')).toBe('false');
    expect(await page.innerText('[data-testid="encryption-state"]')).toMatch(/^Not encrypted: .*Choose a passphrase/);
    await page.fill('[data-testid="encrypt-passphrase"]', PASSPHRASE);
    await page.fill('[data-testid="encrypt-confirm"]', 'something else');
    await page.click('[data-testid="encrypt-button"]');
    expect(await page.innerText('[data-testid="encrypt-message"]')).toMatch(/differ/);
    await page.fill('[data-testid="encrypt-confirm"]', PASSPHRASE);
    await shot('passphrase-encrypt');
    await page.click('[data-testid="encrypt-button"]');
    await page.waitForSelector('[data-testid="encryption-card"][data-encrypted="true"]', { timeout: STEP_WAIT });
    expect(await page.innerText('[data-testid="encrypt-message"]')).toMatch(/^Encrypted\./);
    expect(await rawDatabase(page, 'engram-demo')).toContain('"key":"atRest"');

    await chat('My name is Ana and I keep bees in Porto');
    expect(await memories()).toContain('My name is Ana and I keep bees in Porto');
    const raw = await rawDatabase(page, 'engram-demo');
    expect(raw).not.toContain('keep bees');
    expect(raw).not.toContain('Porto');
    expect(raw).not.toContain(PASSPHRASE);
  }, 240_000);

  it('a reload asks for the passphrase: a wrong one is refused clearly, the right one opens everything', async () => {
    expect(await load()).toBe('unlock');
    expect(await page.getAttribute('body', 'data-state')).toBe('loading');
    await page.fill('[data-testid="passphrase-input"]', 'not my passphrase');
    await page.click('[data-testid="passphrase-submit"]');
    await page.waitForSelector('[data-testid="passphrase-message"][data-state="error"]', { timeout: STEP_WAIT });
    expect(await page.innerText('[data-testid="passphrase-message"]')).toMatch(
      /^Wrong passphrase: .*does not open this store/,
    );
    await shot('passphrase-wrong');
    await page.fill('[data-testid="passphrase-input"]', PASSPHRASE);
    await page.click('[data-testid="passphrase-submit"]');
    await page.waitForSelector('body[data-state="ready"]', { timeout: MODEL_WAIT });
    expect(await page.isVisible('[data-testid="passphrase-panel"]')).toBe(false);
    expect(await memories()).toContain('My name is Ana and I keep bees in Porto');
    expect(await page.getAttribute('[data-testid="encryption-card"]', 'data-encrypted')).toBe('true');
    // The store keeps working encrypted: a search finds what was said.
    await page.click('[data-testid="mode-keyword"]');
    await page.fill('[data-testid="search-input"]', 'bees');
    await page.click('[data-testid="search-button"]');
    await page.waitForSelector('[data-testid="search-results"][data-state="done"]', { timeout: STEP_WAIT });
    expect(await page.locator('[data-testid="search-results"] .result .text').allInnerTexts()).toContain(
      'My name is Ana and I keep bees in Porto',
    );
    await shot('passphrase-unlocked');
    expect(pageErrors).toEqual([]);
    expect(offsite).toEqual([]);
  }, 240_000);

  it('a store that holds memories is not made again: the card says conversion is needed', async () => {
    await page.evaluate(() => indexedDB.deleteDatabase('engram-demo'));
    expect(await load()).toBe('ready');
    await chat('I am allergic to peanuts');
    await page.waitForFunction(
      () => document.querySelector('[data-testid="encryption-state"]')?.textContent.includes('conversion'),
      undefined,
      { timeout: STEP_WAIT },
    );
    expect(await page.isVisible('[data-testid="encrypt-form"]')).toBe(false);
    expect(await rawDatabase(page, 'engram-demo')).toContain('allergic to peanuts');
  }, 240_000);
});
