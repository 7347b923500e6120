// End to end: the demo's opt-in encryption at rest in real Chromium (demo/
// served by its own Vite config, the offline model, the network closed). A
// fresh store is plain; the "Encryption at rest" card converts it in place
// (Engram.encryptStore) with a progress bar; a reload asks for the passphrase,
// a wrong one is refused with a clear message and the right one opens
// everything that was stored; "Remove encryption" turns it plain again (a wrong
// passphrase changes nothing); a cancel mid-way leaves the store plain and the
// page usable. Raw IndexedDB reads show what is sealed. Leaves screenshots in
// test/demo/__screenshots__/.
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright';
import type { ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedServer, type ScriptedServer } from '../llm/scripted-server.js';
import {
  STEP_WAIT as TURN_WAIT,
  openApp,
  rawDatabase,
  screenshot,
  sendTurn,
  turnCount,
  turnsAre,
  typeTurn,
} from '../ui-helpers/app-page.js';

const SHOTS = resolve(import.meta.dirname, '__screenshots__');
const MODEL_WAIT = 120_000;
const STEP_WAIT = 60_000;
const PASSPHRASE = 'copper kettle at dawn';

let server: ViteDevServer | undefined;
/** A model server whose first reply is held half-streamed while the test starts a conversion (it waits for the turn). */
let sealing: ScriptedServer | undefined;
let releaseSealing!: () => void;
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

/** A keyword search through the page's search panel: the texts found. */
async function search(query: string): Promise<string[]> {
  await page.click('[data-testid="mode-keyword"]');
  await page.fill('[data-testid="search-input"]', query);
  await page.click('[data-testid="search-button"]');
  await page.waitForSelector('[data-testid="search-results"][data-state="done"]', { timeout: STEP_WAIT });
  return page.locator('[data-testid="search-results"] .result .text').allInnerTexts();
}

/** The card's message once it settles (`info` or `error`: the conversion and the reopen ended). */
async function settledMessage(state: 'info' | 'error'): Promise<string> {
  await page.waitForSelector(`[data-testid="encrypt-message"][data-state="${state}"]`, { timeout: MODEL_WAIT });
  await page.waitForSelector('[data-testid="encryption-card"][data-busy="false"]', { timeout: STEP_WAIT });
  return page.innerText('[data-testid="encrypt-message"]');
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
  const sealingHold = new Promise<void>((r) => (releaseSealing = r));
  sealing = await startScriptedServer([{ stream: ['Noted: the bicycle ', 'is in the hallway.'], hold: sealingHold }], {
    cors: true,
    fallback: () => ({ stream: ['In the ', 'hallway.'] }),
  });
  ({ server, origin, browser, page } = await openApp('demo', {
    viewport: { width: 1360, height: 1100 },
    allow: [new URL(sealing.baseUrl).origin],
    offsite,
    errors: pageErrors,
    pick: 'engram-glove-100d',
  }));
  page.on('dialog', (d) => void d.accept());
}, 180_000);

afterAll(async () => {
  releaseSealing();
  await sealing?.close();
  await browser?.close();
  await server?.close();
});

describe('demo encryption at rest (Chromium)', () => {
  it('a plain store with memories is encrypted in place with progress: its texts leave the disk, search finds them', async () => {
    expect(await load()).toBe('ready');
    const card = page.locator('[data-testid="encryption-card"]');
    expect(await card.getAttribute('data-encrypted')).toBe('false');
    await chat('My name is Ana and I keep bees in Porto');
    expect(await memories()).toContain('My name is Ana and I keep bees in Porto');
    expect(await rawDatabase(page, 'engram-demo')).toContain('keep bees');
    expect(await page.innerText('[data-testid="encryption-state"]')).toMatch(/^Not encrypted: .*Choose a passphrase/);
    await page.fill('[data-testid="encrypt-passphrase"]', PASSPHRASE);
    await page.fill('[data-testid="encrypt-confirm"]', 'something else');
    await page.click('[data-testid="encrypt-button"]');
    expect(await page.innerText('[data-testid="encrypt-message"]')).toMatch(/differ/);
    expect(await card.getAttribute('data-encrypted')).toBe('false');
    await page.fill('[data-testid="encrypt-confirm"]', PASSPHRASE);
    await shot('passphrase-encrypt');
    // What the card says along the way (the reopen after the conversion: said, with the index's progress, not frozen).
    await page.evaluate(() => {
      const said: string[] = [];
      (window as unknown as { cardSaid: string[] }).cardSaid = said;
      const message = document.querySelector('[data-testid="encrypt-message"]')!;
      new MutationObserver(() => said.push(message.textContent)).observe(message, {
        childList: true,
        characterData: true,
        subtree: true,
      });
    });
    // While it converts (the card busy), every other card (the re-embed card too), the chat's model settings and
    // "Forget everything" are held: inert, each control disabled, as a user sees them; the card's own controls are
    // its to disable. The chat's composer stays: a message sent meanwhile waits for the reopen (StoreGate).
    await page.evaluate(() => {
      const held: string[] = [];
      (window as unknown as { heldSeen: string[] }).heldSeen = held;
      const card = document.querySelector<HTMLElement>('[data-testid="encryption-card"]')!;
      new MutationObserver(() => {
        if (card.dataset['busy'] !== 'true') return;
        const panels = [
          ...document.querySelectorAll<HTMLElement>('.card:not(.encryption):not(.passphrase-panel):not(.chat)'),
        ];
        const reset = document.getElementById('reset')!;
        const settings = [document.getElementById('settings-toggle')!, document.getElementById('settings')!];
        const controls = [
          reset,
          ...[...panels, ...settings].flatMap((p) => [
            ...(p.matches('button') ? [p] : []),
            ...p.querySelectorAll('button, input, select, textarea'),
          ]),
        ];
        const free = [...panels, ...settings, reset].filter((p) => !p.inert).map((p) => p.id || p.className);
        const usable = controls.filter((c) => !c.matches(':disabled')).map((c) => c.id || c.className);
        const composer = ['chat-input', 'send'].filter(
          (id) => !document.querySelector(`[data-testid="${id}"]`)!.matches(':disabled'),
        );
        const status = document.querySelector<HTMLElement>('[data-testid="status"]')!.dataset['state'];
        // The card's own fields, disabled while it converts, look it (as its buttons do).
        const look = ['encrypt-passphrase', 'encrypt-button'].map((id) => {
          const style = getComputedStyle(document.querySelector(`[data-testid="${id}"]`)!);
          return `${style.opacity} ${style.cursor}`;
        });
        held.push(
          `${panels.length} panels; not inert [${free.join()}]; enabled [${usable.join()}]; composer [${composer.join()}]; status ${status}; fields ${look.join(', ')}`,
        );
      }).observe(card, { attributes: true, attributeFilter: ['data-busy'] });
    });
    // The CPU slowed for the shot of the page while it converts (held from the click's handler on).
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 20 });
    await page.click('[data-testid="encrypt-button"]');
    await shot('conversion-held');
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
    await cdp.detach();
    expect(await settledMessage('info')).toMatch(/^Encrypted \(\d+ rows sealed\)/);
    expect(await page.evaluate(() => (window as unknown as { heldSeen: string[] }).heldSeen)).toEqual([
      '4 panels; not inert []; enabled []; composer [chat-input,send]; status converting; fields 0.55 not-allowed, 0.55 not-allowed',
    ]);
    // Released: nothing held, each control as it was (the search, the chat, "Forget everything").
    expect(await page.locator('[data-held]').count()).toBe(0);
    expect(await page.locator('[inert]').count()).toBe(0);
    expect(await page.isDisabled('[data-testid="search-input"]')).toBe(false);
    expect(await page.isDisabled('#reset')).toBe(false);
    expect(await page.getAttribute('[data-testid="status"]', 'data-state')).toBe('ready');
    expect(await card.getAttribute('data-encrypted')).toBe('true');
    const bar = page.locator('[data-testid="conversion-progress"]');
    expect(await bar.getAttribute('data-state')).toBe('done');
    const total = Number(await bar.getAttribute('data-total'));
    expect(total).toBeGreaterThan(0);
    expect(Number(await bar.getAttribute('data-done'))).toBe(total);
    await shot('conversion-encrypted');
    const said = await page.evaluate(() => (window as unknown as { cardSaid: string[] }).cardSaid);
    expect(said).toContain('Reopening the store…');
    // The conversion carried the demo's index snapshots over (it flushes after each write): restored, not rebuilt.
    expect(said).toContain('Reopening the store… Restoring the index snapshot: 1 / 1');
    expect(said.some((t) => t.startsWith('Reopening the store… Rebuilding the index'))).toBe(false);

    const raw = await rawDatabase(page, 'engram-demo');
    expect(raw).toContain('"key":"atRest"');
    expect(raw).not.toContain('keep bees');
    expect(raw).not.toContain('Porto');
    expect(raw).not.toContain(PASSPHRASE);
    // The page reopened the converted store: what was remembered is there and found.
    expect(await memories()).toContain('My name is Ana and I keep bees in Porto');
    expect(await search('bees')).toContain('My name is Ana and I keep bees in Porto');
    await chat('I grow tomatoes on the balcony');
    expect(await rawDatabase(page, 'engram-demo')).not.toContain('tomatoes');
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
    expect(await search('bees')).toContain('My name is Ana and I keep bees in Porto');
    await shot('passphrase-unlocked');
    expect(pageErrors).toEqual([]);
    expect(offsite).toEqual([]);
  }, 240_000);

  it('"Remove encryption": a wrong passphrase changes nothing, the right one makes the store plain again', async () => {
    const card = page.locator('[data-testid="encryption-card"]');
    expect(await page.isVisible('[data-testid="encrypt-form"]')).toBe(false);
    await page.fill('[data-testid="decrypt-passphrase"]', 'not my passphrase');
    await page.click('[data-testid="decrypt-button"]');
    expect(await settledMessage('error')).toMatch(/^Wrong passphrase: /);
    expect(await card.getAttribute('data-encrypted')).toBe('true');
    // Refused, reopened as it was: the other panels are released.
    expect(await page.locator('[data-held]').count()).toBe(0);
    await shot('conversion-decrypt-wrong');
    const sealed = await rawDatabase(page, 'engram-demo');
    expect(sealed).toContain('"key":"atRest"');
    expect(sealed).not.toContain('keep bees');

    await page.fill('[data-testid="decrypt-passphrase"]', PASSPHRASE);
    await page.click('[data-testid="decrypt-button"]');
    expect(await settledMessage('info')).toMatch(/^Encryption removed/);
    expect(await card.getAttribute('data-encrypted')).toBe('false');
    const raw = await rawDatabase(page, 'engram-demo');
    expect(raw).not.toContain('"key":"atRest"');
    expect(raw).toContain('keep bees');
    expect(raw).toContain('tomatoes');
    expect(await search('tomatoes')).toContain('I grow tomatoes on the balcony');
  }, 240_000);

  it('a cancel mid-way leaves the store plain, says so, and the page keeps working', async () => {
    const card = page.locator('[data-testid="encryption-card"]');
    // Cancel as soon as the first page of rows is converted and more remain (the bar's attributes change).
    await page.evaluate(() => {
      const bar = document.querySelector<HTMLElement>('[data-testid="conversion-progress"]')!;
      const observer = new MutationObserver(() => {
        const done = Number(bar.dataset['done']);
        if (done > 0 && done < Number(bar.dataset['total'])) {
          observer.disconnect();
          document.querySelector<HTMLButtonElement>('[data-testid="conversion-cancel"]')!.click();
        }
      });
      observer.observe(bar, { attributes: true, attributeFilter: ['data-done'] });
    });
    await page.fill('[data-testid="encrypt-passphrase"]', PASSPHRASE);
    await page.fill('[data-testid="encrypt-confirm"]', PASSPHRASE);
    await page.click('[data-testid="encrypt-button"]');
    expect(await settledMessage('error')).toMatch(/^Cancelled: the store was left as it was/);
    const bar = page.locator('[data-testid="conversion-progress"]');
    expect(await bar.getAttribute('data-state')).toBe('cancelled');
    expect(Number(await bar.getAttribute('data-done'))).toBeLessThan(Number(await bar.getAttribute('data-total')));
    expect(await page.innerText('[data-testid="conversion-count"]')).toMatch(/^Cancelled at \d+ \/ \d+ rows/);
    await shot('conversion-cancelled');
    expect(await card.getAttribute('data-encrypted')).toBe('false');
    const raw = await rawDatabase(page, 'engram-demo');
    expect(raw).not.toContain('"key":"atRest"');
    expect(raw).toContain('keep bees');
    // Usable: a new memory is stored (plain) and search finds old and new.
    await chat('I am allergic to peanuts');
    expect(await memories()).toContain('I am allergic to peanuts');
    expect(await rawDatabase(page, 'engram-demo')).toContain('allergic to peanuts');
    expect(await search('bees')).toContain('My name is Ana and I keep bees in Porto');
    expect(pageErrors).toEqual([]);
    expect(offsite).toEqual([]);
  }, 240_000);
  it('a turn streaming when a conversion starts is stored before the store closes (the card says it waits); a message sent while it is closed waits on screen and is stored after the reopen', async () => {
    // The store is plain (after the cancel above, or a fresh one when this test runs alone).
    expect(await load()).toBe('ready');
    await page.click('#settings-toggle');
    await page.check('input[name="model-kind"][value="openai"]');
    await page.fill('#llm-base-url', sealing!.baseUrl);
    await page.fill('#llm-model', 'local-test-model');
    await page.click('#settings button[type="submit"]');
    await page.waitForFunction(
      () => document.getElementById('chat-subtitle')?.textContent.includes('local-test-model') === true,
      undefined,
      { timeout: TURN_WAIT },
    );
    await page.click('#settings-toggle');
    const before = await turnCount(page);
    await typeTurn(page, 'I keep my bicycle in the hallway');
    await page.waitForFunction(
      () => document.querySelector('[data-testid="streaming"] .bubble')?.textContent === 'Noted: the bicycle ',
      undefined,
      { timeout: TURN_WAIT },
    );
    // What the page shows along the way: the status line's states, the waiting bubble; a message typed and sent
    // the moment the store closes (the status says converting; the first turn was stored just before).
    await page.evaluate(() => {
      const seen = { status: [] as string[], waiting: [] as string[], inputs: [] as string[] };
      (window as unknown as { sealSeen: typeof seen }).sealSeen = seen;
      new MutationObserver(() => {
        const status = document.querySelector<HTMLElement>('[data-testid="status"]')!.dataset['state'] ?? '';
        if (seen.status.at(-1) !== status) {
          seen.status.push(status);
          if (status === 'converting') {
            const input = document.querySelector<HTMLInputElement>('[data-testid="chat-input"]')!;
            input.value = 'Where is my bicycle?';
            document.querySelector<HTMLButtonElement>('[data-testid="send"]')!.click();
            seen.inputs.push(input.value);
          }
        }
        const bubble = document.querySelector<HTMLElement>('[data-testid="streaming"] .bubble[data-waiting]');
        if (bubble !== null && seen.waiting.at(-1) !== bubble.textContent) seen.waiting.push(bubble.textContent);
      }).observe(document.body, { attributes: true, subtree: true, childList: true, characterData: true });
    });
    await page.fill('[data-testid="encrypt-passphrase"]', PASSPHRASE);
    await page.fill('[data-testid="encrypt-confirm"]', PASSPHRASE);
    await page.click('[data-testid="encrypt-button"]');
    // The conversion waits for the turn: the store stays open (nothing held), the card says why.
    await page.waitForFunction(
      () =>
        document.querySelector('[data-testid="encrypt-message"]')?.textContent ===
        'Waiting for a chat turn to be stored before the store is closed…',
      undefined,
      { timeout: TURN_WAIT },
    );
    expect(await page.getAttribute('[data-testid="status"]', 'data-state')).toBe('ready');
    expect(await page.locator('[data-held]').count()).toBe(0);
    await shot('chat-conversion-waits');
    releaseSealing();
    expect(await settledMessage('info')).toMatch(/^Encrypted \(\d+ rows sealed\)/);
    await turnsAre(page, before + 2);
    const seen = await page.evaluate(
      () => (window as unknown as { sealSeen: { status: string[]; waiting: string[]; inputs: string[] } }).sealSeen,
    );
    // Ready, converting, (the model loading for the reopen,) ready again: never failed.
    expect([seen.status.slice(0, 2), seen.status.at(-1), seen.status.includes('failed')]).toEqual([
      ['ready', 'converting'],
      'ready',
      false,
    ]);
    // The message sent while the store was closed left the composer for a waiting bubble, and was sent after the reopen.
    expect(seen.inputs).toEqual(['']);
    expect(seen.waiting).toEqual([
      'Waiting: the store is closed for a conversion of the store’s encryption; your message is sent once it reopens…',
    ]);
    expect((await page.locator('.msg.user .bubble').allInnerTexts()).slice(-2)).toEqual([
      'I keep my bicycle in the hallway',
      'Where is my bicycle?',
    ]);
    expect(await page.locator('[data-testid="turn"] .bubble').nth(-2).innerText()).toBe(
      'Noted: the bicycle is in the hallway.',
    );
    expect(await page.isHidden('[data-testid="chat-error"]')).toBe(true);
    expect(await page.inputValue('[data-testid="chat-input"]')).toBe('');
    await shot('chat-after-conversion');
    // Both turns were written to the encrypted store: sealed on disk.
    const raw = await rawDatabase(page, 'engram-demo');
    expect(raw).toContain('"key":"atRest"');
    expect(raw).not.toContain('bicycle');
    expect(pageErrors).toEqual([]);
    expect(offsite).toEqual([]);
  }, 240_000);
});
