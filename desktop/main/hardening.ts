/**
 * Electron's security checklist, applied to every web contents and the default
 * session: `window.open` denied, navigation and redirects away from the app
 * refused, webviews refused, every permission request and check refused, and
 * every request that is not for the app's own files cancelled (no remote content),
 * except requests to the one sync server the user configured.
 */
import { APP_ORIGIN } from './app-protocol.js';
import type { ContentsSurface, SessionSurface } from './electron-surface.js';

/** URLs the renderer may load: the app's own files (and DevTools' internal pages). */
export function isAppUrl(url: string): boolean {
  return url === APP_ORIGIN || url.startsWith(`${APP_ORIGIN}/`) || url.startsWith('devtools://');
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
export function hardenSession(session: SessionSurface, allowedOrigin: () => string | undefined = () => undefined): void {
  session.setPermissionRequestHandler((_contents, _permission, callback) => {
    callback(false);
  });
  session.setPermissionCheckHandler(() => false);
  session.webRequest.onBeforeRequest((details, callback) => {
    const sync = allowedOrigin();
    const toSync = sync !== undefined && (details.url === sync || details.url.startsWith(`${sync}/`));
    callback(isAppUrl(details.url) || toSync || details.url.startsWith('data:') || details.url.startsWith('blob:') ? {} : { cancel: true });
  });
}
