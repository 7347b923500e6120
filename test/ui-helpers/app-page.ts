/**
 * What the apps' end-to-end tests (test/demo, test/desktop) share: the offline model built,
 * the app served by its own Vite config on loopback, headless Chromium, a browser context
 * with the network closed but for the origins a test allows (every other request blocked
 * and recorded), page errors collected, the embedding model picked as a user would, and
 * screenshots. Node side (Playwright drives the browser).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright';
import { createServer, type ViteDevServer } from 'vite';
import { DEFAULT_EMBEDDING_MODEL, KNOWN_EMBEDDING_MODELS, type KnownEmbeddingModel } from '../../lib/index.js';
import { CHROMIUM_ARGS, NO_CHROMIUM_HELP, chromiumPath } from '../../scripts/chromium.js';

/** The repository's root. */
export const ROOT = resolve(import.meta.dirname, '../..');
/** Longest wait for a page to open its store with the model (5-8 s in the worker on a slow machine). */
export const MODEL_WAIT = 90_000;
/** Longest wait for one step in a page. */
export const STEP_WAIT = 30_000;

/** The two apps: the demo page and the desktop renderer (its browser fallback). */
export type AppName = 'demo' | 'desktop';

const CONFIG: Readonly<Record<AppName, string>> = {
  demo: 'demo/vite.config.ts',
  desktop: 'desktop/renderer/vite.config.ts',
};

/** The localStorage key under which each app saves the embedding model picked (ui/model-picking.ts). */
export const MODEL_CHOICE_KEY: Readonly<Record<AppName, string>> = {
  demo: 'engram-demo:embedding-model',
  desktop: 'engram-desktop:embedding-model',
};

/** Builds the offline model folder in models/ when it is missing (scripts/ensure-model.mjs). */
export async function ensureOfflineModel(): Promise<void> {
  await promisify(execFile)(process.execPath, [resolve(ROOT, 'scripts/ensure-model.mjs')], { cwd: ROOT });
}

/**
 * The best known sentence model whose folder this repository built (`npm run model`): the one
 * an app picks by itself when nothing is saved. Throws when none was built.
 */
export function bestBuiltModel(): KnownEmbeddingModel {
  const found = KNOWN_EMBEDDING_MODELS.find(
    (m) => m.id !== DEFAULT_EMBEDDING_MODEL && existsSync(resolve(ROOT, 'models', m.id, 'config.json')),
  );
  if (found === undefined) throw new TypeError('no sentence model in models/: build one with `npm run model`');
  return found;
}

/** An app served on loopback. */
export interface AppServer {
  readonly server: ViteDevServer;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
}

/** Serves `app` with its own Vite config (and its CSP, for the desktop) on a free loopback port. */
export async function startAppServer(app: AppName): Promise<AppServer> {
  const server = await createServer({
    configFile: resolve(ROOT, CONFIG[app]),
    logLevel: 'error',
    // No HMR and no watching: edits elsewhere in the checkout must not reload the page under test.
    server: { host: '127.0.0.1', port: 0, strictPort: false, hmr: false, watch: null },
  });
  await server.listen();
  const address = server.httpServer?.address();
  if (typeof address !== 'object' || address === null) {
    await server.close();
    throw new TypeError(`the ${app} server has no address`);
  }
  return { server, origin: `http://127.0.0.1:${address.port}` };
}

/** The Chromium to drive; throws with how to get one when there is none. */
export function requireChromium(): string {
  const found = chromiumPath();
  if (found === undefined) throw new TypeError(NO_CHROMIUM_HELP);
  return found;
}

/** Headless Chromium with the flags of a closed network (scripts/chromium.ts). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: requireChromium(), args: [...CHROMIUM_ARGS] });
}

/** How {@link prepareContext} sets a browser context up. */
export interface ContextOptions {
  /**
   * Origins the page may reach (besides `data:` and `blob:` URLs); a function is asked at each
   * request, for a server started later.
   */
  readonly allow: readonly string[] | (() => readonly (string | undefined)[]);
  /** Receives every URL blocked. */
  readonly offsite?: string[];
  /** Receives every URL the page asks for, allowed or not. */
  readonly requested?: string[];
  /** Logs each Content-Security-Policy violation as a console error (which {@link collectErrors} counts). */
  readonly reportCsp?: boolean;
  /** Saves this embedding model as the user's pick in `app`'s localStorage before any page script runs. */
  readonly pick?: { readonly app: AppName; readonly model: string };
}

/** Closes the context's network but for the allowed origins, and adds the options' init scripts. */
export async function prepareContext(context: BrowserContext, options: ContextOptions): Promise<void> {
  const { allow, offsite, requested } = options;
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    requested?.push(url);
    const origins = typeof allow === 'function' ? allow() : allow;
    if (
      url.startsWith('data:') ||
      url.startsWith('blob:') ||
      origins.some((o) => o !== undefined && url.startsWith(`${o}/`))
    )
      await route.continue();
    else {
      offsite?.push(url);
      await route.abort();
    }
  });
  if (options.reportCsp === true)
    await context.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
      });
    });
  if (options.pick !== undefined)
    await context.addInitScript(
      ([key, id]) => {
        localStorage.setItem(key, id);
      },
      [MODEL_CHOICE_KEY[options.pick.app], options.pick.model] as const,
    );
}

/** An app served on loopback and the headless Chromium that drives it (close both after). */
export interface ServedApp {
  readonly app: AppName;
  readonly server: ViteDevServer;
  readonly origin: string;
  readonly browser: Browser;
}

/** The offline model built, `app` served by its own Vite config, and Chromium launched. */
export async function serveApp(app: AppName): Promise<ServedApp> {
  await ensureOfflineModel();
  const { server, origin } = await startAppServer(app);
  const browser = await launchChromium();
  return { app, server, origin, browser };
}

/** How {@link openPage} and {@link preparePage} set a page of the app up. */
export interface PageOptions {
  /** @default { width: 1360, height: 900 } */
  readonly viewport?: { width: number; height: number };
  /** Receives every URL blocked (the network is closed but for the app's origin and `allow`). */
  readonly offsite?: string[];
  /** Receives every URL the page asks for, allowed or not. */
  readonly requested?: string[];
  /** Origins the page may reach besides the app's; a function is asked at each request, for a server started later. */
  readonly allow?: readonly string[] | (() => readonly (string | undefined)[]);
  /** Receives the page's uncaught errors and console errors. */
  readonly errors?: string[];
  /** Console errors this test expects (a refused connection, a failed load), left out of `errors`. */
  readonly ignoreError?: (text: string) => boolean;
  /** Saves this embedding model as the user's pick before any page script runs. */
  readonly pick?: string;
  /** Logs each Content-Security-Policy violation as a console error. */
  readonly reportCsp?: boolean;
  /** Lets the page download files (an export). */
  readonly acceptDownloads?: boolean;
  /** Accepts every dialog the page opens (a confirm before a deletion). */
  readonly acceptDialogs?: boolean;
  /** Runs on the context before its page opens (the desktop's main process and preload bridge). */
  readonly setUp?: (context: BrowserContext) => Promise<void>;
}

/**
 * Sets `context` up for a page of the app at `origin` (the network closed but for it and `options.allow`, the
 * model picked, `setUp` run) and opens its page (a persistent context's first), collecting its errors.
 */
export async function preparePage(
  context: BrowserContext,
  { app, origin }: { readonly app: AppName; readonly origin: string },
  options: PageOptions,
): Promise<Page> {
  const { allow = [] } = options;
  await prepareContext(context, {
    allow: typeof allow === 'function' ? () => [origin, ...allow()] : [origin, ...allow],
    ...(options.offsite === undefined ? {} : { offsite: options.offsite }),
    ...(options.requested === undefined ? {} : { requested: options.requested }),
    ...(options.reportCsp === undefined ? {} : { reportCsp: options.reportCsp }),
    ...(options.pick === undefined ? {} : { pick: { app, model: options.pick } }),
  });
  await options.setUp?.(context);
  const page = context.pages()[0] ?? (await context.newPage());
  if (options.errors !== undefined) collectErrors(page, options.errors, options.ignoreError);
  if (options.acceptDialogs === true) page.on('dialog', (d) => void d.accept());
  return page;
}

/** A page of the served app in a fresh browser context (its own IndexedDB): see {@link preparePage}. */
export async function openPage(
  served: ServedApp,
  options: PageOptions,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await served.browser.newContext({
    viewport: options.viewport ?? { width: 1360, height: 900 },
    ...(options.acceptDownloads === true ? { acceptDownloads: true } : {}),
  });
  return { context, page: await preparePage(context, served, options) };
}

/** An app served and opened in one page of headless Chromium (close the browser and the server after). */
export interface OpenedApp extends ServedApp {
  readonly page: Page;
}

/** What most e2e tests' beforeAll does: {@link serveApp}, then one page of it ({@link openPage}). */
export async function openApp(app: AppName, options: PageOptions): Promise<OpenedApp> {
  const served = await serveApp(app);
  const { page } = await openPage(served, options);
  return { ...served, page };
}

/** Collects the page's uncaught errors and console errors (but those `ignore` passes) into `errors`. */
export function collectErrors(page: Page, errors: string[], ignore?: (text: string) => boolean): void {
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && ignore?.(m.text()) !== true) errors.push(m.text());
  });
}

/** Waits until the app's page has opened its store (`body[data-state="ready"]`). */
export async function appReady(page: Page): Promise<void> {
  await page.waitForSelector('body[data-state="ready"]', { timeout: MODEL_WAIT });
}

/** Saves a screenshot of the page at `path` (a .png), its folder made when missing. */
export async function screenshot(page: Page, path: string, fullPage = false): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await page.screenshot({ path, fullPage });
}

/** The chat's replies shown (ui/chat-panel.ts, the same in both apps). */
export function turnCount(page: Page): Promise<number> {
  return page.locator('[data-testid="turn"]').count();
}

/** Types a message into the chat and sends it. */
export async function typeTurn(page: Page, text: string): Promise<void> {
  await page.fill('[data-testid="chat-input"]', text);
  await page.press('[data-testid="chat-input"]', 'Enter');
}

/** Waits until the chat shows `n` replies and its composer is free again. */
export async function turnsAre(page: Page, n: number): Promise<void> {
  await page.waitForFunction(
    (count) =>
      document.querySelectorAll('[data-testid="turn"]').length === count &&
      document.querySelector('.chat-panel')?.getAttribute('data-busy') === 'false',
    n,
    { timeout: STEP_WAIT },
  );
}

/** Sends a message and waits for its reply. */
export async function sendTurn(page: Page, text: string): Promise<void> {
  const before = await turnCount(page);
  await typeTurn(page, text);
  await turnsAre(page, before + 1);
}

/** A section of the last reply's report: what was recalled, what the turn stored, its timings. */
export function lastTurnReport(page: Page, part: 'recalled' | 'stored' | 'timings'): Promise<string> {
  return page.locator('[data-testid="turn"]').last().locator(`[data-testid="${part}"]`).innerText();
}

/** Opens a view of the desktop app from its navigation and waits until it is the one shown. */
export async function showView(page: Page, name: string): Promise<void> {
  await page.click(`[data-testid="nav-${name}"]`);
  await page.waitForFunction((n) => document.body.dataset['current'] === n, name, { timeout: STEP_WAIT });
}

/** Every row of every object store of the page's IndexedDB database `name`, as one text (what a reader of the disk gets). */
export async function rawDatabase(p: Page, name: string): Promise<string> {
  return p.evaluate(async (dbName) => {
    const db = await new Promise<IDBDatabase>((res, rej) => {
      const r = indexedDB.open(dbName);
      r.onsuccess = () => {
        res(r.result);
      };
      r.onerror = () => {
        rej(r.error ?? new Error('open failed'));
      };
    });
    const out: string[] = [];
    for (const store of [...db.objectStoreNames]) {
      const rows = await new Promise<unknown[]>((res, rej) => {
        const r = db.transaction(store).objectStore(store).getAll();
        r.onsuccess = () => {
          res(r.result as unknown[]);
        };
        r.onerror = () => {
          rej(r.error ?? new Error('read failed'));
        };
      });
      out.push(`${store}:${JSON.stringify(rows)}`);
    }
    db.close();
    return out.join('\n');
  }, name);
}

/**
 * The texts the desktop's memories view lists, once it has loaded them: its total is set after the
 * store answers and its rows arrive a moment later (the list loads its page on its own), so this
 * waits until the view shows as many rows as its total says (the tests' stores fit on one screen).
 */
export async function listedMemoryTexts(p: Page, timeout: number): Promise<string[]> {
  await p.waitForFunction(
    () => {
      const total = document.querySelector('[data-testid="memory-total"]')?.textContent ?? '';
      const rows = document.querySelectorAll('[data-testid="memory-list"] .text').length;
      return /^\d+$/.test(total) && rows === Number(total);
    },
    undefined,
    { timeout },
  );
  return p.locator('[data-testid="memory-list"] .text').allInnerTexts();
}
