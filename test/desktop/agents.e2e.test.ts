// End to end: the Agents view and the memories view's search in real Chromium.
// The renderer (desktop/renderer, its Vite config and CSP) runs on real
// IndexedDB with the offline model; the main process is the real one
// (startDesktop with the injected Electron surface, as in test/desktop/main),
// its MCP server on 127.0.0.1; the page's bridge is the preload's, with
// ipcRenderer.invoke routed to the main process's handlers, and the main
// process's hub calls delivered to the page. The SDK's Client connects with the
// token the page shows. Leaves screenshots in test/desktop/__screenshots__/.
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, Page } from 'playwright';
import type { ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DesktopApp } from '../../desktop/main/desktop-app.js';
import {
  ROOT,
  STEP_WAIT,
  appReady,
  openPage,
  rawDatabase,
  screenshot,
  serveApp,
  showView,
  type ServedApp,
} from '../ui-helpers/app-page.js';
import { addPreload, deliverHubCalls, exposeMainProcess, startFakeDesktop } from '../ui-helpers/desktop-main.js';
import type { FakeElectron, FakeWindow } from './main/fake-electron.js';

const SHOTS = resolve(import.meta.dirname, '__screenshots__');

let server: ViteDevServer | undefined;
let browser: Browser | undefined;
let served: ServedApp | undefined;
let desktop: DesktopApp<FakeWindow> | undefined;
let electron: FakeElectron;
let page: Page;
let origin: string;
let work: string;
let mcpUrl: string;
const clients: Client[] = [];
const offsite: string[] = [];
const pageErrors: string[] = [];

async function shot(name: string, p: Page = page): Promise<void> {
  await screenshot(p, join(SHOTS, `${name}.png`), true);
}

function view(name: string, p: Page = page): Promise<void> {
  return showView(p, name);
}

async function agentsReady(): Promise<void> {
  await page.evaluate(() => document.querySelector('[data-view="agents"]')?.setAttribute('data-state', 'stale'));
  await page.click('[data-testid="hub-refresh"]');
  await page.waitForSelector('[data-view="agents"][data-state="ready"]', { timeout: STEP_WAIT });
}

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'engram-e2e', version: '1.0.0' });
  clients.push(client);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

async function callText(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  return (result.content as { text: string }[]).map((c) => c.text).join('\n');
}

beforeAll(async () => {
  served = await serveApp('desktop');
  ({ server, origin, browser } = served);
  ({ desktop, electron, work } = await startFakeDesktop('engram-agents-e2e-', {
    port: 0,
    timeoutMs: 20_000,
    bridgeScript: resolve(ROOT, 'scripts/engram-mcp.mjs'),
  }));
  mcpUrl = desktop.mcpUrl() ?? '';
  // The offline model, picked as a user would in the status view: the search assertions below use its threshold
  // (the app picks the best sentence model built in models/ by itself, e5-small in CI).
  ({ page } = await openPage(served, {
    offsite,
    errors: pageErrors,
    pick: 'engram-glove-100d',
    acceptDialogs: true,
    setUp: async (context) => {
      await exposeMainProcess(context, electron);
      await addPreload(context);
    },
  }));
  deliverHubCalls(desktop, () => page);
  await page.goto(`${origin}/#memories`);
  await appReady(page);
}, 240_000);

afterAll(async () => {
  for (const c of clients.splice(0)) await c.close();
  await browser?.close();
  await server?.close();
  await desktop?.stop();
  await rm(work, { recursive: true, force: true });
});

describe('desktop Agents view and memories search (Chromium)', () => {
  it('an empty store says what to do first', async () => {
    expect(await page.isVisible('[data-testid="empty-store"]')).toBe(true);
    expect(await page.innerText('[data-testid="empty-store"]')).toMatch(/Nothing remembered yet[\s\S]*Add a memory/);
    expect(await page.isVisible('[data-testid="memory-list"]')).toBe(false);
    await shot('memories-empty');
    await page.click('[data-testid="welcome-add"]');
    await page.waitForSelector('[data-testid="add-form"]', { timeout: STEP_WAIT });
  }, 30_000);

  it('shows the server listening, creates a client and shows its token once with the snippets', async () => {
    await view('agents');
    await page.waitForSelector('[data-view="agents"][data-state="ready"]', { timeout: STEP_WAIT });
    expect(await page.getAttribute('[data-testid="hub-status"]', 'data-state')).toBe('listening');
    expect(await page.innerText('[data-testid="hub-status"]')).toContain(`Listening on ${mcpUrl}`);
    expect(await page.isVisible('[data-testid="hub-no-clients"]')).toBe(true);
    await shot('agents-empty');

    await page.fill('[data-testid="hub-name"]', 'Claude Desktop');
    await page.fill('[data-testid="hub-agent"]', 'claude');
    await page.fill('[data-testid="hub-user"]', 'ana');
    await page.click('[data-testid="hub-create"]');
    await page.waitForSelector('[data-testid="hub-token"]', { timeout: STEP_WAIT });
    const token = await page.innerText('[data-testid="hub-token"]');
    expect(token).toMatch(/^engram_[\w-]{43}$/);
    const desktopSnippet = await page.innerText('[data-snippet="claude-desktop"] pre');
    expect(JSON.parse(desktopSnippet)).toEqual({
      mcpServers: {
        engram: {
          command: 'node',
          args: [resolve(ROOT, 'scripts/engram-mcp.mjs')],
          env: { ENGRAM_MCP_TOKEN: token, ENGRAM_MCP_URL: mcpUrl },
        },
      },
    });
    await shot('agents-token');
    await page.click('[data-testid="hub-created-done"]');
    expect(await page.isVisible('[data-testid="hub-token"]')).toBe(false);
    expect(await page.content()).not.toContain(token);
  }, 60_000);

  it('lists each client with its last calls and what it stored; revoke and forget work from the view', async () => {
    // Tokens as the view creates them (the UI path is covered above).
    const make = (name: string, scope: { agentId: string; userId?: string }): Promise<string> =>
      page.evaluate(
        async ([n, s]) => {
          const bridge = (
            window as unknown as Record<string, { createHubClient: (...a: unknown[]) => Promise<unknown> }>
          )['engramDesktop'];
          const r = (await bridge!.createHubClient(n, s)) as { ok: boolean; value: { token: string } };
          return r.value.token;
        },
        [name, scope] as const,
      );
    const cursorToken = await make('Cursor', { agentId: 'cursor', userId: 'bob' });
    const clients0 = await page.evaluate(async () => {
      const bridge = (window as unknown as Record<string, { hubClients: () => Promise<unknown> }>)['engramDesktop'];
      return (await bridge!.hubClients()) as { value: { name: string }[] };
    });
    expect(clients0.value.map((c) => c.name)).toEqual(['Claude Desktop', 'Cursor']);
    const claudeToken = await make('Claude Desktop 2', { agentId: 'claude', userId: 'ana' });

    const claude = await connect(claudeToken);
    expect(
      await callText(claude, 'save_to_memory', {
        thinking: 'facts about Ana',
        content: ['Ana keeps bees on her balcony in Porto', 'Ana is learning the cello'],
      }),
    ).toMatch(/sav/i);
    expect(await callText(claude, 'recall_from_memory', { keywords: ['bees'], limit: null })).toContain(
      'Ana keeps bees on her balcony in Porto',
    );
    const bad = await claude.callTool({ name: 'save_to_memory', arguments: { content: 'not a list' } });
    expect(bad.isError).toBe(true);
    const cursor = await connect(cursorToken);
    await callText(cursor, 'archival_memory_insert', { content: 'Bob deploys on Fridays, against all advice' });

    await agentsReady();
    const card = page.locator('[data-testid="hub-client"][data-name="Claude Desktop 2"]');
    expect(await card.locator('[data-testid="hub-stored-count"]').innerText()).toBe('Stored: 2 memories');
    expect(await card.locator('[data-testid="hub-stored"] li').allInnerTexts()).toEqual([
      'Ana is learning the cello',
      'Ana keeps bees on her balcony in Porto',
    ]);
    expect(await card.locator('[data-testid="hub-calls"] tbody tr td.mono').allInnerTexts()).toEqual([
      'save_to_memory',
      'recall_from_memory',
      'save_to_memory',
    ]);
    expect(await card.locator('[data-testid="hub-calls"] tbody tr.failed').count()).toBe(1);
    // Two clients of one scope are told so: they see, and forget, the same memories.
    expect(await card.locator('[data-testid="hub-shared"]').innerText()).toMatch(
      /^Shares this scope with Claude Desktop:/,
    );
    const cursorCard = page.locator('[data-testid="hub-client"][data-name="Cursor"]');
    expect(await cursorCard.locator('[data-testid="hub-stored"]').innerText()).toContain('Bob deploys on Fridays');
    expect(await cursorCard.locator('[data-testid="hub-stored-count"]').innerText()).toBe('Stored: 1 memory');
    await shot('agents-clients');

    // Revoke: the view drops the client and its next call is refused.
    await cursorCard.locator('[data-testid="hub-revoke"]').click();
    await page.waitForFunction(
      () => ![...document.querySelectorAll('[data-testid="hub-client"]')].some((e) => e.textContent.includes('Cursor')),
      undefined,
      { timeout: STEP_WAIT },
    );
    await expect(
      cursor.callTool({ name: 'recall_from_memory', arguments: { keywords: ['Fridays'], limit: null } }),
    ).rejects.toThrow(/401|not valid/i);

    // The app's store is encrypted with the key in the (fake) OS keychain: no text is on disk in clear, the scope
    // ids are (README: what an encrypted store reveals). The text leaving every table when forgotten is
    // test/desktop/main/mcp-hub-privacy.test.ts's (a plain store, where a raw read can see it).
    const before = await rawDatabase(page, 'engram-desktop');
    expect(before).not.toContain('keeps bees');
    expect(before).not.toContain('Bob deploys on Fridays');
    expect(before).toContain('"agentId":"claude"');
    // Forget what Claude Desktop 2 wrote.
    await card.locator('[data-testid="hub-forget"]').click();
    await page.waitForFunction(
      () =>
        document.querySelector(
          '[data-testid="hub-client"][data-name="Claude Desktop 2"] [data-testid="hub-stored-count"]',
        )?.textContent === 'Stored: 0 memories',
      undefined,
      { timeout: STEP_WAIT },
    );
    const raw = await rawDatabase(page, 'engram-desktop');
    expect(raw).not.toContain('keeps bees');
    expect(raw).not.toContain('cello');
    expect(await callText(claude, 'recall_from_memory', { keywords: ['bees', 'cello'], limit: null })).toBe(
      'No memories found.',
    );
    await shot('agents-forgotten');
  }, 120_000);

  it('search lists only matches above the model threshold, the rest on request, and clears the picked memory', async () => {
    await view('memories');
    const add = async (text: string): Promise<void> => {
      await page.click('[data-testid="add-open"]');
      await page.fill('[data-testid="add-text"]', text);
      await page.click('[data-testid="add-submit"]');
      await page.waitForFunction(
        (t) => document.querySelector<HTMLTextAreaElement>('[data-testid="detail-text"]')?.value === t,
        text,
        { timeout: STEP_WAIT },
      );
    };
    await add('I am allergic to peanuts');
    await add('The project deadline is next Friday');
    await add('My sister lives in Porto');
    expect(await page.isVisible('[data-testid="empty-store"]')).toBe(false);
    // The last one added is open in the detail pane; a search replaces it with a hint.
    const search = async (mode: string, query: string): Promise<string[]> => {
      await page.click(`[data-testid="mode-${mode}"]`);
      await page.fill('[data-testid="search-input"]', query);
      await page.evaluate(() =>
        document.querySelector('[data-testid="search-results"]')?.setAttribute('data-state', 'stale'),
      );
      await page.click('[data-testid="search-button"]');
      await page.waitForSelector('[data-testid="search-results"][data-state="done"]', { timeout: STEP_WAIT });
      return page.locator('[data-testid="search-results"] .result .text').allInnerTexts();
    };
    expect(await search('hybrid', 'peanuts')).toEqual(['I am allergic to peanuts']);
    expect(await page.innerText('[data-testid="detail-empty"]')).toMatch(/Pick a result/);
    expect(await page.innerText('[data-testid="list-heading"]')).toMatch(/^1 best match for “peanuts” · Hybrid/);
    // The rest is there on request, dimmed as below the threshold.
    const more = await page.innerText('[data-testid="search-show-weaker"]');
    expect(more).toMatch(/^Show \d+ weaker results? \(relevance below 0\.\d\d\)$/);
    await shot('memories-search-threshold');
    await page.click('[data-testid="search-show-weaker"]');
    expect(await page.locator('[data-testid="search-results"] .result.below').count()).toBeGreaterThan(0);
    expect(await page.locator('[data-testid="search-results"] .result').first().innerText()).toContain('peanuts');
    // Nothing stored is about this: no best match.
    expect(await search('hybrid', 'quantum chromodynamics lecture')).toEqual([]);
    expect(await page.innerText('[data-testid="list-heading"]')).toMatch(/^No match for/);
    // Opening a result shows it; the next search clears it again.
    await search('keyword', 'porto');
    await page.click('[data-testid="search-results"] .result');
    await page.waitForFunction(
      () =>
        document.querySelector<HTMLTextAreaElement>('[data-testid="detail-text"]')?.value ===
        'My sister lives in Porto',
      undefined,
      { timeout: STEP_WAIT },
    );
    await search('vector', 'deadline');
    expect(await page.isVisible('[data-testid="detail-empty"]')).toBe(true);
    expect(await page.innerText('[data-testid="search-show-weaker"]')).toMatch(/\(cosine below 0\.35\)$/);
    await shot('memories-search-after');
  }, 90_000);

  it('the web fallback (no main process) says the view has no server', async () => {
    const { context, page: web } = await openPage(served!, { offsite });
    try {
      await web.goto(`${origin}/#agents`);
      await appReady(web);
      await web.waitForSelector('[data-view="agents"][data-state="ready"]', { timeout: STEP_WAIT });
      expect(await web.getAttribute('[data-testid="hub-status"]', 'data-state')).toBe('off');
      expect(await web.innerText('[data-testid="hub-status"]')).toMatch(/browser fallback.*no main process/);
      expect(await web.isVisible('[data-testid="hub-form"]')).toBe(false);
      await shot('agents-web', web);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('never reached the network and raised no page error', () => {
    expect(offsite).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
