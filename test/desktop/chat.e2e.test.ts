// End to end: the desktop app's Chat view (desktop/renderer, the browser fallback of `npm start`)
// in real Chromium, against OpenAI-compatible servers on loopback (test/llm/scripted-server.ts):
// one that streams, one that stalls (the turn fails clearly, stores nothing, and is sent again),
// and none (the scripted offline agent answers, and the page says so). Every request the page
// makes is recorded: nothing goes anywhere but the app's own server and the model servers the
// user set. Then the browser is closed and started again on the same profile: the store is
// reopened and the chat recalls what it was told. Leaves screenshots in test/desktop/__screenshots__/.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright';
import type { ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS } from '../../scripts/chromium.js';
import {
  startScriptedServer,
  type RecordedRequest,
  type Scripted,
  type ScriptedServer,
} from '../llm/scripted-server.js';
import {
  STEP_WAIT,
  appReady,
  ensureOfflineModel,
  lastTurnReport,
  preparePage,
  rawDatabase,
  requireChromium,
  screenshot,
  sendTurn,
  startAppServer,
  turnCount,
  turnsAre as turnsShown,
  typeTurn,
} from '../ui-helpers/app-page.js';

const SHOTS = resolve(import.meta.dirname, '__screenshots__');

let server: ViteDevServer | undefined;
let streaming: ScriptedServer | undefined;
let stalling: ScriptedServer | undefined;
/** Holds its first reply while the test starts the store's encryption (the conversion waits for the turn). */
let sealing: ScriptedServer | undefined;
let releaseSealing!: () => void;
let closedUrl: string;
let context: BrowserContext | undefined;
let page: Page;
let origin: string;
let profile: string;
/** Every URL the page asked for, in order, across both browser runs. */
const requested: string[] = [];
const pageErrors: string[] = [];
let releaseFirst!: () => void;

/** A reply made from the prompt, streamed in pieces: the first recalled memory, or that none was. */
function fromPrompt(request: RecordedRequest): Scripted {
  const memories = request.messages.find((m) => m.role === 'system' && m.content?.startsWith('Relevant memories:'));
  const first = memories?.content?.split('\n')[1]?.replace(/^- /, '');
  const reply = first === undefined ? 'Nothing comes to mind.' : `From memory: ${first}.`;
  return { stream: reply.split(/(?<= )/) };
}

/** Starts Chromium on the test's profile (a restart keeps IndexedDB and localStorage), recording every request. */
async function launch(): Promise<void> {
  context = await chromium.launchPersistentContext(profile, {
    executablePath: requireChromium(),
    args: [...CHROMIUM_ARGS],
    viewport: { width: 1360, height: 900 },
  });
  page = await preparePage(
    context,
    { app: 'desktop', origin },
    {
      allow: [...[streaming!, stalling!, sealing!].map((s) => new URL(s.baseUrl).origin), new URL(closedUrl).origin],
      requested,
      reportCsp: true,
      errors: pageErrors,
      // A refused connection (the server that is not there) is logged by Chromium itself; anything else is a fault.
      ignoreError: (text) => text.includes('net::ERR_CONNECTION_REFUSED'),
    },
  );
  await page.goto(`${origin}/`);
  await appReady(page);
}

async function shot(name: string): Promise<void> {
  await screenshot(page, join(SHOTS, `${name}.png`));
}

function turns(): Promise<number> {
  return turnCount(page);
}

/** Types a message and sends it. */
function type(text: string): Promise<void> {
  return typeTurn(page, text);
}

/** Waits until the thread shows `n` replies and the composer is free again. */
function turnsAre(n: number): Promise<void> {
  return turnsShown(page, n);
}

function chat(text: string): Promise<void> {
  return sendTurn(page, text);
}

function lastReply(): Promise<string> {
  return page.locator('[data-testid="turn"] .bubble').last().innerText();
}

function lastTurn(part: 'recalled' | 'stored' | 'timings'): Promise<string> {
  return lastTurnReport(page, part);
}

async function setServer(baseUrl: string, stallSeconds = 2): Promise<void> {
  if (await page.locator('[data-testid="model-form"]').isHidden()) await page.click('[data-testid="model-settings"]');
  await page.fill('[data-testid="model-url"]', baseUrl);
  await page.fill('[data-testid="model-name"]', 'local-test-model');
  await page.fill('[data-testid="model-stall"]', String(stallSeconds));
  await page.click('[data-testid="model-save"]');
  await page.waitForFunction(
    (url) => document.querySelector('[data-testid="chat-subtitle"]')?.textContent.includes(url) === true,
    baseUrl.replace(/\/+$/, ''),
    { timeout: STEP_WAIT },
  );
  await page.click('[data-testid="model-settings"]');
}

beforeAll(async () => {
  await ensureOfflineModel();
  profile = await mkdtemp(join(tmpdir(), 'engram-chat-e2e-'));
  const hold = new Promise<void>((r) => (releaseFirst = r));
  streaming = await startScriptedServer([{ stream: ['You live ', 'in Porto', ', Ana.'], hold }], {
    cors: true,
    fallback: fromPrompt,
  });
  stalling = await startScriptedServer([{ stream: ['Let me think'], stallAfter: 1 }], {
    cors: true,
    fallback: fromPrompt,
  });
  const sealingHold = new Promise<void>((r) => (releaseSealing = r));
  sealing = await startScriptedServer([{ stream: ['Noted: the bicycle ', 'is in the hallway.'], hold: sealingHold }], {
    cors: true,
    fallback: fromPrompt,
  });
  const gone = await startScriptedServer([], { cors: true });
  closedUrl = gone.baseUrl;
  await gone.close();
  ({ server, origin } = await startAppServer('desktop'));
  await launch();
}, 240_000);

afterAll(async () => {
  releaseFirst();
  releaseSealing();
  await context?.close();
  await streaming?.close();
  await stalling?.close();
  await sealing?.close();
  await server?.close();
  await rm(profile, { recursive: true, force: true });
});

describe('desktop chat', () => {
  it('opens on the Chat view; with no model server the scripted offline agent answers, and the page says so', async () => {
    expect(await page.evaluate(() => document.body.dataset['current'])).toBe('chat');
    expect(await page.locator('nav a').first().innerText()).toBe('Chat');
    expect(await page.getAttribute('[data-testid="model-notice"]', 'data-state')).toBe('offline');
    expect(await page.innerText('[data-testid="model-notice"]')).toContain('scripted offline agent');
    await chat('My name is Ana and I live in Porto');
    expect(await lastReply()).toBe(
      'Got it: your name is Ana and you live in Porto. Anything else you would like me to remember?',
    );
    expect(await lastTurn('stored')).toContain('My name is Ana and I live in Porto');
    expect(await page.locator('[data-testid="turn"] .meta').last().innerText()).toContain('scripted agent (offline)');
  }, 120_000);

  it('streams the reply of the model server the user set, token by token, and shows what the turn recalled, stored and took', async () => {
    await setServer(`${streaming!.baseUrl}/`);
    const before = await turns();
    await type('Where do I live?');
    // The server holds after its first piece: the bubble already shows it while the turn is not stored.
    await page.waitForFunction(
      () => document.querySelector('[data-testid="streaming"] .bubble')?.textContent === 'You live ',
      undefined,
      { timeout: STEP_WAIT },
    );
    expect(await turns()).toBe(before);
    releaseFirst();
    await turnsAre(before + 1);
    expect(await lastReply()).toBe('You live in Porto, Ana.');
    const request = streaming!.requests[0]!;
    expect(request.stream).toBe(true);
    expect(request.model).toBe('local-test-model');
    expect(request.messages.at(-1)).toEqual({ role: 'user', content: 'Where do I live?' });
    expect(request.messages.find((m) => m.content?.startsWith('Relevant memories:'))?.content).toContain(
      'My name is Ana and I live in Porto',
    );
    const recalled = await lastTurn('recalled');
    expect(recalled).toContain('My name is Ana and I live in Porto');
    // A relevance in [0, 1] with two decimals (relative to the query's best under per-query fusion: the only match is 1.00).
    expect(recalled).toMatch(/\b[01]\.\d\d\b/);
    expect(await lastTurn('stored')).toContain('Nothing');
    const timings = page.locator('[data-testid="turn"]').last().locator('[data-testid="timings"]');
    for (const step of ['recall', 'model', 'store', 'total'])
      expect(await timings.locator(`[data-step="${step}"] b`).innerText()).toMatch(/^\d+(\.\d)? (ms|s)$/);
    expect(await page.locator('[data-testid="turn"] .meta').last().innerText()).toContain(
      `local-test-model at ${streaming!.baseUrl}`,
    );
    expect(await page.getAttribute('[data-testid="model-notice"]', 'data-state')).toBe('server');
    await shot('chat-turn');
  }, 60_000);

  it("a memory in a turn's report opens in the Memories view", async () => {
    await page
      .locator('[data-testid="turn"]')
      .last()
      .locator('[data-testid="recalled"] button', { hasText: 'My name is Ana and I live in Porto' })
      .click();
    await page.waitForFunction(
      () =>
        document.body.dataset['current'] === 'memories' &&
        document.querySelector<HTMLTextAreaElement>('[data-testid="detail-text"]')?.value ===
          'My name is Ana and I live in Porto',
      undefined,
      { timeout: STEP_WAIT },
    );
    await page.click('[data-testid="nav-chat"]');
    await page.waitForFunction(() => document.body.dataset['current'] === 'chat', undefined, { timeout: STEP_WAIT });
  }, 60_000);

  it('a server that stalls fails the turn with a clear error, stores nothing, and the turn is sent again', async () => {
    await setServer(stalling!.baseUrl);
    const before = await turns();
    const users = await page.locator('.msg.user').count();
    await type('I drink green tea every morning');
    await page.waitForSelector('[data-testid="chat-error"]:not([hidden])', { timeout: STEP_WAIT });
    await turnsAre(before);
    expect(await page.innerText('[data-testid="chat-error"]')).toMatch(
      /^LLM: http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions sent nothing for 2000 ms: the model server stalled/,
    );
    // Nothing of the turn is in the thread: not the user's message, not half a reply; the text is back to send again.
    expect(await page.locator('.msg.user').count()).toBe(users);
    expect(await page.locator('[data-testid="streaming"]').count()).toBe(0);
    expect(await page.inputValue('[data-testid="chat-input"]')).toBe('I drink green tea every morning');
    await shot('chat-stalled');

    await page.click('[data-testid="retry"]');
    await turnsAre(before + 1);
    expect(await page.locator('[data-testid="chat-error"]').isHidden()).toBe(true);
    expect(await lastTurn('stored')).toContain('I drink green tea every morning');
    expect(await page.locator('.msg.user').count()).toBe(users + 1);
    expect(stalling!.requests).toHaveLength(2);
  }, 60_000);

  it('a server that is not there: the scripted offline agent answers and the page says why', async () => {
    await setServer(closedUrl);
    await chat('What do I drink in the morning?');
    expect(await page.getAttribute('[data-testid="model-notice"]', 'data-state')).toBe('unreachable');
    expect(await page.innerText('[data-testid="model-notice"]')).toContain(`${closedUrl} is not reachable`);
    expect(await lastReply()).toBe('I remember that you drink green tea every morning.');
    expect(await page.locator('[data-testid="turn"] .meta').last().innerText()).toContain(
      `scripted agent (offline): ${closedUrl} unreachable`,
    );
    await shot('chat-offline');
  }, 60_000);

  it('remembers across a restart: the browser closed and started again, the store reopened, recall works', async () => {
    await context!.close();
    context = undefined;
    await launch();
    expect(await page.evaluate(() => document.body.dataset['current'])).toBe('chat');
    expect(await page.locator('.msg.user .bubble').allInnerTexts()).toEqual([
      'My name is Ana and I live in Porto',
      'Where do I live?',
      'I drink green tea every morning',
      'What do I drink in the morning?',
    ]);
    await chat('Where do I live?');
    expect(await lastTurn('recalled')).toContain('My name is Ana and I live in Porto');
    expect(await lastReply()).toBe('I remember that your name is Ana and you live in Porto.');
  }, 150_000);

  it('a turn streaming when the store’s encryption starts is stored before the store closes; a message sent while it is closed waits on screen and is stored after the reopen', async () => {
    await setServer(sealing!.baseUrl);
    const before = await turns();
    await type('I keep my bicycle in the hallway');
    await page.waitForFunction(
      () => document.querySelector('[data-testid="streaming"] .bubble')?.textContent === 'Noted: the bicycle ',
      undefined,
      { timeout: STEP_WAIT },
    );
    // What the page shows along the way: the store's states, the waiting bubble; a message typed and sent
    // the moment the store closes (the composer is free again: the first turn was stored just before).
    await page.evaluate(() => {
      const seen = { store: [] as string[], waiting: [] as string[], inputs: [] as string[] };
      (window as unknown as { sealSeen: typeof seen }).sealSeen = seen;
      new MutationObserver(() => {
        const store = document.body.dataset['store'] ?? '';
        if (seen.store.at(-1) !== store) {
          seen.store.push(store);
          if (store === 'closed') {
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
    await page.click('[data-testid="nav-status"]');
    await page.waitForSelector('[data-view="status"][data-state="ready"]', { timeout: STEP_WAIT });
    await page.fill('[data-testid="encrypt-new"]', 'heron pebble saffron');
    await page.fill('[data-testid="encrypt-confirm"]', 'heron pebble saffron');
    await page.click('[data-testid="encrypt-passphrase-form-submit"]');
    // The conversion waits for the turn: the store stays open, the card says why.
    await page.waitForFunction(
      () =>
        document.querySelector('[data-testid="store-key-message"]')?.textContent ===
        'Waiting for a chat turn to end before the store is closed…',
      undefined,
      { timeout: STEP_WAIT },
    );
    expect(await page.getAttribute('body', 'data-store')).toBe('open');
    await shot('chat-conversion-waits');
    // Back to the chat (the store is open, so the navigation is too), and the model answers.
    await page.click('[data-testid="nav-chat"]');
    releaseSealing();
    await page.waitForSelector('[data-testid="store-key-message"][data-state="done"]', {
      state: 'attached',
      timeout: STEP_WAIT,
    });
    await turnsAre(before + 2);
    const seen = await page.evaluate(
      () => (window as unknown as { sealSeen: { store: string[]; waiting: string[]; inputs: string[] } }).sealSeen,
    );
    expect(seen.store).toEqual(['open', 'closed', 'open']);
    // The message sent while the store was closed left the composer for a waiting bubble, and was sent after the reopen.
    expect(seen.inputs).toEqual(['']);
    expect(seen.waiting).toEqual([
      'Waiting: the store is closed for the store’s encryption; your message is sent once it reopens…',
    ]);
    expect(await page.innerText('[data-testid="store-key-message"]')).toMatch(
      /^Your memories are now encrypted on this disk \(\d+ rows sealed\) with your passphrase/,
    );
    expect((await page.locator('.msg.user .bubble').allInnerTexts()).slice(-2)).toEqual([
      'I keep my bicycle in the hallway',
      'Where is my bicycle?',
    ]);
    expect(await page.locator('[data-testid="turn"] .bubble').nth(-2).innerText()).toBe(
      'Noted: the bicycle is in the hallway.',
    );
    expect(await lastTurn('recalled')).toContain('I keep my bicycle in the hallway');
    expect(await page.locator('[data-testid="chat-error"]').isHidden()).toBe(true);
    await shot('chat-after-conversion');
    // Both turns were written to the encrypted store: sealed on disk.
    const raw = await rawDatabase(page, 'engram-desktop');
    expect(raw).toContain('"key":"atRest"');
    expect(raw).not.toContain('bicycle');
  }, 120_000);

  it('nothing left the device except to the model servers the user set', () => {
    const origins = new Set(
      requested.filter((u) => !u.startsWith('data:') && !u.startsWith('blob:')).map((u) => new URL(u).origin),
    );
    expect([...origins].sort()).toEqual(
      [
        origin,
        ...[streaming!, stalling!, sealing!].map((s) => new URL(s.baseUrl).origin),
        new URL(closedUrl).origin,
      ].sort(),
    );
    // To the model servers: only the reachability check and the chat completions.
    const toModels = requested.filter(
      (u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:') && !u.startsWith('blob:'),
    );
    for (const url of toModels) expect(new URL(url).pathname).toMatch(/^\/v1\/(models|chat\/completions)$/);
    expect(pageErrors).toEqual([]);
  });
});
