// End to end: the Status view's Encryption at rest card (desktop/renderer/store-key-section.ts) in
// real Chromium, against the real main process (startDesktop with the injected Electron surface, its
// safeStorage a fake keychain switched between a keyring and Linux's basic_text backend) and the
// preload's bridge. A passphrase store: a mismatched repetition and a wrong current passphrase are
// refused with nothing changed (the old passphrase still opens it after a restart); then the
// passphrase is changed while the app keeps its store open (a memory added right after), and after
// a restart the old passphrase is refused and the new one opens every memory. A keychain store moves
// to a passphrase and back. Leaves screenshots in test/desktop/__screenshots__/.
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, BrowserContext, Page } from 'playwright';
import type { ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_ENTRY } from '../../desktop/main/app-protocol.js';
import type { DesktopApp } from '../../desktop/main/desktop-app.js';
import { CHANNELS, type BridgeResult, type HubNewClient } from '../../desktop/preload/bridge-api.js';
import type { FakeElectron, FakeWindow } from './main/fake-electron.js';
import {
  listedMemoryTexts,
  openPage,
  rawDatabase,
  screenshot,
  serveApp,
  type ServedApp,
} from '../ui-helpers/app-page.js';
import { addPreload, deliverHubCalls, exposeMainProcess, startFakeDesktop } from '../ui-helpers/desktop-main.js';

const SHOTS = resolve(import.meta.dirname, '__screenshots__');
const MODEL_WAIT = 120_000;
const STEP_WAIT = 60_000;
const DB = 'engram-desktop';
const OLD = 'lantern orchard quietly';
const NEW = 'heron pebble saffron';
const MEMORIES = [
  'The spare key hides under the blue flowerpot',
  'The boat is moored at pier seven',
  'Grandma’s birthday is on the ninth of March',
];

let server: ViteDevServer | undefined;
let browser: Browser | undefined;
let served: ServedApp | undefined;
let desktop: DesktopApp<FakeWindow> | undefined;
let electron: FakeElectron;
let origin: string;
let work: string;
const offsite: string[] = [];
const pageErrors: string[] = [];
/** The page the main process's hub calls (webContents.send) reach. */
let hubPage: Page | undefined;

/** A fresh browser profile (its own IndexedDB); with `desktopShell`, the preload's bridge into the main process. */
function newContext(desktopShell = true): Promise<{ context: BrowserContext; page: Page }> {
  return openPage(served!, {
    offsite,
    errors: pageErrors,
    ignoreError: (text) => text.includes('Failed to load resource'),
    pick: 'engram-glove-100d',
    setUp: async (context) => {
      await exposeMainProcess(context, electron);
      if (desktopShell) await addPreload(context);
      // Whether every field and button of the card (but a conversion's Cancel) was disabled each time it said it
      // was running; the store's states (body[data-store]); a conversion's bar, and Cancel clicked once mid-way
      // when the page's `cancelConversion` is set (the unlock view's at start, when the tab's `cancelAtStart` is).
      await context.addInitScript(() => {
        const seen = { running: [] as boolean[], store: [] as string[], steps: [] as string[], looks: [] as string[] };
        (window as unknown as { keyCardSeen: typeof seen }).keyCardSeen = seen;
        new MutationObserver(() => {
          const store = document.body.dataset['store'];
          if (store !== undefined && seen.store.at(-1) !== store) seen.store.push(store);
          const card = document.querySelector<HTMLElement>('[data-testid="store-key-card"]');
          if (card?.dataset['state'] === 'running') {
            const controls = [...card.querySelectorAll<HTMLInputElement | HTMLButtonElement>('input, button')].filter(
              (c) => c.dataset['testid'] !== 'conversion-cancel',
            );
            seen.running.push(controls.length > 0 && controls.every((c) => c.disabled));
            // How each kind of disabled control looks (a field as a button does): its opacity and cursor.
            for (const c of controls) {
              const style = getComputedStyle(c);
              const look = `${c.tagName.toLowerCase()} ${style.opacity} ${style.cursor}`;
              if (!seen.looks.includes(look)) seen.looks.push(look);
            }
          }
          // The unlock view's conversion at start (store-unlock.ts), cancelled once mid-way when the tab asks for it.
          const atStart = document.querySelector<HTMLElement>(
            '[data-testid="store-conversion"] [data-testid="conversion-progress"]',
          );
          const startDone = Number(atStart?.dataset['done']);
          if (
            sessionStorage.getItem('cancelAtStart') === '1' &&
            startDone > 0 &&
            startDone < Number(atStart?.dataset['total'])
          ) {
            sessionStorage.removeItem('cancelAtStart');
            atStart!.querySelector<HTMLButtonElement>('[data-testid="conversion-cancel"]')!.click();
          }
          const bar = document.querySelector<HTMLElement>(
            '[data-testid="store-key-card"] [data-testid="conversion-progress"]',
          );
          if (bar === null || bar.dataset['done'] === undefined) return;
          const done = Number(bar.dataset['done']);
          const total = Number(bar.dataset['total']);
          if (seen.steps.at(-1) !== `${done}/${total}`) seen.steps.push(`${done}/${total}`);
          const w = window as unknown as { cancelConversion?: boolean };
          if (w.cancelConversion === true && done > 0 && done < total) {
            w.cancelConversion = false;
            seen.steps.push('cancel');
            bar.querySelector<HTMLButtonElement>('[data-testid="conversion-cancel"]')!.click();
          }
        }).observe(document, {
          subtree: true,
          attributes: true,
          attributeFilter: ['data-state', 'data-done', 'data-store'],
        });
      });
    },
  });
}

/** Loads (or restarts) the app and waits until it is ready or asks for a passphrase. */
async function load(page: Page, restart = false): Promise<'ready' | 'unlock' | 'create'> {
  if (restart) {
    await page.evaluate(() => {
      location.hash = '#memories';
    });
    await page.reload();
  } else await page.goto(`${origin}/#memories`);
  await page.waitForFunction(
    () =>
      document.body.dataset['state'] === 'ready' ||
      document.body.dataset['state'] === 'failed' ||
      document.querySelector('[data-testid="passphrase-panel"]') !== null,
    undefined,
    { timeout: MODEL_WAIT },
  );
  // Read at once (a locator would wait for a panel that a ready app never shows).
  const mode = await page.evaluate(
    () => document.querySelector('[data-testid="passphrase-panel"]')?.getAttribute('data-mode') ?? null,
  );
  if (mode === 'unlock' || mode === 'create') return mode;
  expect(await page.getAttribute('body', 'data-state')).toBe('ready');
  return 'ready';
}

async function unlock(page: Page, passphrase: string): Promise<string | undefined> {
  await page.fill('[data-testid="passphrase-input"]', passphrase);
  await page.click('[data-testid="passphrase-submit"]');
  await page.waitForFunction(
    () =>
      document.body.dataset['state'] === 'ready' ||
      document.querySelector('[data-testid="passphrase-message"][data-state="error"]') !== null,
    undefined,
    { timeout: MODEL_WAIT },
  );
  if ((await page.getAttribute('body', 'data-state')) === 'ready') return undefined;
  return page.innerText('[data-testid="passphrase-message"]');
}

async function addMemory(page: Page, text: string): Promise<void> {
  await page.click('[data-testid="nav-memories"]');
  await page.click('[data-testid="add-open"]');
  await page.fill('[data-testid="add-text"]', text);
  await page.click('[data-testid="add-submit"]');
  await page.waitForFunction(
    (t) => document.querySelector<HTMLTextAreaElement>('[data-testid="detail-text"]')?.value === t,
    text,
    { timeout: STEP_WAIT },
  );
}

async function memoryTexts(page: Page): Promise<string[]> {
  await page.click('[data-testid="nav-memories"]');
  return (await listedMemoryTexts(page, STEP_WAIT)).sort();
}

async function status(page: Page): Promise<void> {
  await page.click('[data-testid="nav-status"]');
  await page.waitForSelector('[data-view="status"][data-state="ready"]', { timeout: STEP_WAIT });
}

/** Submits a form of the card and waits until it says done or refused; returns the state and the message. */
async function submit(
  page: Page,
  form: string,
  fields: Record<string, string>,
  runningShot?: string,
): Promise<[string, string]> {
  for (const [testid, value] of Object.entries(fields)) await page.fill(`[data-testid="${testid}"]`, value);
  await page.evaluate(() => {
    document.querySelector('[data-testid="store-key-message"]')?.setAttribute('data-state', 'idle');
  });
  await page.click(`[data-testid="${form}-submit"]`);
  // A look at the change under way (the key derivations take a moment; no assertion rests on catching it).
  if (runningShot !== undefined) {
    const caught = await page
      .waitForSelector('[data-testid="store-key-card"][data-state="running"]', { timeout: 5_000 })
      .then(() => true)
      .catch(() => false);
    if (caught) await cardShot(runningShot, page);
  }
  await page.waitForSelector('[data-testid="store-key-message"]:is([data-state="done"], [data-state="error"])', {
    timeout: STEP_WAIT,
  });
  const message = page.locator('[data-testid="store-key-message"]');
  return [(await message.getAttribute('data-state'))!, await message.innerText()];
}

/** The store's key header as stored (the one row in clear): it changes exactly when the key does. */
async function keyHeader(page: Page): Promise<string> {
  const meta = (await rawDatabase(page, DB)).split('\n').find((line) => line.startsWith('meta:'))!;
  const rows = JSON.parse(meta.slice('meta:'.length)) as { key: string; value: unknown }[];
  return JSON.stringify(rows.find((r) => r.key === 'atRest')?.value);
}

interface Seen {
  running: boolean[];
  /** Each kind of control's look while the card ran ("input 0.5 default"), once each. */
  looks: string[];
  store: string[];
  steps: string[];
}

async function seen(page: Page): Promise<Seen> {
  return page.evaluate(() => (window as unknown as { keyCardSeen: Seen }).keyCardSeen);
}

/** The Status view's fact, once it matches (the view re-reads its facts after a change). */
async function factMatches(page: Page, fact: string, pattern: RegExp): Promise<void> {
  await page.waitForFunction(
    ([key, source]) => new RegExp(source).test(document.querySelector(`[data-fact="${key}"]`)?.textContent ?? ''),
    [fact, pattern.source] as const,
    { timeout: STEP_WAIT },
  );
}

async function cardShot(name: string, page: Page): Promise<void> {
  await page.locator('[data-testid="store-key-card"]').scrollIntoViewIfNeeded();
  await screenshot(page, join(SHOTS, `${name}.png`));
}

beforeAll(async () => {
  served = await serveApp('desktop');
  ({ server, origin, browser } = served);
  ({ desktop, electron, work } = await startFakeDesktop('engram-store-key-change-e2e-', {
    port: 0,
    timeoutMs: 90_000,
  }));
  deliverHubCalls(desktop, () => hubPage);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await desktop?.stop();
  await rm(work, { recursive: true, force: true });
});

describe('desktop Status: changing how the encrypted store unlocks (Chromium)', () => {
  it('changes the passphrase: a mismatch and a wrong current one change nothing; after a restart the old one is refused, the new one opens every memory', async () => {
    electron.safeStorage.backend = 'basic_text';
    const { context, page } = await newContext();
    try {
      expect(await load(page)).toBe('create');
      await page.fill('[data-testid="passphrase-input"]', OLD);
      await page.fill('[data-testid="passphrase-confirm"]', OLD);
      await page.click('[data-testid="passphrase-submit"]');
      await page.waitForSelector('body[data-state="ready"]', { timeout: MODEL_WAIT });
      for (const text of MEMORIES) await addMemory(page, text);

      await status(page);
      expect(await page.innerText('[data-testid="store-key-state"]')).toMatch(
        /^Encrypted on this disk · unlocked by your passphrase\n/,
      );
      // No keyring: the move to the keychain is not offered, and the card says why.
      expect(await page.innerText('[data-testid="to-keychain-unavailable"]')).toMatch(/basic_text/);
      const header = await keyHeader(page);

      // Refused before anything runs: the repetition differs.
      expect(
        await submit(page, 'passphrase-change-form', {
          'change-current': OLD,
          'change-new': NEW,
          'change-confirm': OLD,
        }),
      ).toEqual(['error', 'The new passphrase and its repetition differ: type the same one twice.']);
      // engram refuses a wrong current passphrase; nothing was written.
      const [state, said] = await submit(page, 'passphrase-change-form', {
        'change-current': 'not the passphrase',
        'change-new': NEW,
        'change-confirm': NEW,
      });
      expect([state, said]).toEqual([
        'error',
        'Wrong current passphrase: nothing was changed, the store still opens with it. Try again.',
      ]);
      await cardShot('store-key-change-wrong-current', page);
      expect(await keyHeader(page)).toBe(header);

      // A restart: the old passphrase still opens it, every memory there.
      expect(await load(page, true)).toBe('unlock');
      expect(await unlock(page, OLD)).toBeUndefined();
      expect(await memoryTexts(page)).toEqual([...MEMORIES].sort());

      // The change, the app's store open throughout: a memory added right after, without a restart.
      await status(page);
      await cardShot('store-key-change-passphrase', page);
      expect(
        await submit(
          page,
          'passphrase-change-form',
          {
            'change-current': OLD,
            'change-new': NEW,
            'change-confirm': NEW,
          },
          'store-key-change-running',
        ),
      ).toEqual([
        'done',
        'Passphrase changed: the old one no longer opens the store; the next start asks for the new one.',
      ]);
      const { running, looks } = await seen(page);
      expect(running.length).toBeGreaterThan(0);
      expect(running.every(Boolean)).toBe(true);
      // The disabled passphrase fields look as unusable as the disabled buttons.
      expect(looks.sort()).toEqual(['button 0.5 default', 'input 0.5 default']);
      expect(
        await page
          .locator('[data-testid="store-key-card"] input')
          .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value)),
      ).toEqual(['', '', '']);
      await cardShot('store-key-change-done', page);
      expect(await keyHeader(page)).not.toBe(header);
      await addMemory(page, 'Written right after the change');

      // A restart: the old passphrase is refused, the new one opens all four.
      expect(await load(page, true)).toBe('unlock');
      expect(await unlock(page, OLD)).toMatch(/^Wrong passphrase: .*does not open this store/);
      expect(await unlock(page, NEW)).toBeUndefined();
      expect(await memoryTexts(page)).toEqual([...MEMORIES, 'Written right after the change'].sort());
      const raw = await rawDatabase(page, DB);
      for (const secret of [OLD, NEW, 'flowerpot', 'pier seven', 'right after']) expect(raw).not.toContain(secret);
    } finally {
      await context.close();
    }
    expect(pageErrors.filter((e) => !/KEY: /.test(e))).toEqual([]);
    expect(offsite).toEqual([]);
  }, 400_000);

  it('moves a keychain store to a passphrase (asked at the next start) and back to the keychain (no prompt)', async () => {
    electron.safeStorage.backend = 'gnome_libsecret';
    const { context, page } = await newContext();
    try {
      expect(await load(page)).toBe('ready');
      await addMemory(page, MEMORIES[0]!);
      await status(page);
      expect(await page.innerText('[data-testid="store-key-state"]')).toMatch(
        /^Encrypted on this disk · unlocked by the OS keychain/,
      );
      await cardShot('store-key-change-keychain', page);
      expect(
        await submit(page, 'to-passphrase-form', { 'to-passphrase-new': NEW, 'to-passphrase-confirm': NEW }),
      ).toEqual(['done', 'The store now unlocks with your passphrase: the next start asks for it.']);
      await factMatches(page, 'encryption', /^encrypted at rest with your passphrase/);
      expect(await page.isVisible('[data-testid="to-keychain-form"]')).toBe(true);

      expect(await load(page, true)).toBe('unlock');
      expect(await unlock(page, NEW)).toBeUndefined();
      expect(await memoryTexts(page)).toEqual([MEMORIES[0]]);

      await status(page);
      expect(await submit(page, 'to-keychain-form', { 'to-keychain-current': 'not the passphrase' })).toEqual([
        'error',
        'Wrong current passphrase: nothing was changed, the store still opens with it. Try again.',
      ]);
      expect(await submit(page, 'to-keychain-form', { 'to-keychain-current': NEW })).toEqual([
        'done',
        'The store now unlocks with the key in your OS keychain: no prompt at the next start; the passphrase no longer opens it.',
      ]);
      await factMatches(page, 'encryption', /^encrypted at rest with a key kept in the OS keychain/);
      expect(await load(page, true)).toBe('ready');
      expect(await memoryTexts(page)).toEqual([MEMORIES[0]]);
    } finally {
      await context.close();
    }
    expect(pageErrors.filter((e) => !/KEY: /.test(e))).toEqual([]);
  }, 400_000);

  it('encrypts a plain store with a passphrase from Status (no keychain): a cancel leaves it plain; done, with an agent call waiting while it is closed, the store reopens encrypted and every memory opens with the passphrase after a restart', async () => {
    electron.safeStorage.backend = 'basic_text';
    // The store made plain by the browser fallback, then opened by the desktop shell without a keychain.
    const { context, page } = await newContext(false);
    const client = new Client({ name: 'engram-e2e', version: '1.0.0' });
    try {
      expect(await load(page)).toBe('ready');
      for (const text of MEMORIES) await addMemory(page, text);
      await addPreload(context);
      expect(await load(page, true)).toBe('ready');
      await status(page);
      expect(await page.innerText('[data-testid="store-key-state"]')).toMatch(/^Not encrypted on this disk\n/);
      expect(await page.innerText('[data-testid="encrypt-passphrase-form"]')).toMatch(/basic_text/);
      await cardShot('store-key-change-plain', page);
      expect(await submit(page, 'encrypt-passphrase-form', { 'encrypt-new': NEW, 'encrypt-confirm': OLD })).toEqual([
        'error',
        'The new passphrase and its repetition differ: type the same one twice.',
      ]);
      expect(await rawDatabase(page, DB)).toContain('pier seven');

      // Cancelled mid-way: the store as it was, plain, open again and usable.
      await page.evaluate(() => {
        (window as unknown as { cancelConversion: boolean }).cancelConversion = true;
      });
      expect(await submit(page, 'encrypt-passphrase-form', { 'encrypt-new': NEW, 'encrypt-confirm': NEW })).toEqual([
        'error',
        'Encryption cancelled: the store is as it was, unencrypted.',
      ]);
      expect((await seen(page)).steps).toContain('cancel');
      expect(await rawDatabase(page, DB)).toContain('pier seven');
      expect(await memoryTexts(page)).toEqual([...MEMORIES].sort());

      // Done: closed while it ran (navigation paused, an agent's call waiting), opened again encrypted.
      await status(page);
      const created = (await electron.handlers.get(CHANNELS.hubCreateClient)!(
        { senderFrame: { url: APP_ENTRY } },
        'Script',
        { agentId: 'script', userId: 'ana' },
      )) as BridgeResult<HubNewClient>;
      if (!created.ok) throw new TypeError(created.error.message);
      hubPage = page;
      await client.connect(
        new StreamableHTTPClientTransport(new URL(desktop!.mcpUrl()!), {
          requestInit: { headers: { authorization: `Bearer ${created.value.token}` } },
        }),
      );
      // Slowed down so that the agent's call surely comes while the store is closed.
      const cdp = await context.newCDPSession(page);
      await cdp.send('Emulation.setCPUThrottlingRate', { rate: 30 });
      let saved: Promise<unknown> | undefined;
      let savedWhileClosed = false;
      void page
        .waitForSelector('body[data-store="closed"]', { state: 'attached', timeout: STEP_WAIT })
        .then(async () => {
          const call = { settled: false };
          saved = client
            .callTool({
              name: 'save_to_memory',
              arguments: { thinking: 'a fact', content: ['Ana waters the bees at noon'] },
            })
            .finally(() => {
              call.settled = true;
            });
          await page.waitForTimeout(300);
          savedWhileClosed = !call.settled && (await page.getAttribute('body', 'data-store')) === 'closed';
        });
      const [state, said] = await submit(
        page,
        'encrypt-passphrase-form',
        { 'encrypt-new': NEW, 'encrypt-confirm': NEW },
        'store-key-change-encrypting',
      );
      await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
      await expect.poll(() => saved !== undefined, { timeout: STEP_WAIT }).toBe(true);
      const result = (await saved) as { isError?: boolean };
      expect(result.isError).not.toBe(true);
      expect(savedWhileClosed).toBe(true);
      expect(state).toBe('done');
      expect(said).toMatch(/^Your memories are now encrypted on this disk \(\d+ rows sealed\) with your passphrase/);
      const watched = await seen(page);
      expect(watched.running.every(Boolean)).toBe(true);
      expect(watched.store).toEqual(['open', 'closed', 'open', 'closed', 'open']);
      const counts = watched.steps
        .filter((x) => x !== 'cancel')
        .map((x) => x.split('/').map(Number) as [number, number]);
      expect(counts.some(([done, total]) => done > 0 && done < total)).toBe(true);
      await factMatches(page, 'encryption', /^encrypted at rest with your passphrase/);
      expect(await page.isVisible('[data-testid="passphrase-change-form"]')).toBe(true);
      await cardShot('store-key-change-encrypted', page);
      await addMemory(page, 'Written right after the encryption');
      const raw = await rawDatabase(page, DB);
      expect(raw).toContain('"key":"atRest"');
      for (const secret of [NEW, 'flowerpot', 'pier seven', 'right after', 'waters the bees'])
        expect(raw).not.toContain(secret);

      expect(await load(page, true)).toBe('unlock');
      expect(await unlock(page, OLD)).toMatch(/^Wrong passphrase: /);
      expect(await unlock(page, NEW)).toBeUndefined();
      expect(await memoryTexts(page)).toEqual(
        [...MEMORIES, 'Written right after the encryption', 'Ana waters the bees at noon'].sort(),
      );
    } finally {
      hubPage = undefined;
      await client.close();
      await context.close();
    }
    expect(pageErrors.filter((e) => !/KEY: /.test(e))).toEqual([]);
  }, 400_000);

  it('with a keychain, a plain store (its encryption cancelled at start) is encrypted from Status with the keychain key; the next start opens it without a prompt', async () => {
    electron.safeStorage.backend = 'gnome_libsecret';
    const { context, page } = await newContext(false);
    try {
      expect(await load(page)).toBe('ready');
      for (const text of MEMORIES) await addMemory(page, text);
      await addPreload(context);
      await page.evaluate(() => {
        sessionStorage.setItem('cancelAtStart', '1');
      });
      expect(await load(page, true)).toBe('ready');
      expect(await page.innerText('#banner')).toMatch(/^Encryption cancelled/);
      await status(page);
      expect(await page.innerText('[data-testid="store-key-state"]')).toMatch(
        /^Not encrypted on this disk\n.*cancelled/,
      );
      expect(await page.isVisible('[data-testid="encrypt-passphrase-form"]')).toBe(false);
      const [state, said] = await submit(page, 'encrypt-keychain-form', {});
      expect(state).toBe('done');
      expect(said).toMatch(
        /^Your memories are now encrypted on this disk \(\d+ rows sealed\) with the key in your OS keychain: no prompt at the next start\.$/,
      );
      await factMatches(page, 'encryption', /^encrypted at rest with a key kept in the OS keychain/);
      expect(await page.isVisible('[data-testid="to-passphrase-form"]')).toBe(true);
      const raw = await rawDatabase(page, DB);
      expect(raw).toContain('"key":"atRest"');
      for (const secret of ['flowerpot', 'pier seven']) expect(raw).not.toContain(secret);
      expect(await load(page, true)).toBe('ready');
      expect(await memoryTexts(page)).toEqual([...MEMORIES].sort());
    } finally {
      await context.close();
    }
    expect(pageErrors.filter((e) => !/KEY: /.test(e))).toEqual([]);
  }, 400_000);
});
