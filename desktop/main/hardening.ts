/**
 * Electron's security checklist, applied to every web contents and the default
 * session: `window.open` denied, navigation and redirects away from the app
 * refused, webviews refused, every permission request and check refused, and
 * every request that is not for the app's own files cancelled (no remote content),
 * except requests to the one sync server the user configured.
 */
import { APP_ORIGIN } from './app-protocol.js';
import type { ContentsSurface, SessionSurface } from './electron-surface.js';

/**
 * URLs of the app's own page and files. The only place a window may navigate
 * to, and the only page whose IPC calls are answered (DevTools' `devtools://`
 * pages are neither).
 */
export function isAppUrl(url: string): boolean {
  return url === APP_ORIGIN || url.startsWith(`${APP_ORIGIN}/`);
}

/**
 * Requests that stay on this machine without reaching any file or server of
 * their own: the app's files, the page's `data:` and `blob:` URLs, and the
 * resources of DevTools (`devtools://`, its own bundled frontend, loaded only
 * when the user opens it). Requests only: nothing may navigate to them.
 */
function isLocalRequest(url: string): boolean {
  return isAppUrl(url) || url.startsWith('data:') || url.startsWith('blob:') || url.startsWith('devtools://');
}

/** Locks one web contents to the app. */
export function hardenContents(contents: ContentsSurface): void {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  const refuseForeign = (event: { preventDefault(): void }, url: string): void => {
    if (!isAppUrl(url)) event.preventDefault();
  };
  contents.on('will-navigate', refuseForeign);
  contents.on('will-redirect', refuseForeign);
  contents.on('will-attach-webview', (event) => {
    event.preventDefault();
  });
}

/** The origin of a sync server URL: https anywhere, http only on loopback; undefined for anything else. */
export function syncOrigin(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.username !== '' || parsed.password !== '') return undefined;
  if (parsed.protocol === 'https:') return parsed.origin;
  const loopback = parsed.hostname === '127.0.0.1' || parsed.hostname === 'localhost';
  return parsed.protocol === 'http:' && loopback ? parsed.origin : undefined;
}

/**
 * Refuses every permission and every request that leaves the app, except to the
 * origin `allowedOrigin()` names (the sync server), read at each request.
 */
export function hardenSession(
  session: SessionSurface,
  allowedOrigin: () => string | undefined = () => undefined,
): void {
  session.setPermissionRequestHandler((_contents, _permission, callback) => {
    callback(false);
  });
  session.setPermissionCheckHandler(() => false);
  session.webRequest.onBeforeRequest((details, callback) => {
    const sync = allowedOrigin();
    const toSync = sync !== undefined && (details.url === sync || details.url.startsWith(`${sync}/`));
    callback(isLocalRequest(details.url) || toSync ? {} : { cancel: true });
  });
}
