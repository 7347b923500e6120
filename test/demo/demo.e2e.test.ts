// End to end: the demo page (demo/) served by its own Vite config and used in
// real Chromium the way a developer would try it: wait for the offline model,
// chat, inspect each turn, search, switch user, reload. Every request that does
// not go to the local server is blocked and recorded, so the test also proves
// the page works offline. Leaves a screenshot in test/demo/__screenshots__/.
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright';
import type { ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STEP_WAIT, appReady, lastTurnReport, openApp, screenshot, sendTurn } from '../ui-helpers/app-page.js';

const SCREENSHOT = resolve(import.meta.dirname, '__screenshots__/demo.png');

/** What the local OpenAI-compatible endpoint received. */
interface CompletionRequest {
  authorization: string | undefined;
  body: { model: string; messages: { role: string; content: string }[] };
}

/**
 * A minimal OpenAI-compatible chat-completions endpoint on loopback, with CORS so the
 * page (another origin) may call it, standing in for a local model server.
 */
async function startEndpoint(
  reply: string,
): Promise<{ baseUrl: string; requests: CompletionRequest[]; server: Server }> {
  const requests: CompletionRequest[] = [];
  const cors = {
    'access-control-allow-origin': '*',
    'access-control-allow-headers': 'content-type, authorization',
    'access-control-allow-methods': 'POST',
  };
  const http = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.method === 'OPTIONS') {
        res.writeHead(204, cors).end();
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, cors).end();
        return;
      }
      requests.push({ authorization: req.headers.authorization, body: JSON.parse(body) as CompletionRequest['body'] });
      const message = { role: 'assistant', content: reply };
      res.writeHead(200, { ...cors, 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          choices: [{ index: 0, message, finish_reason: 'stop' }],
        }),
      );
    });
  });
  await new Promise<void>((done) => http.listen(0, '127.0.0.1', done));
  const { port } = http.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, requests, server: http };
}

let endpoint: Awaited<ReturnType<typeof startEndpoint>> | undefined;
let server: ViteDevServer | undefined;
let browser: Browser | undefined;
let page: Page;
let origin: string;
const offsite: string[] = [];
const pageErrors: string[] = [];

/** Texts of the elements matching `selector`. */
function texts(selector: string): Promise<string[]> {
  return page.locator(selector).allInnerTexts();
}

function waitReady(): Promise<void> {
  return appReady(page);
}

/** Types a message as a user would, sends it, and waits until the turn's report is on the page. */
function chat(text: string): Promise<void> {
  return sendTurn(page, text);
}

/** Waits until the memories card shows `scope` ("user/agent"): it renders beside the chat title, not with it. */
async function memoriesOf(scope: string): Promise<void> {
  await page.waitForFunction(
    (s) => document.querySelector('[data-testid="memory-list"]')?.getAttribute('data-scope') === s,
    scope,
    { timeout: STEP_WAIT },
  );
}

/** The last turn's sections. */
function lastTurn(part: 'recalled' | 'stored' | 'timings'): Promise<string> {
  return lastTurnReport(page, part);
}

async function search(mode: 'vector' | 'keyword' | 'hybrid' | 'log', query: string): Promise<string[]> {
  await page.click(`[data-testid="mode-${mode}"]`);
  await page.fill('[data-testid="search-input"]', query);
  await page.click('[data-testid="search-button"]');
  await page.waitForFunction(
    () => document.querySelector('[data-testid="search-results"]')?.getAttribute('data-state') === 'done',
    undefined,
    {
      timeout: STEP_WAIT,
    },
  );
  return texts('[data-testid="search-results"] .result .text');
}

beforeAll(async () => {
  endpoint = await startEndpoint('Your name is Ana.');
  // The offline model, picked as a user would in the settings: what this test's expectations are made with
  // (embedding-model.e2e.test.ts covers MiniLM, which the page picks by itself when its folder is served).
  ({ server, origin, browser, page } = await openApp('demo', {
    viewport: { width: 1360, height: 1100 },
    allow: [new URL(endpoint.baseUrl).origin],
    offsite,
    errors: pageErrors,
    pick: 'engram-glove-100d',
  }));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  endpoint?.server.close();
});

describe('demo page', () => {
  it('loads the offline model in a worker and reports embedder, index and counts', async () => {
    await page.goto(origin);
    await waitReady();
    const status = page.locator('[data-testid="status"]');
    expect(await status.getAttribute('data-embedder')).toBe('engram-glove-100d');
    expect(await status.getAttribute('data-index')).toBe('empty');
    expect(await status.getAttribute('data-memories')).toBe('0');
    expect(await status.innerText()).toMatch(
      /engram-glove-100d \(100-d\) · ready in .* · index: 0 vectors, started empty at load · 0 memories/,
    );
    expect(await page.locator('[data-testid="loading"]').isHidden()).toBe(true);
  }, 120_000);

  it('chat turns show what was stored, what was recalled for the reply and timings', async () => {
    await chat('My name is Ana and I live in Porto');
    expect(await lastTurn('stored')).toContain('My name is Ana and I live in Porto');
    expect(await lastTurn('stored')).toContain('ADD');
    await chat('I am allergic to peanuts');
    expect(await lastTurn('stored')).toContain('I am allergic to peanuts');
    await chat('Where do I live?');

    const recalled = await lastTurn('recalled');
    expect(recalled).toContain('My name is Ana and I live in Porto');
    expect(recalled).not.toContain('peanuts');
    expect(recalled).toMatch(/0\.\d\d/); // the similarity score
    expect(await page.locator('.msg.assistant .bubble').last().innerText()).toBe(
      'I remember that your name is Ana and you live in Porto.',
    );
    expect(await lastTurn('stored')).toContain('Nothing'); // a question is not stored as a memory
    const timings = page.locator('[data-testid="turn"]').last().locator('[data-testid="timings"]');
    for (const step of ['recall', 'model', 'store', 'total']) {
      expect(await timings.locator(`[data-step="${step}"] b`).innerText()).toMatch(/^\d+(\.\d)? (ms|s)$/);
    }
    expect(await page.locator('[data-testid="turn"]').count()).toBe(3);
    expect(await page.getAttribute('[data-testid="status"]', 'data-memories')).toBe('2');
    expect(await page.innerText('[data-testid="memory-count"]')).toBe('2');
  }, 90_000);

  it('search finds memories by meaning and by keyword', async () => {
    const byMeaning = await search('vector', 'nut allergy');
    expect(byMeaning[0]).toBe('I am allergic to peanuts');
    // No memory contains "nut" or "allergy" as a word: keyword search finds nothing, meaning search does.
    expect(await search('keyword', 'nut allergy')).toEqual([]);
    expect(await search('keyword', 'porto')).toEqual(['My name is Ana and I live in Porto']);
    const hybrid = await search('hybrid', 'peanuts');
    expect(hybrid[0]).toBe('I am allergic to peanuts');
    const log = await search('log', 'peanuts');
    expect(log).toContain('I am allergic to peanuts');
  }, 60_000);

  it('another user sees none of Ana\u2019s memories, in the list, the search or the chat', async () => {
    await page.click('[data-testid="user-ben"]');
    await page.waitForFunction(
      () => document.getElementById('chat-title')?.textContent.includes('Ben') === true,
      undefined,
      { timeout: STEP_WAIT },
    );
    await memoriesOf('ben/helper');
    expect(await page.innerText('[data-testid="memory-count"]')).toBe('0');
    expect(await texts('[data-testid="memory-list"] .memory .text')).toEqual([]);
    expect(await page.locator('[data-testid="turn"]').count()).toBe(0);
    expect(await search('vector', 'Where does Ana live?')).toEqual([]);
    expect(await search('keyword', 'porto')).toEqual([]);
    await chat('Where do I live?');
    expect(await lastTurn('recalled')).not.toContain('Porto');
    expect(await page.locator('.msg.assistant .bubble').last().innerText()).toBe(
      "I don't know that yet. Tell me, and I'll remember it.",
    );
    await chat('I live in Oslo');
    expect(await page.innerText('[data-testid="count-ana-helper"]')).toBe('2');
    expect(await page.innerText('[data-testid="count-ben-helper"]')).toBe('1');
    // Ana's memories with another agent are isolated too.
    await page.click('[data-testid="user-ana"]');
    await page.click('[data-testid="agent-planner"]');
    await page.waitForFunction(
      () => document.getElementById('chat-title')?.textContent.startsWith('Planner') === true,
      undefined,
      { timeout: STEP_WAIT },
    );
    await memoriesOf('ana/planner');
    expect(await page.innerText('[data-testid="memory-count"]')).toBe('0');
    await page.click('[data-testid="agent-helper"]');
    await page.waitForFunction(
      () => document.getElementById('chat-title')?.textContent === 'Helper talking with Ana',
      undefined,
      { timeout: STEP_WAIT },
    );
    await memoriesOf('ana/helper');
  }, 60_000);

  it('after a reload the memories, the chat and the turn reports are still there', async () => {
    await page.reload();
    await waitReady();
    const status = page.locator('[data-testid="status"]');
    expect(await status.getAttribute('data-index')).toBe('snapshot');
    expect(await status.getAttribute('data-memories')).toBe('3');
    expect(await page.innerText('#chat-title')).toBe('Helper talking with Ana');
    expect((await texts('[data-testid="memory-list"] .memory .text')).sort()).toEqual([
      'I am allergic to peanuts',
      'My name is Ana and I live in Porto',
    ]);
    expect(await texts('.msg.user .bubble')).toEqual([
      'My name is Ana and I live in Porto',
      'I am allergic to peanuts',
      'Where do I live?',
    ]);
    expect(await page.locator('[data-testid="turn"]').count()).toBe(3);
    expect(await lastTurn('recalled')).toContain('My name is Ana and I live in Porto');
    expect(await search('vector', 'nut allergy')).toContain('I am allergic to peanuts');

    await screenshot(page, SCREENSHOT, true);
  }, 120_000);

  it('an OpenAI-compatible endpoint entered in the settings answers, given the recalled memories', async () => {
    const local = endpoint!;
    await page.click('#settings-toggle');
    await page.check('input[name="model-kind"][value="openai"]');
    await page.fill('#llm-base-url', local.baseUrl);
    await page.fill('#llm-model', 'local-test-model');
    await page.fill('#llm-api-key', 'sk-local');
    await page.click('#settings button[type="submit"]');
    await page.waitForFunction(
      () => document.getElementById('chat-subtitle')?.textContent.includes('local-test-model') === true,
      undefined,
      { timeout: STEP_WAIT },
    );
    await chat('What is my name?');

    expect(await page.locator('.msg.assistant .bubble').last().innerText()).toBe('Your name is Ana.');
    expect(await page.locator('.msg.assistant .meta').last().innerText()).toContain(
      `local-test-model at ${local.baseUrl}`,
    );
    expect(local.requests).toHaveLength(1);
    const [request] = local.requests;
    expect(request?.authorization).toBe('Bearer sk-local');
    expect(request?.body.model).toBe('local-test-model');
    const messages = request?.body.messages ?? [];
    expect(messages.find((m) => m.role === 'system' && m.content.startsWith('Relevant memories:'))?.content).toContain(
      'My name is Ana and I live in Porto',
    );
    expect(messages[messages.length - 1]).toEqual({ role: 'user', content: 'What is my name?' });
    expect(await lastTurn('recalled')).toContain('My name is Ana and I live in Porto');

    expect(offsite).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
