/**
 * The `app://engram/` scheme the renderer is served from: the built renderer
 * folder inside the package, with the Content-Security-Policy on every response.
 * A standard, secure scheme, so module workers, fetch of the model files and
 * IndexedDB behave as on an https origin. Only regular files whose real path
 * (symbolic links resolved) lies inside the folder are served: no file outside
 * it, and no folder (Chromium's file loader would answer a listing).
 */
import { realpath, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CONTENT_SECURITY_POLICY } from './content-security-policy.js';
import type { ElectronSurface } from './electron-surface.js';

/** The scheme and host of the app's pages. */
export const APP_SCHEME = 'app';
export const APP_HOST = 'engram';
/** The URL the window loads. */
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_ENTRY = `${APP_ORIGIN}/index.html`;

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8',
};

/** Registers the scheme's privileges; must run before the app is ready. */
export function registerAppScheme(electron: Pick<ElectronSurface, 'protocol'>): void {
  electron.protocol.registerSchemesAsPrivileged([
    {
      scheme: APP_SCHEME,
      privileges: { standard: true, secure: true, supportFetchAPI: true, corsEnabled: false, stream: true },
    },
  ]);
}

/**
 * The file under `root` that an `app://engram/...` URL names, or undefined for
 * another host, a path that climbs out of `root`, or a malformed URL.
 */
export function fileForUrl(root: string, url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== `${APP_SCHEME}:` || parsed.host !== APP_HOST) return undefined;
  let path: string;
  try {
    path = decodeURIComponent(parsed.pathname);
  } catch {
    return undefined;
  }
  if (path.includes('\0')) return undefined;
  const base = resolve(root);
  const file = resolve(base, `.${path === '/' ? '/index.html' : path}`);
  return file.startsWith(base + sep) ? file : undefined;
}

/**
 * The real path of `file` when it is a regular file inside `root`'s real path,
 * after every symbolic link on the way is resolved; undefined for a link that
 * leads out of `root`, a folder, a device or a missing file. `fileForUrl()`
 * only checks the path's text, which a link inside the folder defeats.
 */
export async function servableFile(root: string, file: string): Promise<string | undefined> {
  try {
    const [realRoot, real] = await Promise.all([realpath(root), realpath(file)]);
    if (!real.startsWith(realRoot + sep)) return undefined;
    return (await stat(real)).isFile() ? real : undefined;
  } catch {
    return undefined;
  }
}

/** Serves `root` under `app://engram/` (call once the app is ready). */
export function serveApp(electron: Pick<ElectronSurface, 'protocol' | 'net'>, root: string): void {
  electron.protocol.handle(APP_SCHEME, async (request) => {
    const named = fileForUrl(root, request.url);
    if (named === undefined || request.method !== 'GET') return new Response('Not found', { status: 404 });
    const file = await servableFile(root, named);
    if (file === undefined) return new Response('Not found', { status: 404 });
    let response: Response;
    try {
      response = await electron.net.fetch(pathToFileURL(file).href);
    } catch {
      return new Response('Not found', { status: 404 });
    }
    const headers = new Headers({
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
    });
    return new Response(response.body, { status: response.status, headers });
  });
}
